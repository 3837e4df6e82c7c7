-- The transactional outbox: every change of a payment's state, and every reconciliation
-- finding, writes its event in the same transaction as the change — by trigger, so no
-- statement that changes a payment can leave its event out, and no event is written
-- without its change. `position` is its place in the one published order (set once the
-- event is committed, in commit order: `store/outbox.rs`); the merchant's webhooks are
-- delivered from here, in order per order, and `GET /admin/payment-events` pages through
-- it. Payments changed before this migration have no events.
CREATE TABLE payment_events (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    position        INTEGER UNIQUE,
    order_key       TEXT    NOT NULL,
    type            TEXT    NOT NULL,
    payment_id      INTEGER,
    status          TEXT,
    amount          INTEGER,
    event_id        TEXT,
    failure_reason  TEXT,
    flag            TEXT,
    finding         TEXT,
    external_amount INTEGER,
    occurred_at     INTEGER NOT NULL,
    delivery        TEXT    NOT NULL DEFAULT 'PENDING'
        CHECK (delivery IN ('PENDING', 'DELIVERED', 'DEAD')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL DEFAULT 0,
    lease_until     INTEGER NOT NULL DEFAULT 0,
    lease_holder    TEXT,
    last_status     INTEGER,
    last_error      TEXT,
    last_attempt_at INTEGER,
    delivered_at    INTEGER
);

CREATE INDEX payment_events_unpositioned ON payment_events (id) WHERE position IS NULL;
CREATE INDEX payment_events_by_order ON payment_events (order_key, position);
CREATE INDEX payment_events_due ON payment_events (delivery, next_attempt_at)
    WHERE delivery = 'PENDING';
CREATE INDEX payment_events_failed ON payment_events (last_attempt_at)
    WHERE last_error IS NOT NULL;

CREATE TRIGGER payment_created AFTER INSERT ON payments
BEGIN
    INSERT INTO payment_events (order_key, type, payment_id, status, amount, event_id,
        occurred_at)
    VALUES (NEW.order_id, 'payment.created', NEW.id, NEW.status, NEW.amount, NEW.event_id,
        NEW.created_at);
END;

-- A change of status, then — flagged in the same statement — the flag, in that order
-- (as PostgreSQL's one trigger function writes them).
CREATE TRIGGER payment_status_changed AFTER UPDATE OF status ON payments
WHEN NEW.status IS NOT OLD.status
BEGIN
    INSERT INTO payment_events (order_key, type, payment_id, status, amount, event_id,
        failure_reason, flag, occurred_at)
    VALUES (NEW.order_id, 'payment.' || lower(NEW.status), NEW.id, NEW.status, NEW.amount,
        NEW.event_id, NEW.failure_reason, NEW.flag_reason, NEW.updated_at);
    INSERT INTO payment_events (order_key, type, payment_id, status, amount, event_id,
        failure_reason, flag, occurred_at)
    SELECT NEW.order_id, 'payment.flagged', NEW.id, NEW.status, NEW.amount, NEW.event_id,
        NEW.failure_reason, NEW.flag_reason, NEW.updated_at
    WHERE NEW.flag_reason IS NOT NULL AND NEW.flag_reason IS NOT OLD.flag_reason;
END;

CREATE TRIGGER payment_flagged AFTER UPDATE OF flag_reason ON payments
WHEN NEW.flag_reason IS NOT NULL AND NEW.flag_reason IS NOT OLD.flag_reason
    AND NEW.status IS OLD.status
BEGIN
    INSERT INTO payment_events (order_key, type, payment_id, status, amount, event_id,
        failure_reason, flag, occurred_at)
    VALUES (NEW.order_id, 'payment.flagged', NEW.id, NEW.status, NEW.amount, NEW.event_id,
        NEW.failure_reason, NEW.flag_reason, NEW.updated_at);
END;

CREATE TRIGGER reconciliation_finding AFTER INSERT ON reconciliation_items
BEGIN
    INSERT INTO payment_events (order_key, type, amount, finding, external_amount,
        occurred_at)
    VALUES (NEW.order_id, 'reconciliation.finding', NEW.internal_amount, NEW.category,
        NEW.external_amount, NEW.created_at);
END;

-- The merchant's endpoint, by URL: disabled when it answered 410 Gone, until an
-- operator enables it again.
CREATE TABLE webhook_endpoints (
    url         TEXT    PRIMARY KEY,
    disabled_at INTEGER,
    reason      TEXT
);
