//! Paused payments: the payment provider cannot take payments for a while (the origin's
//! breaker is open), so the queue holds.
//!
//! - **No new pass** is issued before the pause ends: whoever reaches the admitted zone
//!   meanwhile waits there, keeping their place, and gets a pass when it ends — at the
//!   alarm the shell sets at [`EventQueue::next_wake`], whether anyone polls or not.
//! - **Every live pass is extended** by the time the pause adds, the moment it is added,
//!   so a pass ends as long after the pause as it would have ended after its start:
//!   nobody's turn runs out during an outage. A pause that is extended extends them by
//!   the difference only; a pause already covered changes nothing.
//!
//! The shell refuses payments while [`EventQueue::is_paused`]; live passes stay live.

use super::{Change, EventQueue};

impl EventQueue {
    /// Pauses payments from `now_ms` until `until_ms` (or keeps a longer pause).
    pub fn pause(&mut self, now_ms: i64, until_ms: i64) -> Vec<Change> {
        let mut changes = self.expire(now_ms);
        let covered_until = self.paused_until.max(now_ms);
        if until_ms <= covered_until {
            return changes;
        }
        let added = until_ms - covered_until;
        self.paused_until = until_ms;
        changes.push(Change::Paused { until: until_ms });
        let passes = std::mem::take(&mut self.passes);
        for (expires_at, seq) in passes {
            let extended = expires_at.saturating_add(added);
            self.passes.insert((extended, seq));
            self.pass_of.insert(seq, extended);
            changes.push(Change::PassExtended {
                seq,
                expires_at: extended,
            });
        }
        changes
    }

    /// Whether payments are paused at `now_ms`.
    pub fn is_paused(&self, now_ms: i64) -> bool {
        now_ms < self.paused_until
    }

    /// When the pause in force at `now_ms` ends, if one is.
    pub fn paused_until(&self, now_ms: i64) -> Option<i64> {
        self.is_paused(now_ms).then_some(self.paused_until)
    }
}
