//! Look-up probes: a breaker whose guard can ask the PG something that charges nothing
//! (a look-up of an order that cannot exist) does not let a payment through to learn
//! whether the PG is back. Once its open wait is over it stays open while the guard asks;
//! a probe answered well and within the slow-call threshold turns it half-open, where
//! payments are probes one at a time as before; any other answer starts the open wait
//! again, at no one's cost.
//!
//! What a look-up proves is that the PG answers. A PG whose look-ups answer while its
//! confirms stall passes the probe, and then costs one payment a cycle, as a breaker
//! without probes does; a PG that is down altogether costs none.

use super::{Breaker, BreakerState, Transition};

/// The right to send one look-up probe, given in `generation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeTicket {
    generation: u64,
}

impl Breaker {
    /// From now on, an open breaker waits for a look-up probe before it turns half-open.
    pub fn probe_with_look_ups(&mut self) {
        self.probed = true;
    }

    /// A look-up probe to send now, if one is due: the breaker is open, its wait is over
    /// and no probe is out.
    pub fn probe_due(&mut self, now_ms: u64) -> Option<ProbeTicket> {
        let due = self.probed
            && self.state == BreakerState::Open
            && !self.probe_out
            && self.waited(now_ms);
        self.probe_out |= due;
        due.then_some(ProbeTicket {
            generation: self.generation,
        })
    }

    /// How the probe went: `healthy` turns the breaker half-open; otherwise it waits
    /// `open_ms` again. A probe of an earlier generation (an operator reset the breaker
    /// meanwhile) is ignored.
    pub fn probe_answered(
        &mut self,
        ticket: ProbeTicket,
        healthy: bool,
        now_ms: u64,
    ) -> Option<Transition> {
        if ticket.generation != self.generation || self.state != BreakerState::Open {
            return None;
        }
        self.probe_out = false;
        if healthy {
            return Some(self.move_to(BreakerState::HalfOpen, now_ms));
        }
        self.opened_at_ms = now_ms;
        None
    }
}
