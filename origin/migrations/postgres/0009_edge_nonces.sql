-- The nonces of edge-signed requests, while their signatures are fresh: shared by every
-- instance on this database, so a request replayed to another instance is refused too.
CREATE TABLE edge_nonces (
    nonce      TEXT   PRIMARY KEY,
    expires_at BIGINT NOT NULL
);
CREATE INDEX edge_nonces_by_expiry ON edge_nonces (expires_at);
