//! The Durable Object itself: the route's (or shard's) sliding windows — in memory
//! when short, as the routes' are, in its SQLite too when longer (`crate::rate_windows`).
//!
//! Storage stays bounded: while it holds stored admissions an alarm sweeps them, forgetting
//! every admission older than the longest window this object has been asked about (a
//! day when it has not been asked since it started), so a key nobody uses any more — a
//! login window of a name tried once — leaves storage within a window or so.

use std::cell::Cell;

use rules::rate_limit::MAX_WINDOW_MS;
use worker::{durable_object, DurableObject, Env, Request, Response, Result, State};

use crate::alarm::Alarm;
use crate::clock;
use crate::durable_call::{read_call, reply};
use crate::rate_windows::{RateWindows, WindowCheck};

/// The shortest time between two sweeps: a route's one-second windows need no sweep a
/// second (their own admissions sweep them); what a sweep is for lingers longer.
const SWEEP_AT_MOST_EVERY_MS: i64 = 60_000;

#[durable_object]
pub struct GlobalLimiter {
    state: State,
    /// Its alarm's time, kept in memory.
    alarm: Alarm,
    windows: RateWindows,
    /// The longest window asked about since the object started; 0: none yet.
    longest_window_ms: Cell<i64>,
    /// A sweep is set.
    swept_soon: Cell<bool>,
}

impl DurableObject for GlobalLimiter {
    fn new(state: State, _env: Env) -> Self {
        let windows = RateWindows::new(state.storage().sql());
        Self {
            state,
            alarm: Alarm::new(),
            windows,
            longest_window_ms: Cell::new(0),
            swept_soon: Cell::new(false),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let check: WindowCheck = read_call(&req)?;
        let now_ms = clock::now_ms();
        let answer = self.windows.check(&check, now_ms)?;
        self.longest_window_ms
            .set(self.longest_window_ms.get().max(check.window_ms));
        if check.is_stored() && !self.swept_soon.get() {
            self.alarm
                .no_later_than(&self.state.storage(), now_ms + self.sweep_every())
                .await?;
            self.swept_soon.set(true);
        }
        reply(&answer)
    }

    async fn alarm(&self) -> Result<Response> {
        self.alarm.fired();
        let now_ms = clock::now_ms();
        let kept_for = match self.longest_window_ms.get() {
            0 => MAX_WINDOW_MS,
            longest => longest,
        };
        self.windows.forget_before(now_ms - kept_for)?;
        let more = !self.windows.is_empty()?;
        if more {
            self.alarm
                .no_later_than(&self.state.storage(), now_ms + self.sweep_every())
                .await?;
        }
        self.swept_soon.set(more);
        Response::empty()
    }
}

impl GlobalLimiter {
    fn sweep_every(&self) -> i64 {
        self.longest_window_ms.get().max(SWEEP_AT_MOST_EVERY_MS)
    }
}
