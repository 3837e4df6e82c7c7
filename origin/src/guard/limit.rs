//! The limiter as the guard asks it: in this instance's memory ([`Limiter`]), or — with
//! several instances on one PostgreSQL database — in that database ([`SharedBudget`]), so
//! that `LIMITER_RATE` is the PG's budget for all of them together (`docs/design/guard.md`).
//!
//! The shared window keeps the in-memory window's rule on the database's clock: a slot
//! counts from when it is taken until a window after its call is over. A slot whose
//! instance died counts until its lease ends — the call's timeout, a window, and
//! [`TAKE_MARGIN`] after it was taken — and a take that came back later than
//! [`TAKE_MARGIN`] is not used, so a slot always counts while its call can be in flight.
//! It costs two small statements per call (take, and finish once the call is over, the
//! latter off the call's path).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rules::sliding_window::Rate;
use tokio::time::Instant;

use super::{lock, Refusal};
use crate::policy::limiter::{Limiter, LimiterConfig};
use crate::store::{SharedBudget, Slot, StoreError};

/// How late the database may answer a take of a shared slot for it to be used.
const TAKE_MARGIN: Duration = Duration::from_secs(1);

pub(super) enum CallLimiter {
    Local(Mutex<Limiter>),
    Shared {
        config: LimiterConfig,
        budget: Arc<dyn SharedBudget>,
        /// How long a slot counts if its call's end is never heard of.
        lease_ms: i64,
        /// Names this instance's takes apart from every other's: a random start, counted up.
        holders: AtomicI64,
    },
}

/// What the limiter granted one call. Dropped, it tells the limiter the call is over.
pub(super) enum Unit<'a> {
    /// A bucket's token: the bucket forgets a call once it is taken.
    Token,
    Local {
        limiter: &'a Mutex<Limiter>,
        epoch: Instant,
    },
    Shared {
        budget: Arc<dyn SharedBudget>,
        guard: &'static str,
        slot: Slot,
        window_ms: i64,
    },
}

impl CallLimiter {
    /// The limiter on this instance's own count.
    pub(super) fn local(config: LimiterConfig) -> Self {
        Self::Local(Mutex::new(Limiter::new(config)))
    }

    /// The limiter on `budget`, with `guard`'s rows made ready for `config`; a call
    /// lasts `timeout` at most.
    pub(super) async fn shared(
        guard: &str,
        config: LimiterConfig,
        timeout: Duration,
        budget: Arc<dyn SharedBudget>,
    ) -> anyhow::Result<Self> {
        let first_holder =
            getrandom::u64().map_err(|err| anyhow::anyhow!("no randomness: {err}"))?;
        let lease_ms = match config {
            LimiterConfig::Off => 0,
            LimiterConfig::TokenBucket(rate) => {
                budget.prepare_bucket(guard, rate).await?;
                0
            }
            LimiterConfig::SlidingWindow(rate) => {
                budget.prepare_slots(guard, rate).await?;
                (timeout + TAKE_MARGIN).as_millis() as i64 + rate.window_ms
            }
        };
        Ok(Self::Shared {
            config,
            budget,
            lease_ms,
            holders: AtomicI64::new(first_holder as i64),
        })
    }

    pub(super) fn is_shared(&self) -> bool {
        matches!(self, Self::Shared { .. })
    }

    /// A unit for a call of `guard`'s to be sent now, or [`Refusal::RateLimited`]. A shared
    /// budget the database cannot answer for refuses: the PG's limit is never risked.
    pub(super) async fn take(
        &self,
        guard: &'static str,
        epoch: Instant,
    ) -> Result<Unit<'_>, Refusal> {
        match self {
            Self::Local(limiter) => {
                let mut window = lock(limiter);
                if !window.try_take(epoch.elapsed().as_millis() as i64) {
                    return Err(Refusal::RateLimited);
                }
                Ok(if window.counts_until_finished() {
                    Unit::Local { limiter, epoch }
                } else {
                    Unit::Token
                })
            }
            Self::Shared {
                config,
                budget,
                lease_ms,
                holders,
            } => {
                let taken = match config {
                    LimiterConfig::Off => Ok(Some(Unit::Token)),
                    LimiterConfig::TokenBucket(_) => budget
                        .take_token(guard)
                        .await
                        .map(|taken| taken.then_some(Unit::Token)),
                    LimiterConfig::SlidingWindow(rate) => {
                        let holder = holders.fetch_add(1, Ordering::Relaxed);
                        take_slot(guard, budget, *rate, *lease_ms, holder).await
                    }
                };
                match taken {
                    Ok(Some(unit)) => Ok(unit),
                    Ok(None) => Err(Refusal::RateLimited),
                    Err(err) => {
                        tracing::warn!(guard, error = %err, "the shared PG budget did not answer: call refused");
                        Err(Refusal::RateLimited)
                    }
                }
            }
        }
    }
}

async fn take_slot(
    guard: &'static str,
    budget: &Arc<dyn SharedBudget>,
    rate: Rate,
    lease_ms: i64,
    holder: i64,
) -> Result<Option<Unit<'static>>, StoreError> {
    let asked = Instant::now();
    let Some(slot) = budget.take_slot(guard, rate, lease_ms, holder).await? else {
        return Ok(None);
    };
    if asked.elapsed() > TAKE_MARGIN {
        // Its lease may end before this call could: it counts until then, unused.
        tracing::warn!(
            guard,
            "the shared PG budget answered too late: call refused"
        );
        return Ok(None);
    }
    Ok(Some(Unit::Shared {
        budget: budget.clone(),
        guard,
        slot,
        window_ms: rate.window_ms,
    }))
}

impl Drop for Unit<'_> {
    fn drop(&mut self) {
        match self {
            Self::Token => {}
            Self::Local { limiter, epoch } => {
                lock(limiter).finished(epoch.elapsed().as_millis() as i64);
            }
            Self::Shared {
                budget,
                guard,
                slot,
                window_ms,
            } => {
                let (budget, guard, slot, window_ms) = (budget.clone(), *guard, *slot, *window_ms);
                let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                    return;
                };
                // Off the call's path; if it is lost, the slot counts until its lease ends.
                runtime.spawn(async move {
                    if let Err(err) = budget.finish_slot(guard, slot, window_ms).await {
                        tracing::warn!(guard, error = %err, "could not end a shared PG budget slot");
                    }
                });
            }
        }
    }
}

#[cfg(test)]
mod tests;
