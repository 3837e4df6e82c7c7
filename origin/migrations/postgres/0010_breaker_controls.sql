-- An operator's setting of a guard's breaker (AUTO, FORCED_OPEN, DISABLED), with who set
-- it, why and when: every instance on this database follows it. `version` grows with every
-- setting, so an instance never takes an older one for a newer.
CREATE TABLE breaker_controls (
    guard  TEXT   PRIMARY KEY,
    mode   TEXT   NOT NULL,
    reason TEXT   NOT NULL,
    set_by TEXT   NOT NULL,
    set_at BIGINT NOT NULL,
    version BIGINT NOT NULL
);
