//! The guard as operators see it (`GET /admin/guard`).

use serde::Serialize;

use super::{lock, CallLimiter, GatewayGuard, Refusal};
use crate::policy::breaker::{BreakerView, Transition};
use crate::store::BreakerControl;

impl GatewayGuard {
    /// The guard now: its devices, their settings, and the calls they refused.
    pub fn view(&self) -> GuardView {
        let breaker = self.breaker().map(|mut breaker| {
            let (view, transition) = breaker.observe(self.now_ms());
            drop(breaker);
            self.note(transition);
            view
        });
        GuardView {
            name: self.name,
            timeout_ms: self.config.timeout.as_millis() as u64,
            in_flight: self.metrics.gateway_in_flight(self.name),
            concurrency: self.concurrency_view(),
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

    fn concurrency_view(&self) -> ConcurrencyView {
        let mode = self.config.concurrency;
        let (limit, in_flight, waiting) = self.slots.as_ref().map_or((None, 0, 0), |slots| {
            let (limit, in_flight, waiting) = slots.view();
            (Some(limit), in_flight, waiting)
        });
        let bounds = mode.bounds();
        ConcurrencyView {
            mode: mode.name(),
            limit,
            floor: bounds.map(|(floor, _)| floor),
            ceiling: bounds.map(|(_, ceiling)| ceiling),
            in_flight,
            waiting,
            max_wait_ms: self.config.max_wait.as_millis() as u64,
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardView {
    pub name: &'static str,
    pub timeout_ms: u64,
    pub in_flight: i64,
    pub concurrency: ConcurrencyView,
    pub bulkhead: BulkheadView,
    pub breaker: BreakerStatus,
    pub limiter: LimiterView,
    /// Calls refused since start, by `failureReason`.
    pub refusals: std::collections::BTreeMap<&'static str, u64>,
}

/// The concurrency limit: `limit`, `floor` and `ceiling` are absent when it is off.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConcurrencyView {
    /// `adaptive`, `fixed` or `off`.
    pub mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floor: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<u32>,
    /// Calls holding a slot: sent, or about to be.
    pub in_flight: u32,
    pub waiting: u32,
    /// How long a call waits for a slot at most.
    pub max_wait_ms: u64,
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
