-- Settlement reconciliation: our APPROVED payments of a period are read by approval
-- time, and every finding an operator must look at waits in the exception queue.
CREATE INDEX payments_by_approval ON payments (approved_at) WHERE status = 'APPROVED';

-- One row per distinct finding: the fingerprint (category, order id, both amounts) is
-- unique, so uploading the same file again adds nothing, and a finding an operator
-- resolved does not come back. PENDING items are the queue.
CREATE TABLE reconciliation_items (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint     TEXT    NOT NULL UNIQUE,
    order_id        TEXT    NOT NULL,
    category        TEXT    NOT NULL
        CHECK (category IN ('INTERNAL_ONLY', 'EXTERNAL_ONLY', 'AMOUNT_MISMATCH')),
    internal_amount INTEGER,
    external_amount INTEGER,
    line            INTEGER,
    period_first    TEXT    NOT NULL,
    period_last     TEXT    NOT NULL,
    status          TEXT    NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'RESOLVED')),
    note            TEXT,
    created_at      INTEGER NOT NULL,
    resolved_at     INTEGER
);

CREATE INDEX reconciliation_items_by_status ON reconciliation_items (status, id);
CREATE INDEX reconciliation_items_pending ON reconciliation_items (order_id)
    WHERE status = 'PENDING';
