//! The PG guard (`docs/design/guard.md`): what stands between a payment and the payment gateway.
//!
//! | device | refused call becomes |
//! |---|---|
//! | timeout | UNKNOWN — sent, outcome not known |
//! | circuit breaker ([`breaker`]) | FAILED `CIRCUIT_OPEN` — not sent |
//! | bulkhead (in-flight cap, no waiting) | FAILED `BULKHEAD_FULL` — not sent |
//! | limiter ([`crate::policy::limiter`], off by default) | FAILED `RATE_LIMITED` — not sent |
//!
//! Only the timeout can make a payment UNKNOWN; every refusal happens before anything
//! is sent, at once, and is a known failure. Nothing is retried.
//!
//! The devices are asked in that order, and a later refusal gives back what the
//! earlier ones granted, so the limiter counts exactly the calls that were sent. The
//! `Permit` of a call in flight gives everything back when dropped, so a cancelled
//! call never keeps a bulkhead slot or a half-open probe, and the limiter hears that
//! it is over (it may have reached the PG, so it still counts for a window).

mod answer;
pub mod control;
mod limit;

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

// tokio's clock, so tests can pause it; it reads the monotonic clock otherwise.
use tokio::time::Instant;

use serde::Serialize;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::metrics::Metrics;
use crate::policy::breaker::{
    self, Breaker, BreakerConfig, BreakerMode, BreakerPermit, BreakerView, CallResult, Transition,
};
use crate::policy::limiter::LimiterConfig;
use crate::store::{BreakerControl, SharedBudget};
pub use answer::Answer;
use limit::{CallLimiter, Unit};

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
    pub limiter: LimiterConfig,
}

impl Default for GuardConfig {
    /// The defaults (`docs/design/guard.md`).
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(3),
            bulkhead: 50,
            breaker: Some(BreakerConfig::default()),
            limiter: LimiterConfig::Off,
        }
    }
}

/// Why the guard did not send a call. The call never left; the payment is FAILED.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    CircuitOpen,
    BulkheadFull,
    RateLimited,
}

impl Refusal {
    pub const ALL: [Self; 3] = [Self::CircuitOpen, Self::BulkheadFull, Self::RateLimited];

    /// The payment's `failureReason`.
    pub fn reason(self) -> &'static str {
        match self {
            Self::CircuitOpen => "CIRCUIT_OPEN",
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
    /// `None` when it is off: nothing on a call's path.
    limiter: Option<CallLimiter>,
    /// The operator's setting of the breaker; `None`: never set, the breaker decides.
    control: Mutex<Option<BreakerControl>>,
    transitions: Mutex<VecDeque<Transition>>,
    metrics: Arc<Metrics>,
}

impl GatewayGuard {
    pub fn new(name: &'static str, config: GuardConfig, metrics: Arc<Metrics>) -> Self {
        let guard = Self {
            name,
            config,
            epoch: Instant::now(),
            bulkhead: (config.bulkhead > 0)
                .then(|| Arc::new(Semaphore::new(config.bulkhead as usize))),
            breaker: config.breaker.map(|c| Mutex::new(Breaker::new(c))),
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
        if let Some(breaker) = &self.breaker {
            let transition = lock(breaker).overdue(self.now_ms());
            self.note(transition);
        }
    }

    /// The guard as operators see it (`GET /admin/guard`).
    pub fn view(&self) -> GuardView {
        let breaker = self.breaker.as_ref().map(|breaker| {
            let (view, transition) = lock(breaker).observe(self.now_ms());
            self.note(transition);
            view
        });
        GuardView {
            name: self.name,
            timeout_ms: self.config.timeout.as_millis() as u64,
            in_flight: self.metrics.gateway_in_flight(self.name),
            bulkhead: BulkheadView {
                enabled: self.bulkhead.is_some(),
                max_concurrent: self.config.bulkhead,
                available: self
                    .bulkhead
                    .as_ref()
                    .map_or(0, |slots| slots.available_permits() as u32),
            },
            breaker: BreakerStatus {
                enabled: breaker.is_some(),
                control: lock(&self.control).clone(),
                now_ms: self.now_ms(),
                state: breaker,
                transitions: lock(&self.transitions).iter().copied().collect(),
            },
            limiter: LimiterView {
                kind: self.config.limiter.name(),
                shared: self.limiter.as_ref().is_some_and(CallLimiter::is_shared),
                rate: self
                    .config
                    .limiter
                    .rate()
                    .map(|rate| format!("{}/{}ms", rate.limit, rate.window_ms)),
            },
            refusals: Refusal::ALL
                .iter()
                .map(|refusal| {
                    let count = self.metrics.guard_refusals(self.name, refusal.reason());
                    (refusal.reason(), count)
                })
                .collect(),
        }
    }

    async fn admit(&self) -> Result<Permit<'_>, Refusal> {
        let now_ms = self.now_ms();
        let breaker = match (&self.breaker, self.mode()) {
            (_, BreakerMode::ForcedOpen) => return Err(Refusal::CircuitOpen),
            (None, _) | (_, BreakerMode::Disabled) => None,
            (Some(breaker), BreakerMode::Auto) => {
                let (permit, transition) = lock(breaker).try_acquire(now_ms);
                self.note(transition);
                Some(permit.map_err(|_| Refusal::CircuitOpen)?)
            }
        };
        let mut permit = Permit {
            guard: self,
            breaker,
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
        Ok(permit)
    }

    /// Milliseconds since the guard was made: monotonic, whatever the wall clock does.
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
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
        let mut kept = lock(&self.transitions);
        if kept.len() == TRANSITIONS_KEPT {
            kept.pop_front();
        }
        kept.push_back(transition);
    }
}

/// One admitted call. Reporting its answer consumes it; dropping it unreported gives
/// back the half-open probe slot it may hold. The bulkhead slot goes with it, and
/// either way the limiter hears that the call is over.
struct Permit<'a> {
    guard: &'a GatewayGuard,
    breaker: Option<BreakerPermit>,
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
        if let (Some(permit), Some(breaker)) = (self.breaker.take(), &guard.breaker) {
            let result = CallResult {
                failed: answer.is_failure(),
                duration_ms: elapsed.as_millis() as u64,
            };
            let transition = lock(breaker).record(permit, result, guard.now_ms());
            guard.note(transition);
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

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardView {
    pub name: &'static str,
    pub timeout_ms: u64,
    pub in_flight: i64,
    pub bulkhead: BulkheadView,
    pub breaker: BreakerStatus,
    pub limiter: LimiterView,
    /// Calls refused since start, by `failureReason`.
    pub refusals: std::collections::BTreeMap<&'static str, u64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BulkheadView {
    pub enabled: bool,
    pub max_concurrent: u32,
    pub available: u32,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BreakerStatus {
    pub enabled: bool,
    /// The operator's setting, with who, why and when; absent: never set (`AUTO`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<BreakerControl>,
    /// The guard's clock (ms since start), the time base of `openUntilMs` and `atMs`.
    pub now_ms: u64,
    #[serde(flatten)]
    pub state: Option<BreakerView>,
    /// The latest transitions, oldest first.
    pub transitions: Vec<Transition>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LimiterView {
    pub kind: &'static str,
    /// Whether every instance on the database counts against this one limit.
    pub shared: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<String>,
}

#[cfg(test)]
mod tests;
