-- What the PG knows a payment by, besides its order id: the Idempotency-Key of its
-- confirm, stored with the payment before the call (its cancel's key is derived from
-- it), and the PG's own id for it once an answer named one (Stripe's `pi_…`). Payments
-- made before this release have no key stored: theirs is derived from the order id.
ALTER TABLE payments ADD COLUMN pg_confirm_key TEXT;
ALTER TABLE payments ADD COLUMN pg_reference TEXT;
