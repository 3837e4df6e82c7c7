-- What the recovery job knows of a payment it has not settled: how often it asked,
-- the NOT_FOUND answers it counted, when it may ask next, who holds it now (a lease,
-- so instances sharing the database never ask about one payment at once), and why an
-- operator should look. Times are epoch milliseconds; 0 means "not yet".
ALTER TABLE payments ADD COLUMN recovery_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE payments ADD COLUMN not_found_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE payments ADD COLUMN last_not_found_at BIGINT;
ALTER TABLE payments ADD COLUMN next_recovery_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE payments ADD COLUMN recovery_lease_until BIGINT NOT NULL DEFAULT 0;
ALTER TABLE payments ADD COLUMN flag_reason TEXT;

CREATE INDEX payments_to_recover ON payments (next_recovery_at, id)
    WHERE status IN ('PENDING', 'UNKNOWN');
