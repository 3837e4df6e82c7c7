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
//!   to what Little's law asks now, and by one more if every slot was taken (so a burst
//!   the window has not yet measured doubles the limit every round trip, as TCP's slow
//!   start does). Nothing else raises it: a stalled PG answers nothing, so a wave that
//!   arrives with the stall finds the limit where the healthy PG left it.
//! - **Halved by an unhealthy answer** (a failure or a slow call), never below the floor.
//! - **Back to what is needed** once no call has waited for a window: the limit falls to
//!   Little's figure, so the headroom a burst earned is not left open for the next stall.
//!
//! Calls past the limit wait, first come first served, at most `ceiling` of them; the
//! caller bounds their wait. `fixed:N` keeps the limit at N, and the window unused.

mod window;

#[cfg(test)]
mod tests;

use window::Window;

/// The room left above what Little's law says a healthy PG needs.
pub const HEADROOM: u64 = 2;

/// How long the window is; a burst's earned headroom lasts this long past its last wait.
pub const WINDOW_MS: u64 = 1_000;

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

/// What a call arriving is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// A slot is its: send it.
    Now,
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

/// The limit and the calls it governs.
#[derive(Debug, Clone)]
pub struct ConcurrencyLimit {
    floor: u32,
    ceiling: u32,
    adaptive: bool,
    /// Below it, an answer that did not fail is healthy.
    healthy_ms: u64,
    limit: u32,
    in_flight: u32,
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
            in_flight: 0,
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
        if self.waiting == 0 && self.in_flight < self.limit {
            self.in_flight += 1;
            return Admission::Now;
        }
        self.waited_at_ms = Some(now_ms);
        if self.waiting >= self.ceiling {
            return Admission::Refused;
        }
        self.waiting += 1;
        Admission::Wait
    }

    /// Whether the first call waiting may be sent now; if so, it holds a slot.
    pub fn hand_over(&mut self) -> bool {
        let free = self.waiting > 0 && self.in_flight < self.limit;
        if free {
            self.waiting -= 1;
            self.in_flight += 1;
        }
        free
    }

    /// A waiting call leaves the line without a slot: its wait ran out, or it was refused.
    pub fn give_up(&mut self) {
        self.waiting = self.waiting.saturating_sub(1);
    }

    /// A call holding a slot ends without being sent, or without an answer to learn from.
    pub fn release(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// A sent call is over: its slot is free, and the limit learns from how it went.
    pub fn finish(&mut self, now_ms: u64, sample: Sample) {
        let full = self.waiting > 0 || self.in_flight >= self.limit;
        self.release();
        if !self.adaptive {
            return;
        }
        let healthy = !sample.failed && sample.latency_ms < self.healthy_ms;
        if !healthy {
            self.limit = (self.limit / 2).max(self.floor);
            return;
        }
        self.window.healthy(now_ms, sample.latency_ms);
        let raised = self.limit.saturating_add(u32::from(full));
        self.limit = raised.max(self.needed(now_ms)).min(self.ceiling);
    }

    /// Lowers a limit a burst raised back to what is needed, once no call has waited
    /// for a window.
    fn settle(&mut self, now_ms: u64) {
        let quiet = self
            .waited_at_ms
            .is_none_or(|at| now_ms.saturating_sub(at) >= WINDOW_MS);
        if self.adaptive && quiet {
            self.limit = self.limit.min(self.needed(now_ms).max(self.floor));
        }
    }

    /// Little's law with headroom: calls offered a second × mean healthy latency × 2,
    /// within the bounds.
    fn needed(&self, now_ms: u64) -> u32 {
        let Some(latency_ms) = self.window.latency_ms(now_ms) else {
            return self.floor;
        };
        let offered = self.window.offered(now_ms);
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

    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    pub fn waiting(&self) -> u32 {
        self.waiting
    }
}
