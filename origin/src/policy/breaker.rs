//! The circuit breaker as a pure state machine: no clock, no locks, no I/O. The caller
//! passes the time (milliseconds from any fixed origin) and reports every outcome.
//!
//! - **Closed** keeps the last `window` outcomes. Once at least `min_calls` are in it,
//!   a failure rate or a slow-call rate at or above its threshold opens the breaker.
//! - **Open** refuses every call until `open_ms` has passed, then the next call finds
//!   it half-open.
//! - **Half-open** lets `half_open_calls` probes through and refuses the rest. When all
//!   of them have reported, the same rates decide: open again, or closed with a fresh
//!   window.
//!
//! Every transition starts a new *generation*, and every permit carries the generation
//! it was admitted in. An outcome reported on a permit of an earlier generation is
//! ignored: a timeout of a call sent while the breaker was open-for-probing must not
//! land in the fresh window of the closed state and re-open it (in the seed's breaker
//! experiment, run 1, that took recovery from 3.8 s to 12.6 s: `docs/experiments.md`). A permit given back without an outcome
//! (the call was never made, or its task was dropped) frees its half-open slot.

use std::collections::VecDeque;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerConfig {
    /// How many of the latest outcomes the closed state judges by.
    pub window: u32,
    /// Fewer outcomes than this in the window never open the breaker.
    pub min_calls: u32,
    /// Percent of failed calls that opens it (1–100).
    pub failure_rate: u8,
    /// A call that takes this long or longer is slow, whatever its outcome.
    pub slow_call_ms: u64,
    /// Percent of slow calls that opens it (1–100).
    pub slow_call_rate: u8,
    /// How long it stays open before letting probes through.
    pub open_ms: u64,
    /// Probes let through while half-open.
    pub half_open_calls: u32,
}

impl Default for BreakerConfig {
    /// The defaults the seed's experiments chose (`docs/design/guard.md`).
    fn default() -> Self {
        Self {
            window: 20,
            min_calls: 10,
            failure_rate: 50,
            slow_call_ms: 2_000,
            slow_call_rate: 100,
            open_ms: 10_000,
            half_open_calls: 3,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BreakerState {
    Closed,
    Open,
    HalfOpen,
}

impl BreakerState {
    pub const ALL: [Self; 3] = [Self::Closed, Self::Open, Self::HalfOpen];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Closed => "CLOSED",
            Self::Open => "OPEN",
            Self::HalfOpen => "HALF_OPEN",
        }
    }
}

/// A change of state, at `at_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Transition {
    pub from: BreakerState,
    pub to: BreakerState,
    pub at_ms: u64,
}

/// The right to make one call, admitted in `generation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerPermit {
    generation: u64,
}

/// How one admitted call went, as the breaker judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallResult {
    /// A timeout, a 5xx or a connection error. A business decline is not a failure.
    pub failed: bool,
    pub duration_ms: u64,
}

/// The breaker refused the call: it is open, or half-open with every probe out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CircuitOpen;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Judged {
    failed: bool,
    slow: bool,
}

/// Outcomes counted in one state: a ring of the latest `capacity`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Tally {
    outcomes: VecDeque<Judged>,
    failures: u32,
    slow: u32,
}

impl Tally {
    fn push(&mut self, judged: Judged, capacity: u32) {
        if self.outcomes.len() >= capacity as usize {
            if let Some(oldest) = self.outcomes.pop_front() {
                self.failures -= u32::from(oldest.failed);
                self.slow -= u32::from(oldest.slow);
            }
        }
        self.outcomes.push_back(judged);
        self.failures += u32::from(judged.failed);
        self.slow += u32::from(judged.slow);
    }

    fn calls(&self) -> u32 {
        self.outcomes.len() as u32
    }

    /// Whether the rates call for opening, judged on at least `min_calls` outcomes.
    fn trips(&self, config: &BreakerConfig, min_calls: u32) -> bool {
        let calls = self.calls();
        calls > 0
            && calls >= min_calls
            && (self.failures * 100 >= u32::from(config.failure_rate) * calls
                || self.slow * 100 >= u32::from(config.slow_call_rate) * calls)
    }
}

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
    /// Probes out while half-open.
    pub probes_in_flight: u32,
    /// When an open breaker lets probes through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_until_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breaker {
    config: BreakerConfig,
    state: BreakerState,
    generation: u64,
    opened_at_ms: u64,
    tally: Tally,
    probes_in_flight: u32,
}

impl Breaker {
    pub fn new(config: BreakerConfig) -> Self {
        Self {
            config,
            state: BreakerState::Closed,
            generation: 0,
            opened_at_ms: 0,
            tally: Tally::default(),
            probes_in_flight: 0,
        }
    }

    pub fn config(&self) -> &BreakerConfig {
        &self.config
    }

    /// Admits one call or refuses it. An open breaker whose wait is over turns
    /// half-open here, so the transition is returned with the answer.
    pub fn try_acquire(
        &mut self,
        now_ms: u64,
    ) -> (Result<BreakerPermit, CircuitOpen>, Option<Transition>) {
        let transition = self.open_wait_over(now_ms);
        let admitted = match self.state {
            BreakerState::Closed => true,
            BreakerState::Open => false,
            BreakerState::HalfOpen => {
                let completed = self.tally.calls();
                let admit = completed + self.probes_in_flight < self.config.half_open_calls;
                self.probes_in_flight += u32::from(admit);
                admit
            }
        };
        let permit = BreakerPermit {
            generation: self.generation,
        };
        (admitted.then_some(permit).ok_or(CircuitOpen), transition)
    }

    /// Counts the outcome of an admitted call, unless it was admitted in an earlier
    /// generation. Returns the transition it caused, if any.
    pub fn record(
        &mut self,
        permit: BreakerPermit,
        result: CallResult,
        now_ms: u64,
    ) -> Option<Transition> {
        if permit.generation != self.generation {
            return None;
        }
        let judged = Judged {
            failed: result.failed,
            slow: result.duration_ms >= self.config.slow_call_ms,
        };
        match self.state {
            BreakerState::Closed => {
                self.tally.push(judged, self.config.window);
                self.tally
                    .trips(&self.config, self.config.min_calls)
                    .then(|| self.move_to(BreakerState::Open, now_ms))
            }
            BreakerState::HalfOpen => {
                self.probes_in_flight = self.probes_in_flight.saturating_sub(1);
                self.tally.push(judged, self.config.half_open_calls);
                if self.tally.calls() < self.config.half_open_calls {
                    return None;
                }
                let next = if self.tally.trips(&self.config, 1) {
                    BreakerState::Open
                } else {
                    BreakerState::Closed
                };
                Some(self.move_to(next, now_ms))
            }
            // An open breaker admits nothing, so no permit of its generation exists.
            BreakerState::Open => None,
        }
    }

    /// Gives a permit back without an outcome: the call was not made or its result
    /// is lost. A half-open probe slot is freed; nothing is counted.
    pub fn release(&mut self, permit: BreakerPermit) {
        if permit.generation == self.generation && self.state == BreakerState::HalfOpen {
            self.probes_in_flight = self.probes_in_flight.saturating_sub(1);
        }
    }

    /// The state at `now_ms`, turning an open breaker half-open when its wait is over.
    pub fn observe(&mut self, now_ms: u64) -> (BreakerView, Option<Transition>) {
        let transition = self.open_wait_over(now_ms);
        let view = BreakerView {
            state: self.state,
            generation: self.generation,
            calls: self.tally.calls(),
            failures: self.tally.failures,
            slow_calls: self.tally.slow,
            probes_in_flight: self.probes_in_flight,
            open_until_ms: (self.state == BreakerState::Open)
                .then(|| self.opened_at_ms.saturating_add(self.config.open_ms)),
        };
        (view, transition)
    }

    fn open_wait_over(&mut self, now_ms: u64) -> Option<Transition> {
        let waited = now_ms.saturating_sub(self.opened_at_ms) >= self.config.open_ms;
        (self.state == BreakerState::Open && waited)
            .then(|| self.move_to(BreakerState::HalfOpen, now_ms))
    }

    fn move_to(&mut self, to: BreakerState, now_ms: u64) -> Transition {
        let transition = Transition {
            from: self.state,
            to,
            at_ms: now_ms,
        };
        self.state = to;
        self.generation += 1;
        self.tally = Tally::default();
        self.probes_in_flight = 0;
        if to == BreakerState::Open {
            self.opened_at_ms = now_ms;
        }
        transition
    }
}

#[cfg(test)]
mod tests;
