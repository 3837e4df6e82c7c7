//! Outflow: when a pass may be issued. Passes leave the room by count — at most
//! `admit_limit` live at once (the admitted zone) — and, where the operator set one, by
//! rate: at most `admit_per_minute` issued in any 60 s. None is issued while payments are
//! paused (`pause.rs`), while an operator holds the room (paused, until resumed), or once
//! the drop is closed. Whoever reaches the zone meanwhile keeps their place and is owed a
//! pass, paid front first once passes may flow again — at [`EventQueue::next_wake`] when
//! that is a time (a pause's end, the rate window's), at the next call after a resume.
//!
//! A closed drop also turns newcomers away, as a sold-out one does; live passes keep
//! working until they run out, in every state.

use std::collections::VecDeque;

use super::{Change, EventQueue, QueueConfig};

/// The rate window.
pub const MINUTE_MS: i64 = 60_000;

/// Passes issued within the last minute, for the rate: their times, oldest first.
#[derive(Debug, Clone, Default)]
pub(super) struct RateWindow {
    issued: VecDeque<i64>,
}

impl RateWindow {
    pub(super) fn from_times(mut times: Vec<i64>) -> Self {
        times.sort_unstable();
        Self {
            issued: times.into(),
        }
    }

    fn forget_before(&mut self, now_ms: i64) {
        while self
            .issued
            .front()
            .is_some_and(|at| *at <= now_ms - MINUTE_MS)
        {
            self.issued.pop_front();
        }
    }

    /// Issued in the minute up to `now_ms`.
    fn count(&self, now_ms: i64) -> usize {
        self.issued
            .iter()
            .filter(|at| **at > now_ms - MINUTE_MS)
            .count()
    }

    pub(super) fn record(&mut self, now_ms: i64) {
        self.forget_before(now_ms);
        self.issued.push_back(now_ms);
    }

    /// When the window has room again under `per_minute`, if it is full at `now_ms`.
    fn full_until(&self, per_minute: u32, now_ms: i64) -> Option<i64> {
        let live: Vec<i64> = self
            .issued
            .iter()
            .copied()
            .filter(|at| *at > now_ms - MINUTE_MS)
            .collect();
        let over = live.len().checked_sub(per_minute as usize)?;
        live.get(over).map(|at| at + MINUTE_MS)
    }
}

impl EventQueue {
    /// Whether a pass may be issued at `now_ms`.
    pub(super) fn may_issue(&self, now_ms: i64) -> bool {
        !self.held && !self.closed && !self.is_paused(now_ms) && self.rate_free_at(now_ms).is_none()
    }

    /// Issues the passes held back (by a pause, the rate, the operator), to everyone in
    /// the admitted zone without one, front first — once passes may flow.
    pub(super) fn pay_owed_passes(&mut self, now_ms: i64, changes: &mut Vec<Change>) {
        if !self.passes_owed || !self.may_issue(now_ms) {
            return;
        }
        self.passes_owed = false;
        self.admit_positions(1, now_ms, changes);
    }

    /// When the rate window lets a pass out again, if it is full at `now_ms`.
    fn rate_free_at(&self, now_ms: i64) -> Option<i64> {
        let per_minute = self.config.admit_per_minute?;
        self.issued.full_until(per_minute, now_ms)
    }

    /// When passes may flow again, if they are held back by a time (a pause, the rate)
    /// rather than by the operator or a closed drop.
    pub(super) fn flows_again_at(&self, now_ms: i64) -> Option<i64> {
        if self.held || self.closed {
            return None;
        }
        let paused = self.paused_until(now_ms);
        let rate = self.rate_free_at(now_ms);
        match (paused, rate) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// Passes live at `now_ms`.
    pub fn passes_live(&self, now_ms: i64) -> usize {
        self.pass_of.values().filter(|at| **at > now_ms).count()
    }

    /// Passes issued in the minute up to `now_ms`.
    pub fn issued_last_minute(&self, now_ms: i64) -> usize {
        self.issued.count(now_ms)
    }

    /// The operator holds the room (`true`: no new pass) or lets it go on (`false`: the
    /// passes owed meanwhile are paid at once, as far as the limits allow).
    pub fn hold(&mut self, held: bool, now_ms: i64) -> Vec<Change> {
        let mut changes = self.expire(now_ms);
        if self.held == held {
            return changes;
        }
        self.held = held;
        self.passes_owed = true;
        changes.push(Change::Held { held });
        self.pay_owed_passes(now_ms, &mut changes);
        changes
    }

    pub fn is_held(&self) -> bool {
        self.held
    }

    /// Closes the drop: no newcomer, no new pass. One-way.
    pub fn close(&mut self) -> Vec<Change> {
        if self.closed {
            return Vec::new();
        }
        self.closed = true;
        vec![Change::Closed]
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// New limits, from `now_ms` on: nobody moves; a larger zone or rate admits at once.
    pub fn configure(&mut self, config: QueueConfig, now_ms: i64) -> Vec<Change> {
        self.config = config;
        self.passes_owed = true;
        let mut changes = Vec::new();
        self.pay_owed_passes(now_ms, &mut changes);
        changes
    }

    pub fn config(&self) -> QueueConfig {
        self.config
    }
}
