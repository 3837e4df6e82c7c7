//! The guard's optional rate limiter on calls sent to the PG (`docs/design/guard.md`). Off by
//! default: a limit nobody told us would only refuse our own payments.
//!
//! - **Token bucket** keeps the average: a full bucket lets a burst of `limit` through
//!   at once, then refills at `limit` per window. Most PG limits are averages.
//! - **Sliding window** ([`CallWindow`]) keeps the limit in *every* interval of the
//!   window's length as the PG counts, on its own clock (seed 000 experiment 4: 52 in
//!   the worst second against 86 for the bucket), for a PG whose limit is instantaneous.
//!
//! Pure: the caller passes the time. A refusal consumes nothing.

use std::collections::VecDeque;

use rules::sliding_window::Rate;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimiterConfig {
    Off,
    TokenBucket(Rate),
    SlidingWindow(Rate),
}

impl LimiterConfig {
    /// The `LIMITER` name of this algorithm.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::TokenBucket(_) => "token-bucket",
            Self::SlidingWindow(_) => "sliding-window",
        }
    }

    pub fn rate(&self) -> Option<Rate> {
        match self {
            Self::Off => None,
            Self::TokenBucket(rate) | Self::SlidingWindow(rate) => Some(*rate),
        }
    }
}

#[derive(Debug, Clone)]
pub enum Limiter {
    Off,
    TokenBucket(TokenBucket),
    SlidingWindow(CallWindow),
}

impl Limiter {
    pub fn new(config: LimiterConfig) -> Self {
        match config {
            LimiterConfig::Off => Self::Off,
            LimiterConfig::TokenBucket(rate) => Self::TokenBucket(TokenBucket::new(rate)),
            LimiterConfig::SlidingWindow(rate) => Self::SlidingWindow(CallWindow::new(rate)),
        }
    }

    /// Takes one unit for a call to be sent at `now_ms`, or refuses it. Where
    /// [`Limiter::counts_until_finished`], every unit taken must be followed by exactly
    /// one [`Limiter::finished`], or the window keeps counting it.
    pub fn try_take(&mut self, now_ms: i64) -> bool {
        match self {
            Self::Off => true,
            Self::TokenBucket(bucket) => bucket.try_take(now_ms),
            Self::SlidingWindow(window) => window.try_take(now_ms),
        }
    }

    /// Whether a unit taken must be followed by [`Limiter::finished`]: the sliding
    /// window's; the bucket forgets a call once it is taken.
    pub fn counts_until_finished(&self) -> bool {
        matches!(self, Self::SlidingWindow(_))
    }

    /// A call that took a unit is over at `now_ms`: answered, timed out or abandoned.
    pub fn finished(&mut self, now_ms: i64) {
        if let Self::SlidingWindow(window) = self {
            window.finished(now_ms);
        }
    }
}

/// The sliding window as the PG sees it: at most `limit` calls in any `window_ms` of
/// the PG's clock, whatever the calls' transit times.
///
/// A window that records the moment a call is *sent* keeps the limit on our clock
/// only: two calls sent a window apart reach the PG closer together when the first
/// travels slower (experiment 4 measured 51 against 50 that way). So a call counts
/// from the moment it is taken **until a window after it finished**: while it is in
/// flight it always counts, and once over it counts until `finished + window`.
///
/// Why that holds on the PG's clock: take any `limit + 1` calls the PG received in
/// one interval `[a, a + W)`, and the one of them taken last, at `s` (its time is read
/// no later than it is sent). It reached the PG at or after `a` and before `a + W`
/// and was taken before it arrived, so `s < a + W`. Every other of them was taken
/// before it and finished no earlier than the PG saw it, at or after `a`, so at `s`
/// each was in flight or had finished after `s - W`: all `limit` of them counted, and
/// the last call was refused. Finishing times are kept at `finished ≥ now - W` rather
/// than `>`, so a millisecond's rounding of either clock cannot open a gap. A constant
/// offset between the clocks changes nothing. It assumes only that a call reaches the
/// PG before we stop waiting for it — one that arrives after our timeout is out of
/// anyone's reach.
///
/// The price is throughput when the PG is slow: a unit is held for the call's whole
/// duration plus a window, so calls of `d` leave room for `limit` per `d + W` — with
/// 3 s calls and 50 per second, 12.5 a second (the 50-call bulkhead alone already
/// allows only 16.7 a second then). With answers in milliseconds it costs about one
/// round trip per unit.
///
/// Memory is bounded by `limit`: calls in flight plus finished ones never exceed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallWindow {
    rate: Rate,
    in_flight: u32,
    /// When the finished calls still counting finished, oldest first.
    finished: VecDeque<i64>,
}

impl CallWindow {
    pub fn new(rate: Rate) -> Self {
        Self {
            rate,
            in_flight: 0,
            finished: VecDeque::with_capacity(rate.limit as usize),
        }
    }

    pub fn try_take(&mut self, now_ms: i64) -> bool {
        while self
            .finished
            .front()
            .is_some_and(|at| *at < now_ms - self.rate.window_ms)
        {
            self.finished.pop_front();
        }
        let counted = u64::from(self.in_flight) + self.finished.len() as u64;
        let admitted = counted < u64::from(self.rate.limit);
        if admitted {
            self.in_flight += 1;
        }
        admitted
    }

    /// One call taken earlier is over at `now_ms`. A time earlier than the last
    /// finish (a clock step back) is read as that last time, which counts it longer.
    pub fn finished(&mut self, now_ms: i64) {
        if self.in_flight == 0 {
            return;
        }
        self.in_flight -= 1;
        let at = self
            .finished
            .back()
            .map_or(now_ms, |last| now_ms.max(*last));
        self.finished.push_back(at);
    }
}

/// `limit` tokens, refilled continuously at `limit` per `window_ms`.
///
/// Kept in integer units of `1 / window_ms` token, so refill is exact: a call costs
/// `window_ms` units, each millisecond adds `limit` units, the bucket holds
/// `limit × window_ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBucket {
    rate: Rate,
    units: i128,
    refilled_at_ms: i64,
}

impl TokenBucket {
    pub fn new(rate: Rate) -> Self {
        Self {
            rate,
            units: Self::capacity(rate),
            refilled_at_ms: i64::MIN,
        }
    }

    fn capacity(rate: Rate) -> i128 {
        i128::from(rate.limit) * i128::from(rate.window_ms)
    }

    pub fn try_take(&mut self, now_ms: i64) -> bool {
        if self.refilled_at_ms != i64::MIN && now_ms > self.refilled_at_ms {
            let elapsed = i128::from(now_ms) - i128::from(self.refilled_at_ms);
            self.units =
                (self.units + elapsed * i128::from(self.rate.limit)).min(Self::capacity(self.rate));
        }
        self.refilled_at_ms = self.refilled_at_ms.max(now_ms);
        let cost = i128::from(self.rate.window_ms);
        let admitted = self.units >= cost;
        if admitted {
            self.units -= cost;
        }
        admitted
    }
}

#[cfg(test)]
mod tests;
