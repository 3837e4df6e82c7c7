-- A payment moves PENDING → APPROVED | FAILED | UNKNOWN; UNKNOWN and stale PENDING
-- are converged later by asking the gateway. Times are epoch milliseconds.
CREATE TABLE payments (
    id             BIGSERIAL PRIMARY KEY,
    order_id       TEXT      NOT NULL UNIQUE,
    user_id        TEXT      NOT NULL,
    payment_key    TEXT      NOT NULL,
    amount         BIGINT    NOT NULL CHECK (amount > 0),
    event_id       TEXT,
    status         TEXT      NOT NULL CHECK (status IN ('PENDING', 'APPROVED', 'FAILED', 'UNKNOWN')),
    failure_reason TEXT,
    approved_at    BIGINT,
    created_at     BIGINT    NOT NULL,
    updated_at     BIGINT    NOT NULL
);

CREATE INDEX payments_by_user ON payments (user_id, id DESC);
CREATE INDEX payments_by_status ON payments (status, updated_at);
