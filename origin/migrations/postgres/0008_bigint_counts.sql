-- Whole numbers are BIGINT throughout, as SQLite's INTEGER is: the two stores read and
-- bind the same Rust types (i64), so one statement and one row decoder can serve both.
ALTER TABLE idempotency_keys ALTER COLUMN response_status TYPE BIGINT;
ALTER TABLE payments ALTER COLUMN recovery_attempts TYPE BIGINT;
ALTER TABLE payments ALTER COLUMN not_found_count TYPE BIGINT;
ALTER TABLE payments ALTER COLUMN refund_due TYPE BIGINT;
