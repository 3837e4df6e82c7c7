-- Whole numbers are BIGINT throughout, as SQLite's INTEGER is: the two stores read and
-- bind the same Rust types (i64), so one statement and one row decoder serve both.
-- One statement for `payments`, so the table is rewritten once. Code from before this
-- migration reads these columns as INTEGER: stop every instance running it first.
ALTER TABLE idempotency_keys ALTER COLUMN response_status TYPE BIGINT;
ALTER TABLE payments
    ALTER COLUMN recovery_attempts TYPE BIGINT,
    ALTER COLUMN not_found_count TYPE BIGINT,
    ALTER COLUMN refund_due TYPE BIGINT;
