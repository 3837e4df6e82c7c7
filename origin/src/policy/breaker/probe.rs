//! Probes that charge nobody: a breaker whose guard can ask the PG such questions does
//! not let a payment through to learn whether the PG is back. Once its open wait is over
//! it stays open while the guard asks; a probe answered within the slow-call threshold
//! (by any answer a working PG gives, "not found" above all) turns it half-open, where
//! payments are probes one at a time as before; any other outcome starts the open wait
//! again, at no one's cost.
//!
//! - A **look-up probe** ([`ProbeKind::LookUp`]) looks up an order that cannot exist. It
//!   proves that the PG answers, not that its confirms do: a PG whose look-ups answer
//!   while its confirms stall passes it.
//! - So once a payment let through half-open went unanswered — slow or failed: the PG
//!   answered the look-up but not the confirm — every probe until the breaker closes is a
//!   **confirm probe** ([`ProbeKind::Confirm`]): a confirm of a payment that cannot exist,
//!   which the PG refuses ("not found") if its confirm path answers at all. A PG whose
//!   confirms stall leaves it unanswered too, and no other payment is sent into it; one
//!   that is back answers it, and the next cycle closes the breaker as before.
//!
//! A PG that is down altogether costs no payment; one whose confirms stall while its
//! look-ups answer costs one, the first half-open cycle's.

use serde::Serialize;

use super::{Breaker, BreakerState, Transition};

/// What a probe asks the PG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ProbeKind {
    /// A look-up of an order that cannot exist.
    LookUp,
    /// A confirm of a payment that cannot exist.
    Confirm,
}

/// The right to send one probe, given in `generation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeTicket {
    generation: u64,
    kind: ProbeKind,
}

impl ProbeTicket {
    /// What to ask the PG.
    pub fn kind(&self) -> ProbeKind {
        self.kind
    }
}

impl Breaker {
    /// From now on, an open breaker waits for a probe before it turns half-open.
    pub fn probe_with_look_ups(&mut self) {
        self.probed = true;
    }

    /// What the next probe asks, when the breaker probes: a confirm once a call let
    /// through half-open went unanswered since it last closed, a look-up otherwise.
    pub fn next_probe(&self) -> Option<ProbeKind> {
        self.probed.then_some(match self.confirm_unanswered {
            true => ProbeKind::Confirm,
            false => ProbeKind::LookUp,
        })
    }

    /// A probe to send now, if one is due: the breaker is open, its wait is over and no
    /// probe is out.
    pub fn probe_due(&mut self, now_ms: u64) -> Option<ProbeTicket> {
        let kind = self.next_probe()?;
        let due = self.state == BreakerState::Open && !self.probe_out && self.waited(now_ms);
        self.probe_out |= due;
        due.then_some(ProbeTicket {
            generation: self.generation,
            kind,
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
