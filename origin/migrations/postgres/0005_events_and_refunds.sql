-- Limited-stock events: a confirm for an event reserves a unit when it inserts its
-- payment. Reserved (PENDING, UNKNOWN) and sold (APPROVED) are counted from the
-- payments themselves, so a payment that becomes FAILED gives its unit back in the very
-- statement that fails it. A reservation locks the event's row, so instances sharing
-- the database reserve one at a time per event.
CREATE TABLE events (
    event_id   TEXT   PRIMARY KEY,
    stock      BIGINT NOT NULL CHECK (stock >= 0),
    amount     BIGINT NOT NULL CHECK (amount > 0),
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- REFUNDED: the PG approved a payment after we had recorded it FAILED, and we
-- cancelled the charge. refund_due marks a FAILED payment whose late approval still
-- has to be cancelled.
ALTER TABLE payments DROP CONSTRAINT payments_status_check;
ALTER TABLE payments ADD CONSTRAINT payments_status_check
    CHECK (status IN ('PENDING', 'APPROVED', 'FAILED', 'UNKNOWN', 'REFUNDED'));
ALTER TABLE payments ADD COLUMN refund_due INTEGER NOT NULL DEFAULT 0;

CREATE INDEX payments_by_event ON payments (event_id, status) WHERE event_id IS NOT NULL;
DROP INDEX payments_to_recover;
CREATE INDEX payments_to_recover ON payments (next_recovery_at, id)
    WHERE status IN ('PENDING', 'UNKNOWN') OR refund_due = 1;
