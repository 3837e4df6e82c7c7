//! What the breaker shows of itself: its state for operators ([`BreakerView`]), and how
//! long it expects to go on refusing calls — what the origin tells the edge, so the queue
//! holds that long.

use serde::Serialize;

use super::probe::ProbeKind;
use super::{Breaker, BreakerState, Transition};

/// What an operator sees of the breaker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BreakerView {
    pub state: BreakerState,
    pub generation: u64,
    /// Outcomes counted in the current state.
    pub calls: u32,
    pub failures: u32,
    pub slow_calls: u32,
    /// Probes out: payments while half-open, a look-up while open ([`super::probe`]).
    pub probes_in_flight: u32,
    /// When an open breaker lets probes through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_until_ms: Option<u64>,
    /// What an open breaker's probe asks the PG: `LOOK_UP`, or `CONFIRM` once a payment
    /// let through half-open went unanswered ([`super::probe`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_probe: Option<ProbeKind>,
}

impl Breaker {
    /// The state at `now_ms`, turning an open breaker half-open when its wait is over.
    pub fn observe(&mut self, now_ms: u64) -> (BreakerView, Option<Transition>) {
        let transition = self.overdue(now_ms).or_else(|| self.open_wait_over(now_ms));
        let view = BreakerView {
            state: self.state,
            generation: self.generation,
            calls: self.tally.calls(),
            failures: self.tally.failures,
            slow_calls: self.tally.slow,
            probes_in_flight: self.probes_in_flight + u32::from(self.probe_out),
            open_until_ms: (self.state == BreakerState::Open).then(|| self.open_until()),
            next_probe: self
                .next_probe()
                .filter(|_| self.state == BreakerState::Open),
        };
        (view, transition)
    }

    /// How long from `now_ms` it is expected to go on refusing calls: an open breaker
    /// until its wait is over, a half-open one until its probe is judged (at the slow-call
    /// threshold at the latest, bounded by `open_ms`); `None` when it admits calls now.
    pub fn refusing_for(&self, now_ms: u64) -> Option<u64> {
        match self.state {
            BreakerState::Closed => None,
            // Waited, and a look-up probe decides: judged at the slow-call threshold.
            BreakerState::Open if self.probed && self.waited(now_ms) => Some(
                self.config
                    .slow_call_ms
                    .clamp(1, self.config.open_ms.max(1)),
            ),
            BreakerState::Open => Some(self.open_until().saturating_sub(now_ms).max(1)),
            BreakerState::HalfOpen => {
                let probe = self
                    .in_flight
                    .front()
                    .filter(|_| self.probes_in_flight > 0)?;
                let judged_at = probe.started_ms.saturating_add(self.config.slow_call_ms);
                Some(
                    judged_at
                        .saturating_sub(now_ms)
                        .clamp(1, self.config.open_ms.max(1)),
                )
            }
        }
    }
}
