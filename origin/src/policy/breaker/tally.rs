//! The outcomes one state of the breaker judges by.

use std::collections::VecDeque;

use super::BreakerConfig;

/// One outcome, as the breaker judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Judged {
    /// The call judged, when it was counted while still in flight.
    pub(super) call: Option<u64>,
    pub(super) failed: bool,
    pub(super) slow: bool,
}

/// Outcomes counted in one state: a ring of the latest `capacity`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Tally {
    outcomes: VecDeque<Judged>,
    pub(super) failures: u32,
    pub(super) slow: u32,
}

impl Tally {
    pub(super) fn push(&mut self, judged: Judged, capacity: u32) {
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

    pub(super) fn calls(&self) -> u32 {
        self.outcomes.len() as u32
    }

    /// The outcome of `call`, counted while it was in flight, turns out failed: it is
    /// the same outcome, now a failure too (if it is still in the window).
    pub(super) fn fail(&mut self, call: u64) {
        if let Some(judged) = self.outcomes.iter_mut().find(|j| j.call == Some(call)) {
            if !judged.failed {
                judged.failed = true;
                self.failures += 1;
            }
        }
    }

    /// Whether the rates call for opening, judged on the outcomes counted: the failure
    /// rate once they are at least `min_calls`; the slow-call rate once they and
    /// `pending` — calls still out and not yet judged — are (a call still out is not yet
    /// slow, but it is traffic seen; a failure needs outcomes to be judged against).
    pub(super) fn trips(&self, config: &BreakerConfig, min_calls: u32, pending: u32) -> bool {
        let calls = self.calls();
        let failing =
            calls >= min_calls && self.failures * 100 >= u32::from(config.failure_rate) * calls;
        let slow = calls + pending >= min_calls
            && self.slow * 100 >= u32::from(config.slow_call_rate) * calls;
        calls > 0 && (failing || slow)
    }
}
