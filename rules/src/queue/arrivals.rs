//! One event's arrivals spread over many shards, with one exact first-come order
//! (`docs/design/queue.md`, "Many shards").
//!
//! A room object takes a few hundred writing requests a second, so an event expecting
//! more has `shards` arrival shards in front of its room, the **head**. The server puts
//! each user in one shard ([`shard_of`]: a keyed hash — nobody picks theirs or learns
//! another's). A shard gathers its newcomers — and the arrival numbers of those who left
//! — for one [`flush_interval_ms`] ([`Batcher`]) and hands them to the head in one call;
//! the head takes the leavers out of its one line and numbers the newcomers with its
//! next arrival numbers, in the order batches reach it and the batch's own order within
//! ([`enter_batch`]). So:
//!
//! - **The order is exact and final at once.** Nobody is numbered below a number already
//!   given, so a position answered is exact as of that answer and only ever falls; the
//!   head's line is the whole line, and its snapshot answers every ticket's poll.
//! - **Across shards the order is first come within one batch window**: two people at
//!   different shards are numbered in the order they came unless they came less than a
//!   flush interval (plus the head's answer time) apart.
//! - **A batch is numbered once.** The shard stores a batch before sending it and sends
//!   it again until the head answers; the head keeps whoever holds a number at it
//!   ([`enter_batch`]), so a batch sent again gets the numbers it got. A shard lost
//!   mid-call loses nobody and numbers nobody twice.
//! - **A head that cannot be reached is asked again, ever more slowly**: the batch goes
//!   again after [`MIN_FLUSH_MS`], doubling to [`RETRY_MAX_MS`] ([`Batcher::unreachable`]).
//!   **A batch the head refuses for good is given up** ([`Batcher::refused`]): its
//!   newcomers wait no more (they enter again — the head keeps whoever holds a number,
//!   so nobody numbered loses it) and its leavers go with the next batch; the shard
//!   moves on rather than stall behind it.
//! - **The head takes at most [`HEAD_BATCHES_PER_SECOND`] batches a second** from all
//!   its shards together: the flush interval grows with the shards.

use std::collections::HashSet;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::{Change, EventQueue, Ticket};

/// The enters a second one shard is sized for: under the few hundred writing requests a
/// second a Durable Object takes.
pub const SHARD_ENTERS_PER_SECOND: u64 = 250;
/// The most shards an event may have.
pub const MAX_SHARDS: u32 = 256;
/// The batches a second the head takes from all its shards together, at most.
pub const HEAD_BATCHES_PER_SECOND: u32 = 200;
/// The shortest a shard gathers arrivals.
pub const MIN_FLUSH_MS: i64 = 100;
/// The most arrivals in one batch: a shard hands its batch over early once it is this
/// big, so no call to the head carries more.
pub const MAX_BATCH: usize = 1_000;
/// The longest a shard waits before sending again a batch the head did not answer.
pub const RETRY_MAX_MS: i64 = 5_000;

/// Which of `shards` takes `user`'s calls for `event`, from 0: HMAC-SHA256 under the
/// edge's `key`, so a user's shard is fixed and nobody can compute anyone's.
pub fn shard_of(key: &[u8], event: &str, user: &str, shards: u32) -> u32 {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    mac.update(event.as_bytes());
    mac.update(&[0]);
    mac.update(user.as_bytes());
    let digest = mac.finalize().into_bytes();
    let mut word = [0u8; 8];
    word.copy_from_slice(&digest[..8]);
    (u64::from_be_bytes(word) % u64::from(shards.max(1))) as u32
}

/// The shards for an expected `arrivals_per_minute`: each takes at most
/// [`SHARD_ENTERS_PER_SECOND`] on average (1 to [`MAX_SHARDS`]).
pub fn shards_for(arrivals_per_minute: u64) -> u32 {
    let per_second = arrivals_per_minute.div_ceil(60);
    let shards = per_second.div_ceil(SHARD_ENTERS_PER_SECOND).max(1);
    u32::try_from(shards).unwrap_or(MAX_SHARDS).min(MAX_SHARDS)
}

/// How long a shard of an event with `shards` gathers arrivals before it hands them to
/// the head: the head then takes at most [`HEAD_BATCHES_PER_SECOND`].
pub fn flush_interval_ms(shards: u32) -> i64 {
    (i64::from(shards) * 1000 / i64::from(HEAD_BATCHES_PER_SECOND)).max(MIN_FLUSH_MS)
}

/// A batch of a shard's newcomers, in the order they came, and of the arrival numbers
/// of its people who left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Grows with every batch of the shard.
    pub id: u64,
    pub users: Vec<String>,
    pub left: Vec<u64>,
}

/// A shard's newcomers, gathered into batches: one waits for the head while the next
/// fills.
#[derive(Debug)]
pub struct Batcher {
    interval_ms: i64,
    next_id: u64,
    pending: Vec<String>,
    leaving: Vec<u64>,
    /// When the first of `pending` or `leaving` came.
    since: Option<i64>,
    sent: Option<Batch>,
    /// Everyone in `pending` or `sent`.
    waiting: HashSet<String>,
    /// Times in a row `sent` could not reach the head, and when it goes again.
    failures: u32,
    retry_at: Option<i64>,
}

/// A batch the head refused for good, given up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub id: u64,
    /// Its newcomers: told to enter again.
    pub users: Vec<String>,
    /// Its leavers given up with it: none when it had newcomers (then they go with the
    /// next batch); all when it carried only leavers, so that they cannot stall the shard.
    pub dropped: Vec<u64>,
}

/// How long after its `failures`-th failure in a row a batch goes again: from
/// [`MIN_FLUSH_MS`], doubling, at most [`RETRY_MAX_MS`].
pub fn retry_after_ms(failures: u32) -> i64 {
    (MIN_FLUSH_MS << (failures.clamp(1, 8) - 1)).min(RETRY_MAX_MS)
}

impl Batcher {
    /// A shard's batcher: `next_id` is past every batch it stored, `sent` the batch it
    /// stored and had not heard back on, if any (sent again first).
    pub fn restore(interval_ms: i64, next_id: u64, sent: Option<Batch>) -> Self {
        let waiting = sent.iter().flat_map(|b| b.users.iter().cloned()).collect();
        Self {
            interval_ms,
            next_id: next_id.max(sent.as_ref().map_or(0, |b| b.id + 1)),
            pending: Vec::new(),
            leaving: Vec::new(),
            since: None,
            sent,
            waiting,
            failures: 0,
            retry_at: None,
        }
    }

    /// `user` came at `now`; `false` if they wait for a batch already (came twice).
    pub fn arrive(&mut self, user: &str, now_ms: i64) -> bool {
        if !self.waiting.insert(user.to_owned()) {
            return false;
        }
        self.pending.push(user.to_owned());
        self.since.get_or_insert(now_ms);
        true
    }

    /// Arrival number `seq`, of this shard's, left at `now` (the shell answered it and
    /// forgot who held it): the head takes it out of the line with the next batch.
    pub fn leave(&mut self, seq: u64, now_ms: i64) {
        self.leaving.push(seq);
        self.since.get_or_insert(now_ms);
    }

    /// Whether a batch was sent (stored) and not answered: after a restart, it is sent
    /// again at once.
    pub fn has_sent(&self) -> bool {
        self.sent.is_some()
    }

    pub fn is_waiting(&self, user: &str) -> bool {
        self.waiting.contains(user)
    }

    /// When the next batch is due: the one the head did not answer, at its retry; else
    /// the gathering one, its interval after its first came, at once when full; `None`
    /// when nothing gathers.
    pub fn due_at(&self) -> Option<i64> {
        if let (Some(_), Some(at)) = (&self.sent, self.retry_at) {
            return Some(at);
        }
        let since = self.since?;
        Some(if self.pending.len() + self.leaving.len() >= MAX_BATCH {
            since
        } else {
            since + self.interval_ms
        })
    }

    /// The batch to send to the head at `now`: the one sent before and not answered, else
    /// the gathering one once due. The shell stores it before sending it.
    pub fn to_send(&mut self, now_ms: i64) -> Option<Batch> {
        if let Some(sent) = &self.sent {
            return match self.retry_at {
                Some(at) if at > now_ms => None,
                _ => Some(sent.clone()),
            };
        }
        if self.due_at().is_none_or(|due| due > now_ms) {
            return None;
        }
        let left: Vec<u64> = self
            .leaving
            .drain(..self.leaving.len().min(MAX_BATCH))
            .collect();
        let take = self.pending.len().min(MAX_BATCH - left.len());
        let users: Vec<String> = self.pending.drain(..take).collect();
        let rest = !self.pending.is_empty() || !self.leaving.is_empty();
        self.since = rest.then_some(now_ms);
        let batch = Batch {
            id: self.next_id,
            users,
            left,
        };
        self.next_id += 1;
        self.sent = Some(batch.clone());
        Some(batch)
    }

    /// The head numbered batch `id`: its people wait no more. The batch it answered.
    pub fn numbered(&mut self, id: u64) -> Option<Batch> {
        if self.sent.as_ref().is_none_or(|b| b.id != id) {
            return None;
        }
        let batch = self.sent.take()?;
        for user in &batch.users {
            self.waiting.remove(user);
        }
        (self.failures, self.retry_at) = (0, None);
        Some(batch)
    }

    /// Batch `id` could not reach the head at `now` (unreachable, overloaded, erred): it
    /// goes again at the time answered, later after every failure in a row.
    pub fn unreachable(&mut self, id: u64, now_ms: i64) -> Option<i64> {
        if self.sent.as_ref().is_none_or(|b| b.id != id) {
            return None;
        }
        self.failures += 1;
        let at = now_ms + retry_after_ms(self.failures);
        self.retry_at = Some(at);
        Some(at)
    }

    /// The head refused batch `id` for good at `now`: given up, so the next can go.
    pub fn refused(&mut self, id: u64, now_ms: i64) -> Option<Refused> {
        let batch = self.numbered(id)?;
        let dropped = match batch.users.is_empty() {
            true => batch.left,
            false => {
                for seq in batch.left {
                    self.leave(seq, now_ms);
                }
                Vec::new()
            }
        };
        Some(Refused {
            id: batch.id,
            users: batch.users,
            dropped,
        })
    }

    /// The shard's memory is lost (its isolate restarted): the newcomers pending go —
    /// nobody was answered — and the stored batch, if any, is sent again. (The shell
    /// stores who left before it answers; it hands them back with [`Batcher::leave`].)
    pub fn restart(&mut self) {
        *self = Self::restore(self.interval_ms, self.next_id, self.sent.take());
    }
}

/// The head's answer to a batch: each newcomer's ticket (`None`: turned away — sold
/// out or closed), and the changes to store.
#[derive(Debug)]
pub struct BatchNumbered {
    pub tickets: Vec<Option<Ticket>>,
    pub changes: Vec<Change>,
}

/// The head's work on a batch: takes `left` out of `line`, then enters the batch's people
/// behind everyone, in order — `held[i]` is the arrival number the i-th already holds, if
/// any, which they keep. So a batch sent again (its answer lost, its shard restarted) is
/// answered with the numbers it got, and nobody is numbered twice.
pub fn enter_batch(
    line: &mut EventQueue,
    held: &[Option<u64>],
    left: &[u64],
    now_ms: i64,
) -> BatchNumbered {
    let mut changes = Vec::new();
    for seq in left {
        changes.extend(line.leave(*seq, now_ms));
    }
    let tickets = held
        .iter()
        .map(|seq| {
            let (ticket, more) = line.enter(*seq, now_ms);
            changes.extend(more);
            ticket
        })
        .collect();
    BatchNumbered { tickets, changes }
}

#[cfg(test)]
mod tests;
