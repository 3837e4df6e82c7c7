//! The sliding windows one object keeps, by key, and which of them need storage.
//!
//! A window no longer than [`IN_MEMORY_UP_TO_MS`] lives in memory only. An object that
//! was idle long enough to be evicted had such a window empty anyway, so eviction loses
//! nothing; a restart of a busy object (a crash, a deploy) forgets at most one window's
//! admissions, so across a restart a window admits at most its limit plus what it had
//! admitted before the restart — and on the hot paths (the routes' one-second windows)
//! an admission costs no durable write. A longer window (a login's minutes, a refresh's
//! hour) is stored: every admission is one row, restored when the window is first used
//! after a restart, so its bound holds across restarts exactly.
//!
//! This is the decision and the bookkeeping; the caller does the storage it is told to
//! ([`Writes`]) and hands in what is stored when asked.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use crate::sliding_window::{Decision, Rate, SlidingWindow};

/// The longest window kept in memory only: an idle Durable Object is put out of memory
/// after about 10 s without a request at the soonest (Cloudflare's "Lifecycle of a
/// Durable Object"), and a window this short is empty by then.
pub const IN_MEMORY_UP_TO_MS: i64 = 10_000;

/// How many checks pass between two sweeps of the in-memory windows left empty.
const PRUNE_EVERY: u32 = 1024;

/// Whether a window of `rate` is kept in memory only.
pub fn in_memory(rate: Rate) -> bool {
    rate.window_ms <= IN_MEMORY_UP_TO_MS
}

/// The windows of one object.
#[derive(Debug, Default)]
pub struct RateWindows {
    kept: HashMap<String, Kept>,
    checks: u32,
}

#[derive(Debug)]
struct Kept {
    window: SlidingWindow,
    /// Rows written since the key's last sweep (stored windows only).
    unswept: u32,
}

/// One check's answer, and what the caller must write for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    pub decision: Decision,
    /// When the admission is recorded (the window's latest time); `None` when refused.
    pub at_ms: Option<i64>,
    pub writes: Writes,
}

/// The storage a check needs, in this order: both `None` for a window in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Writes {
    /// Delete the key's admissions at or before this time: they left its window.
    pub sweep_at_or_before: Option<i64>,
    /// Store one admission of the key at this time.
    pub insert_at: Option<i64>,
}

impl RateWindows {
    pub fn new() -> Self {
        Self::default()
    }

    /// Decides one request of `key` under `rate` at `now_ms`. `stored` is asked, once,
    /// for the key's stored admissions (oldest first) when a stored window is not in
    /// memory yet (or its rate changed); never for a window kept in memory.
    pub fn check<E>(
        &mut self,
        key: &str,
        rate: Rate,
        now_ms: i64,
        stored: impl FnOnce() -> Result<Vec<i64>, E>,
    ) -> Result<Checked, E> {
        self.prune_now_and_then(now_ms);
        let fresh = |stored: Vec<i64>| Kept {
            unswept: u32::try_from(stored.len()).unwrap_or(u32::MAX),
            window: SlidingWindow::with_admissions(rate, stored),
        };
        let kept = match self.kept.entry(key.to_owned()) {
            Entry::Occupied(entry) if entry.get().window.rate() == rate => entry.into_mut(),
            entry => {
                let kept = match in_memory(rate) {
                    true => fresh(Vec::new()),
                    false => fresh(stored()?),
                };
                match entry {
                    Entry::Occupied(mut entry) => {
                        entry.insert(kept);
                        entry.into_mut()
                    }
                    Entry::Vacant(entry) => entry.insert(kept),
                }
            }
        };
        let decision = kept.window.check(now_ms);
        let Decision::Admitted { .. } = decision else {
            return Ok(Checked {
                decision,
                at_ms: None,
                writes: Writes::default(),
            });
        };
        let at_ms = kept.window.latest().unwrap_or(now_ms);
        let mut writes = Writes::default();
        if !in_memory(rate) {
            if kept.unswept >= rate.limit {
                writes.sweep_at_or_before = Some(at_ms - rate.window_ms);
                kept.unswept = 0;
            }
            kept.unswept += 1;
            writes.insert_at = Some(at_ms);
        }
        Ok(Checked {
            decision,
            at_ms: Some(at_ms),
            writes,
        })
    }

    /// Takes back the admission of `key` at `at_ms`: a later stage refused the request.
    /// Returns whether storage may hold it (the window is stored, or not known here —
    /// a restart forgot it), so the caller deletes one stored row there too.
    pub fn release(&mut self, key: &str, at_ms: i64) -> bool {
        match self.kept.get_mut(key) {
            Some(kept) => {
                kept.window.release(at_ms);
                !in_memory(kept.window.rate())
            }
            None => true,
        }
    }

    /// Forgets the windows whose latest admission is at or before `cutoff_ms` — the
    /// caller deletes the stored admissions that old — so keys nobody uses any more
    /// leave memory too.
    pub fn forget_before(&mut self, cutoff_ms: i64) {
        self.kept
            .retain(|_, kept| kept.window.latest().is_some_and(|at| at > cutoff_ms));
    }

    /// Every [`PRUNE_EVERY`] checks, drops the in-memory windows that are empty at
    /// `now_ms`, so an object asked about many keys (a login limiter) stays small.
    fn prune_now_and_then(&mut self, now_ms: i64) {
        self.checks += 1;
        if self.checks < PRUNE_EVERY {
            return;
        }
        self.checks = 0;
        self.kept.retain(|_, kept| {
            let rate = kept.window.rate();
            !in_memory(rate)
                || kept
                    .window
                    .latest()
                    .is_some_and(|at| at > now_ms - rate.window_ms)
        });
    }
}

#[cfg(test)]
mod tests;
