//! The queue as the room's shell drives it, for the tests: people by name, their arrival
//! numbers looked up as the shell looks them up in its storage, and changes written with
//! the names of the people they concern.

use std::cell::RefCell;
use std::collections::HashMap;

use super::super::*;

thread_local! {
    /// Who took each arrival number, in this test's thread: what `written` names.
    static NAMES: RefCell<HashMap<u64, String>> = RefCell::new(HashMap::new());
}

/// Records that `user` holds `seq`, for `written`.
fn name(seq: u64, user: &str) {
    NAMES.with(|names| names.borrow_mut().insert(seq, user.to_owned()));
}

/// The name of `seq`'s holder; `#seq` for one never named.
fn named(seq: u64) -> String {
    NAMES
        .with(|names| names.borrow().get(&seq).cloned())
        .unwrap_or_else(|| format!("#{seq}"))
}

pub(super) fn written(changes: &[Change]) -> String {
    let words: Vec<String> = changes
        .iter()
        .map(|change| match change {
            Change::Entered { seq } => format!("{}#{seq}", named(*seq)),
            Change::PassIssued { seq, expires_at } => format!("+{}@{expires_at}", named(*seq)),
            Change::Removed { seq } => format!("-{}", named(*seq)),
            Change::SoldOut => "sold-out".to_owned(),
            Change::Paused { until } => format!("paused<{until}"),
            Change::PassExtended { seq, expires_at } => {
                format!("~{}@{expires_at}", named(*seq))
            }
            Change::Held { held: true } => "held".to_owned(),
            Change::Held { held: false } => "resumed".to_owned(),
            Change::Closed => "closed".to_owned(),
        })
        .collect();
    words.join(" ")
}

/// The queue as the room's shell drives it: people by name, their arrival numbers looked
/// up as the shell looks them up in its storage (and forgotten when they are removed).
#[derive(Clone)]
pub(super) struct Named {
    pub(super) queue: EventQueue,
    pub(super) seq_of: HashMap<String, u64>,
}

/// What only reads the queue is asked of it directly.
impl std::ops::Deref for Named {
    type Target = EventQueue;

    fn deref(&self) -> &EventQueue {
        &self.queue
    }
}

/// The line's bitmap from 0 with `seqs` set, as storage keeps it.
pub(super) fn bitmap(seqs: impl IntoIterator<Item = u64>) -> Vec<u64> {
    let mut words = Vec::new();
    for seq in seqs {
        let word = (seq / 64) as usize;
        if word >= words.len() {
            words.resize(word + 1, 0u64);
        }
        words[word] |= 1 << (seq % 64);
    }
    words
}

/// An arrival number nobody holds: what the shell asks about for someone it has no row of.
const NOBODY: u64 = u64::MAX;

impl Named {
    pub(super) fn new(config: QueueConfig) -> Self {
        Self::of(EventQueue::new(config))
    }

    /// A queue restored from storage, with the names of those in it.
    pub(super) fn restored(config: QueueConfig, stored: Stored, names: &[(u64, &str)]) -> Self {
        let mut named = Self::of(EventQueue::restore(config, stored));
        for (seq, user) in names {
            name(*seq, user);
            named.seq_of.insert((*user).to_owned(), *seq);
        }
        named
    }

    fn of(queue: EventQueue) -> Self {
        Self {
            queue,
            seq_of: HashMap::new(),
        }
    }

    pub(super) fn seq(&self, user: &str) -> u64 {
        self.seq_of.get(user).copied().unwrap_or(NOBODY)
    }

    /// Keeps the names in step with `changes`, as the shell's storage is.
    fn seen(&mut self, user: Option<&str>, changes: Vec<Change>) -> Vec<Change> {
        for change in &changes {
            match (change, user) {
                (Change::Entered { seq }, Some(user)) => {
                    name(*seq, user);
                    self.seq_of.insert(user.to_owned(), *seq);
                }
                (Change::Removed { seq }, _) => self.seq_of.retain(|_, held| held != seq),
                _ => {}
            }
        }
        changes
    }

    pub(super) fn enter(&mut self, user: &str, now: i64) -> (Option<Ticket>, Vec<Change>) {
        let held = self.seq_of.get(user).copied();
        let (ticket, changes) = self.queue.enter(held, now);
        (ticket, self.seen(Some(user), changes))
    }

    pub(super) fn status(&mut self, user: &str, now: i64) -> (Option<Ticket>, Vec<Change>) {
        let (ticket, changes) = self.queue.status(self.seq(user), now);
        (ticket, self.seen(None, changes))
    }

    pub(super) fn leave(&mut self, user: &str, now: i64) -> Vec<Change> {
        let changes = self.queue.leave(self.seq(user), now);
        self.seen(None, changes)
    }

    pub(super) fn expire(&mut self, now: i64) -> Vec<Change> {
        let changes = self.queue.expire(now);
        self.seen(None, changes)
    }

    pub(super) fn pause(&mut self, now: i64, until: i64) -> Vec<Change> {
        let changes = self.queue.pause(now, until);
        self.seen(None, changes)
    }

    pub(super) fn mark_sold_out(&mut self) -> Vec<Change> {
        self.queue.mark_sold_out()
    }

    pub(super) fn has_live_pass(&self, user: &str, now: i64) -> bool {
        self.queue.has_live_pass(self.seq(user), now)
    }
}
