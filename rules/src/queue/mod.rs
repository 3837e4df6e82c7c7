//! The first-come queue of one event, with admission passes (`docs/design/queue.md`): 100,000+ people
//! for a 100-item drop, one Durable Object per event.
//!
//! Arrival order is a sequence number from a counter, never a timestamp — two arrivals
//! in the same millisecond still have an order. Entering is idempotent and polling is
//! read-only for the order: nobody is ever moved back.
//!
//! A position is *people ahead + 1*, exact, and the first `admit_limit` positions are
//! admitted. Each admitted user holds an admission pass with an expiry, issued the moment
//! they become admitted — on entering, or when someone ahead leaves and they move up,
//! whether they poll or not. So a user who walks away loses the slot when the pass
//! expires ([`EventQueue::expire`], from the object's alarm at
//! [`EventQueue::next_pass_expiry`]), and the next in line is admitted. A successful
//! payment is a [`EventQueue::leave`].
//!
//! The queue knows people by their **arrival number** only: who holds which number is the
//! shell's to look up (its storage has the index), so a million people take the line's
//! bitmap (`presence.rs`, about 190 KB) and the passes, not a million names. Every
//! operation is O(log n) in the people in line (plus the people it admits or removes):
//! positions come from a Fenwick tree (`fenwick.rs`) over the bitmap's words, never from
//! a scan. The queue does no I/O: each mutation returns the [`Change`]s for the shell to
//! persist, and [`EventQueue::restore`] rebuilds it from the stored bitmap and passes —
//! a few rows, not one per person. The rate and poll interval shown to waiting users are in
//! [`eta`]; the shell feeds the rate from the passes that `leave` and `expire` issue.
//!
//! An event whose stock is gone is **sold out** ([`EventQueue::mark_sold_out`], once the
//! origin has answered a confirm `SOLD_OUT`): from then on the line stops growing — a
//! newcomer's `enter` is turned away without a place — while everyone already in it
//! keeps their place, and every pass, issued or still to come, its usual rules. Being
//! sold out is one-way and stored like the line.
//!
//! **Paused payments** ([`EventQueue::pause`], `pause.rs`): while the payment provider cannot
//! take payments, nobody new gets a pass, and every live pass is extended by the pause, so
//! nobody's turn runs out because of an outage that is not theirs. Places never move.
//!
//! **Outflow** (`outflow.rs`): passes flow by count (`admit_limit`) and, where set, by rate
//! (`admit_per_minute`: at most that many issued in any minute); none while an operator
//! holds the room ([`EventQueue::hold`]) or once the drop is closed
//! ([`EventQueue::close`], which also turns newcomers away). New limits
//! ([`EventQueue::configure`]) never move anyone. A drop's **prequeue** is drawn in the
//! order `draw.rs` derives from a recorded seed; the shell enters its people in that
//! order at the opening.
//!
//! The shell should run `expire(now)` before answering, so that no answer shows a pass
//! that has already run out. An issued pass is honoured until it expires or its holder
//! leaves, even if a restore with a smaller `admit_limit` puts its holder outside the
//! admitted zone.

pub mod arrivals;
pub mod draw;
pub mod eta;
mod fenwick;
pub mod outflow;
mod pause;
mod presence;
pub mod snapshot;
#[cfg(test)]
mod tests;
pub mod ticket;

use std::collections::{BTreeSet, HashMap};

use outflow::RateWindow;
use presence::Presence;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueConfig {
    /// How many people at the front are admitted (may buy).
    pub admit_limit: u32,
    /// How long an admission pass lives.
    pub pass_ttl_ms: i64,
    /// At most this many passes issued in any minute, if set (`outflow.rs`).
    pub admit_per_minute: Option<u32>,
}

/// One person's place, as answered to a poll.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    pub seq: u64,
    /// People ahead + 1.
    pub position: u64,
    /// Within the first `admit_limit`, with a pass.
    pub admitted: bool,
    pub pass_expires_at: Option<i64>,
}

/// What changed, for the shell to persist (in order). People are named by their
/// arrival number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A newcomer took `seq`: the shell records who.
    Entered {
        seq: u64,
    },
    PassIssued {
        seq: u64,
        expires_at: i64,
    },
    Removed {
        seq: u64,
    },
    /// The event sold out (reported once).
    SoldOut,
    /// Payments are paused until `until` (epoch ms): no pass is issued before then.
    Paused {
        until: i64,
    },
    /// A live pass was extended by a pause.
    PassExtended {
        seq: u64,
        expires_at: i64,
    },
    /// An operator held the room (no new pass) or let it go on.
    Held {
        held: bool,
    },
    /// The drop was closed (reported once).
    Closed,
}

/// What the shell stored, for rebuilding the queue when the object starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stored {
    /// The line's bitmap: bit `i` of word `w` is arrival number `base + 64 w + i`.
    pub base: u64,
    pub words: Vec<u64>,
    /// The counter: the next arrival number.
    pub next_seq: u64,
    /// `(seq, expires_at)` of every pass.
    pub passes: Vec<(u64, i64)>,
    pub sold_out: bool,
    /// The end of the last pause (0: never paused).
    pub paused_until: i64,
    /// When the passes of the last minute were issued, for the rate.
    pub issued_at: Vec<i64>,
    pub held: bool,
    pub closed: bool,
}

/// The queue of one event.
#[derive(Debug, Clone)]
pub struct EventQueue {
    config: QueueConfig,
    next_seq: u64,
    line: Presence,
    /// `(expires_at, seq)` of every pass, earliest first.
    passes: BTreeSet<(i64, u64)>,
    /// The pass of each holder, by arrival number.
    pass_of: HashMap<u64, i64>,
    sold_out: bool,
    /// Payments are paused before this time (epoch ms; 0: never paused).
    paused_until: i64,
    /// Someone may stand in the admitted zone without a pass: issued when passes may
    /// flow (`outflow.rs`).
    passes_owed: bool,
    issued: RateWindow,
    /// An operator holds the room: no new pass.
    held: bool,
    closed: bool,
}

impl EventQueue {
    pub fn new(config: QueueConfig) -> Self {
        Self::restore(config, Stored::default())
    }

    /// Rebuilds from storage in O(words + passes). A pass of someone no longer in line is
    /// dropped, and the counter resumes above every arrival number in the line.
    pub fn restore(config: QueueConfig, stored: Stored) -> Self {
        let line = Presence::from_words(stored.base, stored.words);
        let highest = line.at(line.len());
        let next_seq = highest.map_or(stored.next_seq, |seq| stored.next_seq.max(seq + 1));
        let pass_of: HashMap<u64, i64> = stored
            .passes
            .into_iter()
            .filter(|(seq, _)| line.position(*seq).is_some())
            .collect();
        Self {
            config,
            next_seq,
            passes: pass_of.iter().map(|(seq, at)| (*at, *seq)).collect(),
            pass_of,
            line,
            sold_out: stored.sold_out,
            paused_until: stored.paused_until,
            // A smaller store than config (a larger `admit_limit`) may owe passes.
            passes_owed: true,
            issued: RateWindow::from_times(stored.issued_at),
            held: stored.held,
            closed: stored.closed,
        }
    }

    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    pub fn len(&self) -> usize {
        self.line.len() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The line's bitmap, as the shell stores it: its first arrival number, and the words.
    pub fn words(&self) -> (u64, &[u64]) {
        self.line.words()
    }

    /// Enters someone at `now_ms`: the holder of `held` (the arrival number the shell found
    /// for them) if they are still in line — idempotent, a poll — else a newcomer at the
    /// back, issued a pass if admitted. `None` when the event is sold out or the drop
    /// closed and they are not in line: turned away, and nothing changes.
    pub fn enter(&mut self, held: Option<u64>, now_ms: i64) -> (Option<Ticket>, Vec<Change>) {
        let mut changes = Vec::new();
        self.pay_owed_passes(now_ms, &mut changes);
        if let Some(ticket) = held.and_then(|seq| self.poll(seq, now_ms, &mut changes)) {
            return (Some(ticket), changes);
        }
        if self.sold_out || self.closed {
            return (None, changes);
        }
        let seq = self.next_seq;
        self.next_seq = seq.saturating_add(1);
        self.line.push(seq);
        changes.push(Change::Entered { seq });
        let position = self.line.len();
        let in_zone = position <= u64::from(self.config.admit_limit);
        if in_zone && !self.may_issue(now_ms) {
            self.passes_owed = true;
        } else if in_zone {
            self.issue_pass(seq, now_ms, &mut changes);
        }
        let pass = self.pass_of.get(&seq).copied();
        let ticket = Ticket {
            seq,
            position,
            admitted: pass.is_some(),
            pass_expires_at: pass,
        };
        (Some(ticket), changes)
    }

    /// The ticket of `seq` now, or `None` if not in the queue. A poll: issues the passes a
    /// pause that is over held back, and this one's pass if admitted without one (after a
    /// config change such as a larger `admit_limit`).
    pub fn status(&mut self, seq: u64, now_ms: i64) -> (Option<Ticket>, Vec<Change>) {
        let mut changes = Vec::new();
        self.pay_owed_passes(now_ms, &mut changes);
        let ticket = self.poll(seq, now_ms, &mut changes);
        (ticket, changes)
    }

    /// Removes `seq`; admits whoever moves into the first `admit_limit` (passes at
    /// `now_ms`). No removal if absent.
    pub fn leave(&mut self, seq: u64, now_ms: i64) -> Vec<Change> {
        let mut changes = Vec::new();
        self.pay_owed_passes(now_ms, &mut changes);
        let Some(position) = self.line.remove(seq) else {
            return changes;
        };
        if let Some(expires_at) = self.pass_of.remove(&seq) {
            self.passes.remove(&(expires_at, seq));
        }
        changes.push(Change::Removed { seq });
        if position <= u64::from(self.config.admit_limit) {
            self.refill(1, now_ms, &mut changes);
        }
        changes
    }

    /// Removes every admitted person whose pass expired at or before `now_ms` (earliest
    /// first), then admits the next (passes at `now_ms`, in line order) — and, once a
    /// pause is over, everyone it kept waiting in the admitted zone.
    pub fn expire(&mut self, now_ms: i64) -> Vec<Change> {
        let mut changes = Vec::new();
        self.pay_owed_passes(now_ms, &mut changes);
        let mut removed = 0;
        while let Some(&(expires_at, seq)) = self.passes.first() {
            if expires_at > now_ms {
                break;
            }
            self.passes.pop_first();
            self.pass_of.remove(&seq);
            if self.line.remove(seq).is_some() {
                changes.push(Change::Removed { seq });
                removed += 1;
            }
        }
        self.refill(removed, now_ms, &mut changes);
        changes
    }

    /// Marks the event sold out: [`Change::SoldOut`] the first time, nothing after.
    pub fn mark_sold_out(&mut self) -> Vec<Change> {
        if self.sold_out {
            return Vec::new();
        }
        self.sold_out = true;
        vec![Change::SoldOut]
    }

    pub fn is_sold_out(&self) -> bool {
        self.sold_out
    }

    /// Whether `seq` holds a live pass at `now_ms` (the payment gate asks this).
    pub fn has_live_pass(&self, seq: u64, now_ms: i64) -> bool {
        self.pass_of
            .get(&seq)
            .is_some_and(|expires_at| *expires_at > now_ms)
    }

    /// The earliest pass expiry, for the object's alarm.
    pub fn next_pass_expiry(&self) -> Option<i64> {
        self.passes.first().map(|(expires_at, _)| *expires_at)
    }

    /// When the object should next run [`EventQueue::expire`] after `now_ms`: the
    /// earliest pass expiry, or when passes owed may flow again (a pause's end, the rate
    /// window's), whichever is first.
    pub fn next_wake(&self, now_ms: i64) -> Option<i64> {
        let resume = self
            .passes_owed
            .then(|| self.flows_again_at(now_ms))
            .flatten();
        match (self.next_pass_expiry(), resume) {
            (Some(expiry), Some(resume)) => Some(expiry.min(resume)),
            (expiry, resume) => expiry.or(resume),
        }
    }

    fn poll(&mut self, seq: u64, now_ms: i64, changes: &mut Vec<Change>) -> Option<Ticket> {
        let position = self.line.position(seq)?;
        let in_zone = position <= u64::from(self.config.admit_limit);
        if in_zone && !self.pass_of.contains_key(&seq) {
            if self.may_issue(now_ms) {
                self.issue_pass(seq, now_ms, changes);
            } else {
                self.passes_owed = true;
            }
        }
        let pass = self.pass_of.get(&seq).copied();
        Some(Ticket {
            seq,
            position,
            admitted: in_zone && pass.is_some(),
            pass_expires_at: pass,
        })
    }

    /// After `removed` people left: passes for whoever moved into the admitted zone — or,
    /// while passes may not flow, a note that they are owed one.
    /// Once they may, the passes held back are paid here, front first.
    fn refill(&mut self, removed: u64, now_ms: i64, changes: &mut Vec<Change>) {
        if !self.may_issue(now_ms) {
            self.passes_owed |= removed > 0;
        } else if self.passes_owed {
            self.pay_owed_passes(now_ms, changes);
        } else if removed > 0 {
            self.admit_moved_up(removed, now_ms, changes);
        }
    }

    /// After `removed` people left, the only ones who can have moved into the admitted
    /// zone stand in its last `removed` positions: issues them passes, front first.
    fn admit_moved_up(&mut self, removed: u64, now_ms: i64, changes: &mut Vec<Change>) {
        let limit = u64::from(self.config.admit_limit);
        let first = limit.saturating_sub(removed) + 1;
        self.admit_positions(first, now_ms, changes);
    }

    /// Passes for everyone without one from `first` to the end of the admitted zone, as
    /// far as the outflow allows; the rest are owed theirs.
    fn admit_positions(&mut self, first: u64, now_ms: i64, changes: &mut Vec<Change>) {
        let last = u64::from(self.config.admit_limit).min(self.line.len());
        for position in first..=last {
            let Some(seq) = self.line.at(position) else {
                break;
            };
            if self.pass_of.contains_key(&seq) {
                continue;
            }
            if !self.may_issue(now_ms) {
                self.passes_owed = true;
                break;
            }
            self.issue_pass(seq, now_ms, changes);
        }
    }

    fn issue_pass(&mut self, seq: u64, now_ms: i64, changes: &mut Vec<Change>) {
        self.issued.record(now_ms);
        let expires_at = now_ms.saturating_add(self.config.pass_ttl_ms);
        self.pass_of.insert(seq, expires_at);
        self.passes.insert((expires_at, seq));
        changes.push(Change::PassIssued { seq, expires_at });
    }
}
