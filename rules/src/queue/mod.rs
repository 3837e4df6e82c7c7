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
//! Every operation is O(log n) in the people in line (plus the people it admits or
//! removes): positions come from a Fenwick tree (`fenwick.rs`) over the arrival slots
//! (`line.rs`), never from a scan. The queue does no I/O: each mutation returns the
//! [`Change`]s for the shell to persist, and [`EventQueue::restore`] rebuilds the index
//! from what was stored. The rate and poll interval shown to waiting users are in
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
//! The shell should run `expire(now)` before answering, so that no answer shows a pass
//! that has already run out. An issued pass is honoured until it expires or its holder
//! leaves, even if a restore with a smaller `admit_limit` puts its holder outside the
//! admitted zone.

pub mod eta;
mod fenwick;
mod line;
mod pause;
pub mod snapshot;
#[cfg(test)]
mod tests;
pub mod ticket;

use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap};

use line::Line;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueConfig {
    /// How many people at the front are admitted (may buy).
    pub admit_limit: u32,
    /// How long an admission pass lives.
    pub pass_ttl_ms: i64,
}

/// One user's place, as answered to a poll.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    pub seq: u64,
    /// People ahead + 1.
    pub position: u64,
    /// Within the first `admit_limit`.
    pub admitted: bool,
    pub pass_expires_at: Option<i64>,
}

/// What changed, for the shell to persist (in order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Entered {
        user: String,
        seq: u64,
    },
    PassIssued {
        user: String,
        expires_at: i64,
    },
    Removed {
        user: String,
    },
    /// The event sold out (reported once).
    SoldOut,
    /// Payments are paused until `until` (epoch ms): no pass is issued before then.
    Paused {
        until: i64,
    },
    /// A live pass was extended by a pause.
    PassExtended {
        user: String,
        expires_at: i64,
    },
}

/// A stored entry, for rebuilding the index when the object starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEntry {
    pub seq: u64,
    pub user: String,
    pub pass_expires_at: Option<i64>,
}

/// The queue of one event.
#[derive(Debug, Clone)]
pub struct EventQueue {
    config: QueueConfig,
    next_seq: u64,
    members: HashMap<String, Member>,
    line: Line,
    /// `(expires_at, seq)` of every pass, earliest first.
    passes: BTreeSet<(i64, u64)>,
    sold_out: bool,
    /// Payments are paused before this time (epoch ms; 0: never paused).
    paused_until: i64,
    /// Someone may stand in the admitted zone without a pass: issued when not paused.
    passes_owed: bool,
}

#[derive(Debug, Clone, Copy)]
struct Member {
    seq: u64,
    pass: Option<i64>,
}

impl EventQueue {
    pub fn new(config: QueueConfig) -> Self {
        Self::restore(config, Vec::new(), 0, false)
    }

    /// Rebuilds from storage (entries in any order; `next_seq` = the counter; whether
    /// [`Change::SoldOut`] was stored), in O(n log n) for the sort and O(n) for the
    /// index. A corrupt store cannot break the order: a repeated user keeps their
    /// earliest entry, a repeated sequence number its first user by name, and the
    /// counter resumes above every stored one.
    pub fn restore(
        config: QueueConfig,
        mut entries: Vec<StoredEntry>,
        next_seq: u64,
        sold_out: bool,
    ) -> Self {
        entries.sort_unstable_by(|a, b| a.seq.cmp(&b.seq).then_with(|| a.user.cmp(&b.user)));
        let next_seq = entries.last().map_or(next_seq, |highest| {
            next_seq.max(highest.seq.saturating_add(1))
        });
        let mut members = HashMap::with_capacity(entries.len());
        let mut passes = BTreeSet::new();
        let mut kept = Vec::with_capacity(entries.len());
        for entry in entries {
            if kept.last().is_some_and(|(seq, _)| *seq == entry.seq) {
                continue;
            }
            let Entry::Vacant(member) = members.entry(entry.user.clone()) else {
                continue;
            };
            member.insert(Member {
                seq: entry.seq,
                pass: entry.pass_expires_at,
            });
            if let Some(expires_at) = entry.pass_expires_at {
                passes.insert((expires_at, entry.seq));
            }
            kept.push((entry.seq, entry.user));
        }
        Self {
            config,
            next_seq,
            members,
            line: Line::from_sorted(kept),
            passes,
            sold_out,
            paused_until: 0,
            // A smaller store than config (a larger `admit_limit`) may owe passes.
            passes_owed: true,
        }
    }

    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    pub fn len(&self) -> usize {
        self.line.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Enters `user` (idempotent) at `now_ms`; issues a pass if admitted and it has none.
    /// `None` when the event is sold out and `user` is not in the line: they are turned
    /// away, and nothing changes.
    pub fn enter(&mut self, user: &str, now_ms: i64) -> (Option<Ticket>, Vec<Change>) {
        let mut changes = Vec::new();
        self.pay_owed_passes(now_ms, &mut changes);
        if let Some(ticket) = self.poll(user, now_ms, &mut changes) {
            return (Some(ticket), changes);
        }
        if self.sold_out {
            return (None, changes);
        }
        let seq = self.next_seq;
        self.next_seq = seq.saturating_add(1);
        self.line.push(seq, user.to_owned());
        changes.push(Change::Entered {
            user: user.to_owned(),
            seq,
        });
        let position = self.line.len() as u64;
        let in_zone = position <= u64::from(self.config.admit_limit);
        let mut member = Member { seq, pass: None };
        if in_zone && self.is_paused(now_ms) {
            self.passes_owed = true;
        } else if in_zone {
            issue_pass(
                user,
                &mut member,
                now_ms,
                self.config,
                &mut self.passes,
                &mut changes,
            );
        }
        self.members.insert(user.to_owned(), member);
        let ticket = Ticket {
            seq,
            position,
            admitted: member.pass.is_some(),
            pass_expires_at: member.pass,
        };
        (Some(ticket), changes)
    }

    /// The user's ticket now, or `None` if not in the queue. A poll: issues the passes a
    /// pause that is over held back, and the user's pass if admitted without one (after
    /// a config change such as a larger `admit_limit`).
    pub fn status(&mut self, user: &str, now_ms: i64) -> (Option<Ticket>, Vec<Change>) {
        let mut changes = Vec::new();
        self.pay_owed_passes(now_ms, &mut changes);
        let ticket = self.poll(user, now_ms, &mut changes);
        (ticket, changes)
    }

    /// Removes `user`; admits whoever moves into the first `admit_limit` (passes at
    /// `now_ms`). Empty changes if absent.
    pub fn leave(&mut self, user: &str, now_ms: i64) -> Vec<Change> {
        let mut changes = Vec::new();
        self.pay_owed_passes(now_ms, &mut changes);
        let Some(member) = self.members.remove(user) else {
            return changes;
        };
        if let Some(expires_at) = member.pass {
            self.passes.remove(&(expires_at, member.seq));
        }
        changes.push(Change::Removed {
            user: user.to_owned(),
        });
        if let Some((position, _)) = self.line.remove(member.seq) {
            if position <= u64::from(self.config.admit_limit) {
                self.refill(1, now_ms, &mut changes);
            }
        }
        changes
    }

    /// Removes every admitted user whose pass expired at or before `now_ms` (earliest
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
            if let Some((_, user)) = self.line.remove(seq) {
                self.members.remove(&user);
                changes.push(Change::Removed { user });
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

    /// Whether `user` holds a live pass at `now_ms` (the payment gate asks this).
    pub fn has_live_pass(&self, user: &str, now_ms: i64) -> bool {
        self.members
            .get(user)
            .and_then(|member| member.pass)
            .is_some_and(|expires_at| expires_at > now_ms)
    }

    /// The earliest pass expiry, for the object's alarm.
    pub fn next_pass_expiry(&self) -> Option<i64> {
        self.passes.first().map(|(expires_at, _)| *expires_at)
    }

    /// When the object should next run [`EventQueue::expire`]: the earliest pass expiry,
    /// or the end of a pause that keeps people waiting for a pass, whichever is first.
    pub fn next_wake(&self) -> Option<i64> {
        let resume = (self.passes_owed && self.paused_until > 0).then_some(self.paused_until);
        match (self.next_pass_expiry(), resume) {
            (Some(expiry), Some(resume)) => Some(expiry.min(resume)),
            (expiry, resume) => expiry.or(resume),
        }
    }

    fn poll(&mut self, user: &str, now_ms: i64, changes: &mut Vec<Change>) -> Option<Ticket> {
        let paused = self.is_paused(now_ms);
        let member = self.members.get_mut(user)?;
        let position = self.line.position(member.seq)?;
        let in_zone = position <= u64::from(self.config.admit_limit);
        if in_zone && member.pass.is_none() && !paused {
            issue_pass(user, member, now_ms, self.config, &mut self.passes, changes);
        }
        Some(Ticket {
            seq: member.seq,
            position,
            admitted: in_zone && member.pass.is_some(),
            pass_expires_at: member.pass,
        })
    }

    /// After `removed` people left: passes for whoever moved into the admitted zone — or,
    /// while payments are paused, a note that they are owed one.
    /// Once a pause is over, the passes it held back are paid here, front first.
    fn refill(&mut self, removed: u64, now_ms: i64, changes: &mut Vec<Change>) {
        if self.is_paused(now_ms) {
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
        let last = limit.min(self.line.len() as u64);
        for position in first..=last {
            let Some((_, user)) = self.line.at(position) else {
                break;
            };
            if let Some(member) = self.members.get_mut(user) {
                if member.pass.is_none() {
                    issue_pass(user, member, now_ms, self.config, &mut self.passes, changes);
                }
            }
        }
    }
}

fn issue_pass(
    user: &str,
    member: &mut Member,
    now_ms: i64,
    config: QueueConfig,
    passes: &mut BTreeSet<(i64, u64)>,
    changes: &mut Vec<Change>,
) {
    let expires_at = now_ms.saturating_add(config.pass_ttl_ms);
    member.pass = Some(expires_at);
    passes.insert((expires_at, member.seq));
    changes.push(Change::PassIssued {
        user: user.to_owned(),
        expires_at,
    });
}
