//! The PG guard (`docs/design/guard.md`): what stands between a payment and the payment gateway.
//!
//! | device | refused call becomes |
//! |---|---|
//! | timeout | UNKNOWN — sent, outcome not known |
//! | circuit breaker ([`breaker`]) | FAILED `CIRCUIT_OPEN` — not sent |
//! | concurrency limit ([`crate::policy::concurrency`], waits up to a bound) | FAILED `CONCURRENCY_LIMITED` — not sent |
//! | bulkhead (in-flight cap, no waiting) | FAILED `BULKHEAD_FULL` — not sent |
//! | limiter ([`crate::policy::limiter`], off by default) | FAILED `RATE_LIMITED` — not sent |
//!
//! Only the timeout can make a payment UNKNOWN; every refusal happens before anything
//! is sent and is a known failure. Nothing is retried. Only the concurrency limit makes
//! a call wait, briefly, for a slot; a call the breaker would refuse is refused before
//! it waits, and a breaker that opens refuses the calls waiting.
//!
//! The devices are asked in that order, and a later refusal gives back what the
//! earlier ones granted, so the limiter counts exactly the calls that were sent. The
//! `Permit` of a call in flight gives everything back when dropped, so a cancelled
//! call never keeps a slot, a bulkhead slot or a half-open probe, and the limiter hears
//! that it is over (it may have reached the PG, so it still counts for a window).

mod answer;
mod concurrency;
pub mod control;
mod limit;
mod probe;
mod view;

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

// tokio's clock, so tests can pause it; it reads the monotonic clock otherwise.
use tokio::time::Instant;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::metrics::Metrics;
use crate::policy::breaker::{
    self, Breaker, BreakerConfig, BreakerMode, BreakerPermit, BreakerState, CallResult, Transition,
};
use crate::policy::concurrency::{LimitMode, Sample};
use crate::policy::limiter::LimiterConfig;
use crate::store::{BreakerControl, SharedBudget};
pub use answer::Answer;
use concurrency::{Slot, Slots};
use limit::{CallLimiter, Unit};
pub use view::GuardView;

/// The name of the guard in front of approval calls, in metrics, `/admin/guard` and its
/// operator's setting.
pub const APPROVE_GUARD: &str = "approve";

/// The name of the recovery job's own guard.
pub const RECOVER_GUARD: &str = "recover";

/// How many transitions `GET /admin/guard` shows.
const TRANSITIONS_KEPT: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardConfig {
    /// Past it, a sent call's outcome is unknown.
    pub timeout: Duration,
    /// Calls in flight at most; 0 turns the bulkhead off.
    pub bulkhead: u32,
    /// `None` turns the breaker off.
    pub breaker: Option<BreakerConfig>,
    /// The calls out at once (`GATEWAY_CONCURRENCY`).
    pub concurrency: LimitMode,
    /// How long a call waits for a slot under it, at most.
    pub max_wait: Duration,
    pub limiter: LimiterConfig,
}

impl Default for GuardConfig {
    /// The defaults (`docs/design/guard.md`).
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(3),
            bulkhead: 50,
            breaker: Some(BreakerConfig::default()),
            concurrency: LimitMode::Adaptive {
                floor: 2,
                ceiling: 50,
            },
            max_wait: Duration::from_secs(2),
            limiter: LimiterConfig::Off,
        }
    }
}

impl GuardConfig {
    /// How soon a healthy PG answers: what the breaker would not call slow (the timeout
    /// without a breaker). The concurrency limit learns only from such answers, and a
    /// look-up probe must come back within it.
    pub fn healthy_within(&self) -> Duration {
        self.breaker.map_or(self.timeout, |breaker| {
            Duration::from_millis(breaker.slow_call_ms).min(self.timeout)
        })
    }
}

/// Why the guard did not send a call. The call never left; the payment is FAILED.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    CircuitOpen,
    ConcurrencyLimited,
    BulkheadFull,
    RateLimited,
}

impl Refusal {
    pub const ALL: [Self; 4] = [
        Self::CircuitOpen,
        Self::ConcurrencyLimited,
        Self::BulkheadFull,
        Self::RateLimited,
    ];

    /// The payment's `failureReason`.
    pub fn reason(self) -> &'static str {
        match self {
            Self::CircuitOpen => "CIRCUIT_OPEN",
            Self::ConcurrencyLimited => "CONCURRENCY_LIMITED",
            Self::BulkheadFull => "BULKHEAD_FULL",
            Self::RateLimited => "RATE_LIMITED",
        }
    }
}

/// The guard in front of one kind of PG call; `name` labels its metrics.
pub struct GatewayGuard {
    name: &'static str,
    config: GuardConfig,
    epoch: Instant,
    bulkhead: Option<Arc<Semaphore>>,
    breaker: Option<Mutex<Breaker>>,
    /// `None` when the concurrency limit is off.
    slots: Option<Slots>,
    /// `None` when it is off: nothing on a call's path.
    limiter: Option<CallLimiter>,
    /// The operator's setting of the breaker; `None`: never set, the breaker decides.
    control: Mutex<Option<BreakerControl>>,
    transitions: Mutex<VecDeque<Transition>>,
    metrics: Arc<Metrics>,
}

impl GatewayGuard {
    pub fn new(name: &'static str, config: GuardConfig, metrics: Arc<Metrics>) -> Self {
        let epoch = Instant::now();
        let guard = Self {
            name,
            config,
            epoch,
            bulkhead: (config.bulkhead > 0)
                .then(|| Arc::new(Semaphore::new(config.bulkhead as usize))),
            breaker: config.breaker.map(|c| Mutex::new(Breaker::new(c))),
            slots: Slots::new(
                name,
                config.concurrency,
                config.healthy_within().as_millis() as u64,
                config.max_wait,
                epoch,
                &metrics,
            ),
            limiter: (config.limiter != LimiterConfig::Off)
                .then(|| CallLimiter::local(config.limiter)),
            transitions: Mutex::new(VecDeque::new()),
            control: Mutex::new(None),
            metrics,
        };
        if guard.breaker.is_some() {
            guard
                .metrics
                .breaker_state(name, breaker::BreakerState::Closed);
        }
        guard
    }

    pub fn config(&self) -> &GuardConfig {
        &self.config
    }

    /// Makes the limiter count against `budget`, the one every instance on the database
    /// shares, instead of this instance's own.
    pub async fn share_budget(&mut self, budget: Arc<dyn SharedBudget>) -> anyhow::Result<()> {
        if self.limiter.is_some() {
            let shared =
                CallLimiter::shared(self.name, self.config.limiter, self.config.timeout, budget);
            self.limiter = Some(shared.await?);
        }
        Ok(())
    }

    /// Makes `call` through the guard: refused at once, or sent and bounded by the
    /// timeout, whose expiry is [`Answer::timed_out`] (for an approval: UNKNOWN).
    pub async fn call<A: Answer>(&self, call: impl Future<Output = A>) -> Result<A, Refusal> {
        let permit = self.admit().await.inspect_err(|refusal| {
            self.metrics.guard_refused(self.name, refusal.reason());
        })?;
        // Sent now: the wait for a slot is not the PG's latency.
        let _in_flight = self.metrics.gateway_call_started(self.name);
        let timeout = self.config.timeout;
        let mut call = std::pin::pin!(call);
        // A call still out at the slow-call threshold is slow from then on: the breaker
        // hears of it at once, not when it times out.
        let judged = permit.breaker.and(self.config.breaker);
        let answer = match judged.map(|c| Duration::from_millis(c.slow_call_ms)) {
            Some(slow) if slow < timeout => match tokio::time::timeout(slow, &mut call).await {
                Ok(answer) => answer,
                Err(_) => {
                    self.count_overdue();
                    tokio::time::timeout(timeout - slow, call)
                        .await
                        .unwrap_or_else(|_| A::timed_out(timeout))
                }
            },
            _ => tokio::time::timeout(timeout, call)
                .await
                .unwrap_or_else(|_| A::timed_out(timeout)),
        };
        permit.finish(&answer);
        Ok(answer)
    }

    /// Tells the breaker the time, so the calls in flight past the slow-call threshold
    /// count now.
    fn count_overdue(&self) {
        if let Some(mut breaker) = self.breaker() {
            let transition = breaker.overdue(self.now_ms());
            drop(breaker);
            self.note(transition);
        }
    }

    /// The breaker, told first how many calls wait for a slot: traffic it has seen. The
    /// two locks are never held together.
    fn breaker(&self) -> Option<MutexGuard<'_, Breaker>> {
        let waiting = self.slots.as_ref().map_or(0, Slots::waiting);
        self.breaker.as_ref().map(|breaker| {
            let mut breaker = lock(breaker);
            breaker.set_waiting(waiting);
            breaker
        })
    }

    async fn admit(&self) -> Result<Permit<'_>, Refusal> {
        // A call the breaker would refuse now is refused before it waits for a slot.
        let refused_now = match self.mode() {
            BreakerMode::ForcedOpen => true,
            BreakerMode::Disabled => false,
            BreakerMode::Auto => self.breaker().is_some_and(|b| !b.admits(self.now_ms())),
        };
        if refused_now {
            return Err(Refusal::CircuitOpen);
        }
        let slot = match &self.slots {
            Some(slots) => Some(slots.acquire().await?),
            None => None,
        };
        // Asked again: the wait may have changed the breaker, or its setting.
        let breaker = match self.mode() {
            BreakerMode::ForcedOpen => return Err(Refusal::CircuitOpen),
            BreakerMode::Disabled => None,
            BreakerMode::Auto => match self.breaker() {
                None => None,
                Some(mut breaker) => {
                    let (permit, transition) = breaker.try_acquire(self.now_ms());
                    drop(breaker);
                    self.note(transition);
                    Some(permit.map_err(|_| Refusal::CircuitOpen)?)
                }
            },
        };
        let mut permit = Permit {
            guard: self,
            breaker,
            concurrency: slot,
            slot: None,
            unit: None,
            started: Instant::now(),
        };
        if let Some(slots) = &self.bulkhead {
            let slot = slots.clone().try_acquire_owned();
            permit.slot = Some(slot.map_err(|_| Refusal::BulkheadFull)?);
        }
        if let Some(limiter) = &self.limiter {
            permit.unit = Some(limiter.take(self.name, self.epoch).await?);
        }
        permit.started = Instant::now();
        Ok(permit)
    }

    /// Milliseconds since the guard was made: monotonic, whatever the wall clock does.
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Refuses the calls waiting for a slot: the breaker opened, or was forced open.
    fn refuse_waiting(&self) {
        if let Some(slots) = &self.slots {
            slots.refuse_waiting(Refusal::CircuitOpen);
        }
    }

    fn note(&self, transition: Option<Transition>) {
        let Some(transition) = transition else {
            return;
        };
        tracing::warn!(
            guard = self.name,
            from = transition.from.as_str(),
            to = transition.to.as_str(),
            "circuit breaker changed state"
        );
        self.metrics.breaker_transition(self.name, &transition);
        if transition.to == BreakerState::Open {
            self.refuse_waiting();
        }
        let mut kept = lock(&self.transitions);
        if kept.len() == TRANSITIONS_KEPT {
            kept.pop_front();
        }
        kept.push_back(transition);
    }
}

/// One admitted call. Reporting its answer consumes it; dropping it unreported gives
/// back the half-open probe slot it may hold. The slot under the concurrency limit and
/// the bulkhead slot go with it, and either way the limiter hears that the call is over.
struct Permit<'a> {
    guard: &'a GatewayGuard,
    breaker: Option<BreakerPermit>,
    /// Under the concurrency limit; what it learns of the call is reported with it.
    concurrency: Option<Slot<'a>>,
    slot: Option<OwnedSemaphorePermit>,
    /// The limiter's unit (it is asked last), given back when the call is over.
    unit: Option<Unit<'a>>,
    started: Instant,
}

impl Permit<'_> {
    fn finish(mut self, answer: &impl Answer) {
        let elapsed = self.started.elapsed();
        let guard = self.guard;
        guard
            .metrics
            .gateway_call_finished(guard.name, answer.kind(), elapsed);
        let latency_ms = elapsed.as_millis() as u64;
        let failed = answer.is_failure();
        if let (Some(permit), Some(mut breaker)) = (self.breaker.take(), guard.breaker()) {
            let result = CallResult {
                failed,
                duration_ms: latency_ms,
            };
            let transition = breaker.record(permit, result, guard.now_ms());
            drop(breaker);
            guard.note(transition);
        }
        // After the breaker heard: a call handed this slot finds the breaker up to date.
        if let Some(slot) = self.concurrency.take() {
            slot.finish(Sample { latency_ms, failed });
        }
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let guard = self.guard;
        if let (Some(permit), Some(breaker)) = (self.breaker.take(), &guard.breaker) {
            lock(breaker).release(permit);
        }
    }
}

/// The guard's locks guard plain data that every step leaves consistent.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
