-- Who holds a payment's recovery lease: a token of one recovery's life, so a lease is
-- renewed only by the recovery that took it (a short lease renewed while its holder
-- works; after a crash it runs out in seconds).
ALTER TABLE payments ADD COLUMN recovery_lease_holder TEXT NOT NULL DEFAULT '';
