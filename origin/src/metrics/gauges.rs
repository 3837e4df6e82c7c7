//! Gauges handed out for their holders to set: no family lookup on a call's path.

use super::IntGauge;

/// A guard's concurrency limit and the calls waiting under it, set without a lookup.
pub struct ConcurrencyGauges {
    pub(super) limit: IntGauge,
    pub(super) waiting: IntGauge,
}

impl ConcurrencyGauges {
    pub fn set(&self, limit: u32, waiting: u32) {
        self.limit.set(limit.into());
        self.waiting.set(waiting.into());
    }
}

/// Counts one gateway call in flight for as long as it lives.
pub struct InFlight(pub(super) IntGauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}
