//! The circuit breaker as a pure state machine: no clock, no locks, no I/O. The caller
//! passes the time (milliseconds from any fixed origin) and reports every outcome.
//!
//! - **Closed** keeps the last `window` outcomes. Once at least `min_calls` are in it, a
//!   failure rate at or above its threshold opens the breaker; so does a slow-call rate,
//!   once at least `min_calls` are in it or still out.
//! - **Open** refuses every call until `open_ms` has passed, then the next call finds
//!   it half-open.
//! - **Half-open** lets probes through one at a time and refuses the rest. A probe that
//!   fails or is slow re-opens it at once — so a gateway still down costs one probe a
//!   cycle, not `half_open_calls` — and after `half_open_calls` probes in a row came back
//!   fast and well, it closes with a fresh window. With look-up probes ([`probe`]), an
//!   open breaker turns half-open only once the PG answered one; and after a call let
//!   through half-open went unanswered, only once the PG answered a confirm probe — so a
//!   PG whose look-ups answer while its confirms stall gets one payment, not one a cycle.
//!
//! **In-flight evidence.** A call still in flight at `slow_call_ms` is already known to
//! be slow: it counts as a slow call from that moment, not when it ends — so a stalled
//! gateway opens the breaker a threshold after the stall began, not a timeout after —
//! and when it then ends as a failure (a timeout), that same outcome becomes a failure:
//! counted once. The caller tells the breaker the time on every permit request and view,
//! and once more when a call passes the threshold ([`Breaker::overdue`]); between those
//! moments nothing can change.
//!
//! Every transition starts a new *generation*, and every permit carries the generation
//! it was admitted in. An outcome reported on a permit of an earlier generation is
//! ignored: a timeout of a call sent while the breaker was open-for-probing must not
//! land in the fresh window of the closed state and re-open it (in the seed's breaker
//! experiment, run 1, that took recovery from 3.8 s to 12.6 s: `docs/experiments.md`). A permit given back without an outcome
//! (the call was never made, or its task was dropped) frees its half-open slot.

use std::collections::VecDeque;

use serde::Serialize;

pub use config::BreakerConfig;
pub use mode::BreakerMode;
use tally::{Judged, Tally};
pub use view::BreakerView;

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
    /// The call's number, in the order admitted.
    call: u64,
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

/// A call admitted in the current generation and not yet back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct InFlight {
    call: u64,
    started_ms: u64,
    /// Counted as slow already, while in flight.
    counted: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breaker {
    config: BreakerConfig,
    state: BreakerState,
    generation: u64,
    opened_at_ms: u64,
    tally: Tally,
    probes_in_flight: u32,
    /// The current generation's calls not yet back, in the order admitted.
    in_flight: VecDeque<InFlight>,
    next_call: u64,
    /// Calls waiting for a slot under the concurrency limit: traffic seen, not yet sent.
    waiting: u32,
    /// Whether an open breaker waits for a look-up probe before it lets payments through
    /// ([`probe`]).
    probed: bool,
    probe_out: bool,
    /// A call let through half-open went unanswered (slow or failed) since the breaker
    /// last closed: its probes are confirm probes until it closes again ([`probe`]).
    confirm_unanswered: bool,
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
            in_flight: VecDeque::new(),
            next_call: 0,
            waiting: 0,
            probed: false,
            probe_out: false,
            confirm_unanswered: false,
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
        let transition = self.overdue(now_ms).or_else(|| self.open_wait_over(now_ms));
        let admitted = match self.state {
            BreakerState::Closed => true,
            BreakerState::Open => false,
            BreakerState::HalfOpen => {
                let admit = self.probes_in_flight == 0;
                self.probes_in_flight += u32::from(admit);
                admit
            }
        };
        let permit = BreakerPermit {
            generation: self.generation,
            call: self.next_call,
        };
        if admitted {
            self.next_call += 1;
            self.in_flight.push_back(InFlight {
                call: permit.call,
                started_ms: now_ms,
                counted: false,
            });
        }
        (admitted.then_some(permit).ok_or(CircuitOpen), transition)
    }

    /// Counts every call still in flight at `now_ms` that has passed the slow-call
    /// threshold as a slow call, once. Returns the transition it caused, if any.
    pub fn overdue(&mut self, now_ms: u64) -> Option<Transition> {
        let slow_since = now_ms.checked_sub(self.config.slow_call_ms)?;
        let overdue: Vec<u64> = self
            .in_flight
            .iter_mut()
            .filter(|call| !call.counted && call.started_ms <= slow_since)
            .map(|call| {
                call.counted = true;
                call.call
            })
            .collect();
        for call in overdue {
            let judged = Judged {
                call: Some(call),
                failed: false,
                slow: true,
            };
            if let Some(transition) = self.count(judged, now_ms) {
                return Some(transition);
            }
        }
        None
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
        let flight = self.take_in_flight(permit)?;
        if flight.counted {
            // Already counted as slow: a failure now makes that outcome a failure too.
            if !result.failed {
                return None;
            }
            self.tally.fail(flight.call);
            return match self.state {
                BreakerState::Closed => self.closed_trips(now_ms),
                BreakerState::HalfOpen => Some(self.reopen(now_ms)),
                BreakerState::Open => None,
            };
        }
        let judged = Judged {
            call: None,
            failed: result.failed,
            slow: result.duration_ms >= self.config.slow_call_ms,
        };
        self.count(judged, now_ms)
    }

    /// Counts one outcome in the current state: the transition it causes, if any.
    fn count(&mut self, judged: Judged, now_ms: u64) -> Option<Transition> {
        match self.state {
            BreakerState::Closed => {
                self.tally.push(judged, self.config.window);
                self.closed_trips(now_ms)
            }
            BreakerState::HalfOpen => {
                self.probes_in_flight = self.probes_in_flight.saturating_sub(1);
                if judged.failed || judged.slow {
                    return Some(self.reopen(now_ms));
                }
                self.tally.push(judged, self.config.half_open_calls);
                (self.tally.calls() >= self.config.half_open_calls)
                    .then(|| self.move_to(BreakerState::Closed, now_ms))
            }
            // An open breaker admits nothing, so no call of its generation exists.
            BreakerState::Open => None,
        }
    }

    /// Whether the closed state's rates call for opening. For the slow-call rate, calls
    /// still out, and calls waiting for a slot under the concurrency limit, count towards
    /// `min_calls` — traffic the breaker has seen — though not in the rate itself: so a gateway that stalls with the window still empty opens the
    /// breaker at the first call judged slow, once `min_calls` have been sent.
    fn closed_trips(&mut self, now_ms: u64) -> Option<Transition> {
        let out = self.in_flight.iter().filter(|call| !call.counted).count() as u32;
        let pending = out.saturating_add(self.waiting);
        self.tally
            .trips(&self.config, self.config.min_calls, pending)
            .then(|| self.move_to(BreakerState::Open, now_ms))
    }

    /// Takes `permit`'s call out of those in flight, if it is one of them.
    fn take_in_flight(&mut self, permit: BreakerPermit) -> Option<InFlight> {
        let index = self
            .in_flight
            .binary_search_by_key(&permit.call, |flight| flight.call)
            .ok()?;
        self.in_flight.remove(index)
    }

    /// A call let through half-open went unanswered: open again, and (with look-up
    /// probes) probe the confirm path itself from now on.
    fn reopen(&mut self, now_ms: u64) -> Transition {
        self.confirm_unanswered = true;
        self.move_to(BreakerState::Open, now_ms)
    }

    /// Starts afresh, closed with an empty window: what an operator's return to
    /// [`BreakerMode::Auto`] does. The transition, unless it was closed already.
    pub fn reset(&mut self, now_ms: u64) -> Option<Transition> {
        if self.state == BreakerState::Closed {
            self.confirm_unanswered = false;
            self.tally = Tally::default();
            self.in_flight.clear();
            self.generation += 1;
            return None;
        }
        Some(self.move_to(BreakerState::Closed, now_ms))
    }

    /// Gives a permit back without an outcome: the call was not made or its result
    /// is lost. A half-open probe slot is freed; nothing is counted.
    pub fn release(&mut self, permit: BreakerPermit) {
        if permit.generation != self.generation {
            return;
        }
        let counted = self
            .take_in_flight(permit)
            .is_some_and(|flight| flight.counted);
        // A probe counted while in flight has re-opened the breaker already.
        if self.state == BreakerState::HalfOpen && !counted {
            self.probes_in_flight = self.probes_in_flight.saturating_sub(1);
        }
    }

    /// When an open breaker lets probes through.
    fn open_until(&self) -> u64 {
        self.opened_at_ms.saturating_add(self.config.open_ms)
    }

    fn open_wait_over(&mut self, now_ms: u64) -> Option<Transition> {
        (self.state == BreakerState::Open && !self.probed && self.waited(now_ms))
            .then(|| self.move_to(BreakerState::HalfOpen, now_ms))
    }

    /// Whether an open breaker's wait is over.
    fn waited(&self, now_ms: u64) -> bool {
        now_ms.saturating_sub(self.opened_at_ms) >= self.config.open_ms
    }

    /// Whether a call asking now would be admitted, without asking: a call that would be
    /// refused need not wait for a slot first.
    pub fn admits(&self, now_ms: u64) -> bool {
        match self.state {
            BreakerState::Closed => true,
            BreakerState::Open => !self.probed && self.waited(now_ms),
            BreakerState::HalfOpen => self.probes_in_flight == 0,
        }
    }

    /// How many calls wait for a slot under the concurrency limit now.
    pub fn set_waiting(&mut self, calls: u32) {
        self.waiting = calls;
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
        self.probe_out = false;
        // Calls of the old generation no longer count, wherever they are.
        self.in_flight.clear();
        match to {
            BreakerState::Open => self.opened_at_ms = now_ms,
            BreakerState::Closed => self.confirm_unanswered = false,
            BreakerState::HalfOpen => {}
        }
        transition
    }
}

mod config;
mod mode;
pub mod probe;
mod tally;
mod view;

#[cfg(test)]
mod tests;
