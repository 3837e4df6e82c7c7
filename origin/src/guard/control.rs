//! The operator's setting of a guard's breaker, followed from the database every instance
//! shares: each instance reads it every [`FOLLOW_EVERY`] (and once before it serves,
//! `server.rs`), so a setting made on one is in force on all within a second and a
//! restart keeps it. One small read a half-second per instance is its cost. And how long,
//! under that setting, the breaker is expected to go on refusing ([`GatewayGuard::refusing_for_ms`]).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::{lock, GatewayGuard, Refusal};
use crate::policy::breaker::BreakerMode;
use crate::store::{BreakerControl, Store, StoreError};

/// How long a breaker forced open is expected to refuse when it has no settings of its own.
const FORCED_OPEN_PAUSE_MS: u64 = 10_000;

/// How often an instance reads the setting.
pub const FOLLOW_EVERY: Duration = Duration::from_millis(500);

/// Applies the stored setting of `guard`'s breaker (stored under `name`) now and every
/// [`FOLLOW_EVERY`] after, for as long as the origin runs; a failed read is retried at the
/// next tick.
pub async fn follow(guard: Arc<GatewayGuard>, name: &'static str, store: Arc<dyn Store>) {
    follow_reads(guard, || store.breaker_control(name)).await
}

/// [`follow`], the setting read by `read`.
async fn follow_reads<F, Fut>(guard: Arc<GatewayGuard>, read: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<Option<BreakerControl>, StoreError>>,
{
    let mut every = tokio::time::interval(FOLLOW_EVERY);
    // A slow read is not made up for with a burst of reads.
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        match read().await {
            Ok(Some(control)) => guard.apply_control(control),
            Ok(None) => {}
            Err(err) => tracing::warn!(error = %err, "could not read the breaker's setting"),
        }
    }
}

impl GatewayGuard {
    /// Applies an operator's setting of the breaker (from this instance's route or from
    /// the database every instance follows); a setting no newer than the one in force
    /// changes nothing.
    /// Back to `AUTO`, the breaker starts afresh, closed.
    pub fn apply_control(&self, control: BreakerControl) {
        let mut current = lock(&self.control);
        // Read before a newer setting was made here, an older one arrives late: ignored.
        if current
            .as_ref()
            .is_some_and(|current| current.version >= control.version)
        {
            return;
        }
        tracing::warn!(
            guard = self.name,
            mode = control.mode.as_str(),
            reason = %control.reason,
            by = %control.by,
            at_ms = control.at_ms,
            "an operator set the circuit breaker"
        );
        if control.mode == BreakerMode::ForcedOpen {
            self.refuse_waiting();
        }
        if control.mode == BreakerMode::Auto {
            if let Some(breaker) = &self.breaker {
                let transition = lock(breaker).reset(self.now_ms());
                self.note(transition);
            }
        }
        self.metrics.breaker_mode(self.name, control.mode);
        *current = Some(control);
    }

    /// How long from now the breaker is expected to go on refusing calls, if it refuses
    /// them now: what the origin tells the edge, so the queue holds that long. A breaker an
    /// operator forced open is asked again after an open breaker's wait.
    pub fn refusing_for_ms(&self) -> Option<u64> {
        match self.mode() {
            BreakerMode::ForcedOpen => Some(
                self.config
                    .breaker
                    .map_or(FORCED_OPEN_PAUSE_MS, |breaker| breaker.open_ms),
            ),
            BreakerMode::Disabled => None,
            BreakerMode::Auto => {
                let now_ms = self.now_ms();
                self.breaker
                    .as_ref()
                    .and_then(|breaker| lock(breaker).refusing_for(now_ms))
            }
        }
    }

    /// How long the edge should hold admissions after `refusal`: while the breaker goes
    /// on refusing, or for one longest wait when calls wait past the concurrency limit,
    /// so the line does not grow faster than the PG drains it. `None`: the refusal says
    /// nothing of the PG.
    pub fn paused_for_ms(&self, refusal: Refusal) -> Option<u64> {
        match refusal {
            Refusal::CircuitOpen => self.refusing_for_ms(),
            Refusal::ConcurrencyLimited => Some((self.config.max_wait.as_millis() as u64).max(1)),
            Refusal::BulkheadFull | Refusal::RateLimited => None,
        }
    }

    /// The operator's setting: `AUTO` when none was ever made.
    pub(super) fn mode(&self) -> BreakerMode {
        lock(&self.control)
            .as_ref()
            .map_or(BreakerMode::Auto, |control| control.mode)
    }
}

#[cfg(test)]
mod tests;
