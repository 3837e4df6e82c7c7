-- The transactional outbox: every change of a payment's state, and every reconciliation
-- finding, writes its event in the same transaction as the change — by trigger, so no
-- statement that changes a payment can leave its event out, and no event is written
-- without its change. `position` is its place in the one published order, set once the
-- event is committed, in commit order, by one instance at a time (`store/outbox.rs`):
-- ids from a sequence are taken in one order and committed in another, so they alone
-- would let a reader paging by id skip an event committed late. The merchant's webhooks
-- are delivered from here, in order per order, and `GET /admin/payment-events` pages
-- through it. Payments changed before this migration have no events.
CREATE TABLE payment_events (
    id              BIGSERIAL PRIMARY KEY,
    position        BIGINT UNIQUE,
    order_key       TEXT    NOT NULL,
    type            TEXT    NOT NULL,
    payment_id      BIGINT,
    status          TEXT,
    amount          BIGINT,
    event_id        TEXT,
    failure_reason  TEXT,
    flag            TEXT,
    finding         TEXT,
    external_amount BIGINT,
    occurred_at     BIGINT  NOT NULL,
    delivery        TEXT    NOT NULL DEFAULT 'PENDING'
        CHECK (delivery IN ('PENDING', 'DELIVERED', 'DEAD')),
    attempts        BIGINT  NOT NULL DEFAULT 0,
    next_attempt_at BIGINT  NOT NULL DEFAULT 0,
    lease_until     BIGINT  NOT NULL DEFAULT 0,
    lease_holder    TEXT,
    last_status     BIGINT,
    last_error      TEXT,
    last_attempt_at BIGINT,
    delivered_at    BIGINT
);

CREATE INDEX payment_events_unpositioned ON payment_events (id) WHERE position IS NULL;
CREATE INDEX payment_events_by_order ON payment_events (order_key, position);
CREATE INDEX payment_events_due ON payment_events (delivery, next_attempt_at)
    WHERE delivery = 'PENDING';
CREATE INDEX payment_events_failed ON payment_events (last_attempt_at)
    WHERE last_error IS NOT NULL;

CREATE FUNCTION payment_event() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO payment_events (order_key, type, payment_id, status, amount, event_id,
            occurred_at)
        VALUES (NEW.order_id, 'payment.created', NEW.id, NEW.status, NEW.amount,
            NEW.event_id, NEW.created_at);
        RETURN NEW;
    END IF;
    IF NEW.status IS DISTINCT FROM OLD.status THEN
        INSERT INTO payment_events (order_key, type, payment_id, status, amount, event_id,
            failure_reason, flag, occurred_at)
        VALUES (NEW.order_id, 'payment.' || lower(NEW.status), NEW.id, NEW.status,
            NEW.amount, NEW.event_id, NEW.failure_reason, NEW.flag_reason, NEW.updated_at);
    END IF;
    IF NEW.flag_reason IS NOT NULL AND NEW.flag_reason IS DISTINCT FROM OLD.flag_reason THEN
        INSERT INTO payment_events (order_key, type, payment_id, status, amount, event_id,
            failure_reason, flag, occurred_at)
        VALUES (NEW.order_id, 'payment.flagged', NEW.id, NEW.status, NEW.amount,
            NEW.event_id, NEW.failure_reason, NEW.flag_reason, NEW.updated_at);
    END IF;
    RETURN NEW;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER payment_events AFTER INSERT OR UPDATE OF status, flag_reason ON payments
    FOR EACH ROW EXECUTE FUNCTION payment_event();

CREATE FUNCTION reconciliation_event() RETURNS trigger AS $$
BEGIN
    INSERT INTO payment_events (order_key, type, amount, finding, external_amount,
        occurred_at)
    VALUES (NEW.order_id, 'reconciliation.finding', NEW.internal_amount, NEW.category,
        NEW.external_amount, NEW.created_at);
    RETURN NEW;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER reconciliation_events AFTER INSERT ON reconciliation_items
    FOR EACH ROW EXECUTE FUNCTION reconciliation_event();

-- The merchant's endpoint, by URL: disabled when it answered 410 Gone, until an
-- operator enables it again.
CREATE TABLE webhook_endpoints (
    url         TEXT    PRIMARY KEY,
    disabled_at BIGINT,
    reason      TEXT
);
