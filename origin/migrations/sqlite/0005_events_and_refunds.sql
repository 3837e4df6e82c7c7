-- Limited-stock events: a confirm for an event reserves a unit when it inserts its
-- payment. Reserved (PENDING, UNKNOWN) and sold (APPROVED) are counted from the
-- payments themselves, so a payment that becomes FAILED gives its unit back in the very
-- statement that fails it.
CREATE TABLE events (
    event_id   TEXT    PRIMARY KEY,
    stock      INTEGER NOT NULL CHECK (stock >= 0),
    amount     INTEGER NOT NULL CHECK (amount > 0),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

-- REFUNDED: the PG approved a payment after we had recorded it FAILED, and we
-- cancelled the charge. refund_due marks a FAILED payment whose late approval still
-- has to be cancelled. SQLite cannot change a CHECK constraint, so the table is rebuilt.
CREATE TABLE payments_new (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id             TEXT    NOT NULL UNIQUE,
    user_id              TEXT    NOT NULL,
    payment_key          TEXT    NOT NULL,
    amount               INTEGER NOT NULL CHECK (amount > 0),
    event_id             TEXT,
    status               TEXT    NOT NULL
        CHECK (status IN ('PENDING', 'APPROVED', 'FAILED', 'UNKNOWN', 'REFUNDED')),
    failure_reason       TEXT,
    approved_at          INTEGER,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL,
    recovery_attempts    INTEGER NOT NULL DEFAULT 0,
    not_found_count      INTEGER NOT NULL DEFAULT 0,
    last_not_found_at    INTEGER,
    next_recovery_at     INTEGER NOT NULL DEFAULT 0,
    recovery_lease_until INTEGER NOT NULL DEFAULT 0,
    flag_reason          TEXT,
    refund_due           INTEGER NOT NULL DEFAULT 0
);

INSERT INTO payments_new (id, order_id, user_id, payment_key, amount, event_id, status,
    failure_reason, approved_at, created_at, updated_at, recovery_attempts,
    not_found_count, last_not_found_at, next_recovery_at, recovery_lease_until, flag_reason)
SELECT id, order_id, user_id, payment_key, amount, event_id, status, failure_reason,
    approved_at, created_at, updated_at, recovery_attempts, not_found_count,
    last_not_found_at, next_recovery_at, recovery_lease_until, flag_reason
FROM payments;

DROP TABLE payments;
ALTER TABLE payments_new RENAME TO payments;

CREATE INDEX payments_by_user ON payments (user_id, id DESC);
CREATE INDEX payments_by_status ON payments (status, updated_at);
CREATE INDEX payments_by_event ON payments (event_id, status) WHERE event_id IS NOT NULL;
CREATE INDEX payments_to_recover ON payments (next_recovery_at, id)
    WHERE status IN ('PENDING', 'UNKNOWN') OR refund_due = 1;
