-- Idempotency-Key records of confirms, per user. IN_FLIGHT while the first request
-- runs (locked_until bounds how long a crashed request keeps others out); DONE with
-- the response to replay. Kept 24 h from created_at. Times are epoch milliseconds.
CREATE TABLE idempotency_keys (
    user_id         TEXT    NOT NULL,
    idempotency_key TEXT    NOT NULL,
    request_hash    TEXT    NOT NULL,
    state           TEXT    NOT NULL CHECK (state IN ('IN_FLIGHT', 'DONE')),
    response_status INTEGER,
    response_body   TEXT,
    locked_until    BIGINT  NOT NULL,
    created_at      BIGINT  NOT NULL,
    PRIMARY KEY (user_id, idempotency_key)
);

CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
