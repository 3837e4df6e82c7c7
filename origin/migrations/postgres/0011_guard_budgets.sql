-- The PG's call budget (LIMITER_RATE), kept here so every origin instance on this database
-- shares one (docs/design/guard.md). Times are the database's clock, epoch ms, so the
-- instances' own clocks never disagree about a window.

-- The sliding window: one row per unit of the limit. A slot counts against the limit until
-- `counts_until`: while its call is in flight (at most the timeout) and a window after.
-- Only its `holder` may shorten it when the call is over.
CREATE TABLE guard_budget_slots (
    guard        TEXT    NOT NULL,
    slot         INTEGER NOT NULL,
    counts_until BIGINT  NOT NULL,
    holder       BIGINT  NOT NULL,
    PRIMARY KEY (guard, slot)
);

-- The token bucket: its tokens in units of 1/window_ms token, as the in-memory bucket keeps
-- them.
CREATE TABLE guard_budget_buckets (
    guard       TEXT   PRIMARY KEY,
    call_limit  BIGINT NOT NULL,
    window_ms   BIGINT NOT NULL,
    units       BIGINT NOT NULL,
    refilled_at BIGINT NOT NULL
);
