-- The nonces of edge-signed requests, while their signatures are fresh. A SQLite origin is
-- one instance and keeps them in memory; the table is here so both stores hold the same
-- tables and answer the same statements.
CREATE TABLE edge_nonces (
    nonce      TEXT    PRIMARY KEY,
    expires_at INTEGER NOT NULL
);
CREATE INDEX edge_nonces_by_expiry ON edge_nonces (expires_at);
