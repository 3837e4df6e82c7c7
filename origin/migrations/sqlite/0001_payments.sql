-- A payment moves PENDING → APPROVED | FAILED | UNKNOWN; UNKNOWN and stale PENDING
-- are converged later by asking the gateway. Times are epoch milliseconds.
CREATE TABLE payments (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id       TEXT    NOT NULL UNIQUE,
    user_id        TEXT    NOT NULL,
    payment_key    TEXT    NOT NULL,
    amount         INTEGER NOT NULL CHECK (amount > 0),
    event_id       TEXT,
    status         TEXT    NOT NULL CHECK (status IN ('PENDING', 'APPROVED', 'FAILED', 'UNKNOWN')),
    failure_reason TEXT,
    approved_at    INTEGER,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);

CREATE INDEX payments_by_user ON payments (user_id, id DESC);
CREATE INDEX payments_by_status ON payments (status, updated_at);
