//! The PG's concurrency limit as a pure state machine: how many calls may be out at once,
//! learned from what the PG shows while healthy. No clock, no locks, no I/O; the caller
//! passes the time (milliseconds from any fixed origin) and reports every call's end.
//!
//! Why a limit: a call sent to a PG that has stalled is an UNKNOWN payment, and nothing
//! can tell a stall from a slow call before the breaker's slow-call threshold. What can be
//! bounded is how many calls are out when it happens. By Little's law a healthy PG at 10
//! calls/s and 150 ms has 1.5 in flight; a stalled one gains 10 a second.
//!
//! The algorithm (`docs/design/guard.md`, "The concurrency limit"):
//!
//! - **Little's law on a one-second window.** The limit a healthy PG needs is the calls
//!   offered per second times its mean latency, with [`HEADROOM`] for jitter; the latency is
//!   the mean of the calls that came back healthy (no failure, faster than
//!   `healthy_ms`, the breaker's slow-call threshold), over the window, or the latest
//!   such mean when the window has none.
//! - **Raised only by healthy answers.** A call that comes back healthy raises the limit
//!   to what Little's law asks now, and by one more if every slot was taken and the
//!   call had itself waited for its slot (so a burst the window has not yet measured
//!   doubles the limit every round trip, as TCP's slow start does). Nothing else raises
//!   it: a stalled PG answers nothing, so a wave that arrives with the stall finds the
//!   limit where the healthy PG left it — and the answer of a call sent at once just
//!   before the stall, while the calls sent after it hold every slot, adds no slot.
//! - **At the floor as soon as a call is overdue.** The limit knows when each call took
//!   its slot; one still out at `healthy_ms` is already known to be slow, and from that
//!   moment until it ends the limit stands at its floor and no answer raises it — unless a
//!   call that took its slot after it comes back healthy: a PG that answers the calls sent
//!   after it is working, and the overdue one is a straggler. A stalled PG answers nothing
//!   sent after the stall began, so a stall is held at the floor a threshold in, not at
//!   the first timeout. An unhealthy answer (a failure or a slow call) sets it to the floor
//!   too.
//! - **Back to what the busiest window needed** once no call has waited for a window:
//!   the limit falls to Little's figure for the most calls offered over one window in the
//!   last [`PEAK_WINDOWS`], so the headroom a burst earned is not left open for long, and
//!   a drop's room, which lets its passes out in waves a poll apart (2 s at least), does
//!   not make each wave wait for slow start again. A stall within those windows finds
//!   that headroom open: the cost, bounded by the wave.
//!
//! Calls past the limit wait, first come first served, at most `ceiling` of them; the
//! caller bounds their wait. `fixed:N` keeps the limit at N, and the window unused.

mod window;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use window::Window;

/// The room left above what Little's law says a healthy PG needs.
pub const HEADROOM: u64 = 2;

/// How long the window is; a burst's earned headroom lasts this long past its last wait.
pub const WINDOW_MS: u64 = 1_000;

/// How many windows back the busiest is remembered: a few of a room's polls (2 s apart at
/// the least), so its waves find the limit the last one raised.
pub const PEAK_WINDOWS: u64 = 5;

/// How the limit is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitMode {
    /// No limit: every call is sent at once.
    Off,
    /// Always this many (at least 1).
    Fixed(u32),
    /// Learned, between `floor` and `ceiling` (1 ≤ floor ≤ ceiling).
    Adaptive { floor: u32, ceiling: u32 },
}

impl LimitMode {
    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Fixed(_) => "fixed",
            Self::Adaptive { .. } => "adaptive",
        }
    }

    /// The limit's bounds, `None` when off.
    pub fn bounds(self) -> Option<(u32, u32)> {
        match self {
            Self::Off => None,
            Self::Fixed(n) => Some((n, n)),
            Self::Adaptive { floor, ceiling } => Some((floor, ceiling)),
        }
    }
}

/// A slot held under the limit, from [`Admission::Now`] or [`ConcurrencyLimit::hand_over`]
/// until [`ConcurrencyLimit::finish`] or [`ConcurrencyLimit::release`]. Tickets are given
/// in the order slots are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ticket(u64);

/// What a call arriving is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// A slot is its: send it.
    Now(Ticket),
    /// Every slot is taken: it waits, and [`ConcurrencyLimit::hand_over`] gives it one.
    Wait,
    /// Every slot is taken and the line is full: refused, not sent.
    Refused,
}

/// How one sent call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub latency_ms: u64,
    /// A timeout, a 5xx or a connection error: the PG not working.
    pub failed: bool,
}

/// A call holding a slot: its ticket, and when it took the slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    ticket: Ticket,
    since_ms: u64,
    /// Whether the call waited in the line for this slot.
    waited: bool,
}

/// The limit and the calls it governs.
#[derive(Debug, Clone)]
pub struct ConcurrencyLimit {
    floor: u32,
    ceiling: u32,
    adaptive: bool,
    /// Below it, an answer that did not fail is healthy; a call out this long is overdue.
    healthy_ms: u64,
    limit: u32,
    /// The calls holding a slot, in the order they took it.
    held: VecDeque<Held>,
    next_ticket: u64,
    /// The latest-taken slot whose call came back healthy: a call overdue that took its
    /// slot before it is a straggler, not a stall.
    answered: Option<Ticket>,
    waiting: u32,
    window: Window,
    /// When a call last had to wait.
    waited_at_ms: Option<u64>,
}

impl ConcurrencyLimit {
    /// `None` when `mode` is [`LimitMode::Off`]. An adaptive limit starts at its floor.
    pub fn new(mode: LimitMode, healthy_ms: u64) -> Option<Self> {
        let (floor, ceiling) = mode.bounds()?;
        let floor = floor.max(1);
        Some(Self {
            floor,
            ceiling: ceiling.max(floor),
            adaptive: matches!(mode, LimitMode::Adaptive { .. }),
            healthy_ms,
            limit: floor,
            held: VecDeque::new(),
            next_ticket: 0,
            answered: None,
            waiting: 0,
            window: Window::default(),
            waited_at_ms: None,
        })
    }

    /// A call arrives: sent at once, or made to wait, or refused when the line is full.
    /// Every call waits while others do, so the line is first come, first served.
    pub fn arrive(&mut self, now_ms: u64) -> Admission {
        self.window.arrived(now_ms);
        self.settle(now_ms);
        if self.waiting == 0 && self.in_flight() < self.limit {
            return Admission::Now(self.hold(now_ms, false));
        }
        self.waited_at_ms = Some(now_ms);
        if self.waiting >= self.ceiling {
            return Admission::Refused;
        }
        self.waiting += 1;
        Admission::Wait
    }

    /// The first call waiting, if it may be sent now: the slot it holds.
    pub fn hand_over(&mut self, now_ms: u64) -> Option<Ticket> {
        self.settle(now_ms);
        let free = self.waiting > 0 && self.in_flight() < self.limit;
        free.then(|| {
            self.waiting -= 1;
            self.hold(now_ms, true)
        })
    }

    /// A waiting call leaves the line without a slot: its wait ran out, or it was refused.
    pub fn give_up(&mut self) {
        self.waiting = self.waiting.saturating_sub(1);
    }

    /// A call holding a slot ends without being sent, or without an answer to learn from.
    pub fn release(&mut self, ticket: Ticket) {
        self.unhold(ticket);
    }

    /// A sent call is over: its slot is free, and the limit learns from how it went.
    pub fn finish(&mut self, ticket: Ticket, now_ms: u64, sample: Sample) {
        let full = self.waiting > 0 || self.in_flight() >= self.limit;
        let held = self.unhold(ticket);
        // Slow start's step is earned by a call that had to wait for its slot: one sent
        // at once, answered while the calls sent after it hold every slot, may be the
        // last the PG answered before a stall that holds them.
        let earned = full && held.is_some_and(|held| held.waited);
        if !self.adaptive {
            return;
        }
        let healthy = !sample.failed && sample.latency_ms < self.healthy_ms;
        if !healthy {
            self.limit = self.floor;
            return;
        }
        if held.is_some() {
            self.answered = self.answered.max(Some(ticket));
        }
        self.window.healthy(now_ms, sample.latency_ms);
        // A call sent after this one is still out past the threshold: this answer was
        // the PG's before the stall, and says nothing of it.
        if self.overdue(now_ms) {
            self.limit = self.floor;
            return;
        }
        let raised = self.limit.saturating_add(u32::from(earned));
        self.limit = raised.max(self.needed(now_ms)).min(self.ceiling);
    }

    /// A slot taken at `now_ms`, by a call that `waited` for it or not.
    fn hold(&mut self, now_ms: u64, waited: bool) -> Ticket {
        let ticket = Ticket(self.next_ticket);
        self.next_ticket += 1;
        self.held.push_back(Held {
            ticket,
            since_ms: now_ms,
            waited,
        });
        ticket
    }

    /// Frees `ticket`'s slot: the slot, if it held one.
    fn unhold(&mut self, ticket: Ticket) -> Option<Held> {
        let index = self.held.binary_search_by_key(&ticket, |held| held.ticket);
        index.ok().and_then(|index| self.held.remove(index))
    }

    /// Whether a call is out past `healthy_ms` that took its slot after the latest call
    /// that came back healthy.
    fn overdue(&self, now_ms: u64) -> bool {
        let Some(slow_since) = now_ms.checked_sub(self.healthy_ms) else {
            return false;
        };
        self.held
            .iter()
            .filter(|held| self.answered.is_none_or(|answered| held.ticket > answered))
            .any(|held| held.since_ms <= slow_since)
    }

    /// Holds the limit at the floor while a call is overdue; otherwise lowers a limit a
    /// burst raised back to what the busiest of the last [`PEAK_WINDOWS`] needed, once no
    /// call has waited for a window.
    fn settle(&mut self, now_ms: u64) {
        if self.adaptive && self.overdue(now_ms) {
            self.limit = self.floor;
            return;
        }
        let quiet = self
            .waited_at_ms
            .is_none_or(|at| now_ms.saturating_sub(at) >= WINDOW_MS);
        if self.adaptive && quiet {
            let busiest = self.little(now_ms, self.window.peak_offered(now_ms));
            self.limit = self.limit.min(busiest.max(self.floor));
        }
    }

    /// Little's law with headroom for the calls offered over the window now.
    fn needed(&self, now_ms: u64) -> u32 {
        self.little(now_ms, self.window.offered(now_ms))
    }

    /// Little's law with headroom: `offered` calls a second × mean healthy latency × 2,
    /// within the bounds.
    fn little(&self, now_ms: u64, offered: u64) -> u32 {
        let Some(latency_ms) = self.window.latency_ms(now_ms) else {
            return self.floor;
        };
        let needed = (HEADROOM * offered * latency_ms).div_ceil(WINDOW_MS);
        u32::try_from(needed)
            .unwrap_or(u32::MAX)
            .clamp(self.floor, self.ceiling)
    }

    /// The limit as of `now_ms`.
    pub fn limit(&mut self, now_ms: u64) -> u32 {
        self.settle(now_ms);
        self.limit
    }

    /// The calls holding a slot.
    pub fn in_flight(&self) -> u32 {
        self.held.len() as u32
    }

    pub fn waiting(&self) -> u32 {
        self.waiting
    }
}
