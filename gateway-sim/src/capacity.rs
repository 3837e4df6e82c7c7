//! The simulated PG's capacity: at most `slots` confirms processed at once, and a
//! bounded line of confirms waiting for a slot, first come, first served.
//!
//! A real PG saturates: past its capacity a request waits for a worker, so latency grows
//! with load, until its queue is full and it refuses at once. [`Capacity::arrive`]
//! decides at once — a slot now, a place in the line, or [`LineFull`] — and a place
//! becomes a [`Slot`] when one is handed on ([`Queued::slot`]); a slot is given back
//! when dropped, to the head of the line.
//!
//! Every confirm is counted, with or without a cap, so a cap set while confirms are
//! being processed counts them. A change of limits ([`Capacity::set`]) acts on whoever
//! comes next and strands nobody: a raised or removed cap hands slots to the line at
//! once; a lowered one hands none until enough are given back; a shorter line refuses
//! newcomers and keeps who is in it. A waiter that leaves (its future dropped: the
//! client disconnected) gives its place up, and a slot handed to it as it left goes on
//! to the next.
//!
//! No clock and no I/O: time only passes in the callers, which hold a slot for as long
//! as a confirm's processing takes, and say how long that was when they give it back
//! ([`Slot::served`]): the PG's own service time, without its line, whose 95th
//! percentile the load reports.

use std::collections::{BTreeMap, VecDeque};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::oneshot;

use crate::lock;

/// A cap in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Confirms processed at once.
    pub slots: NonZeroU32,
    /// Confirms that may wait for a slot; 0: none, every slot busy is a refusal.
    pub line: u32,
}

/// The line was full: the confirm is refused at once, nothing else done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineFull {
    pub limits: Limits,
}

/// The capacity as it stands; serializes as `GET /admin/capacity` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Load {
    /// Confirms holding a slot now.
    pub processing: usize,
    /// Confirms in the line now.
    pub waiting: usize,
    /// Confirms refused because the line was full, since the simulator started.
    pub refused: u64,
    /// Confirms whose processing time was reported, since the simulator started.
    pub served: u64,
    /// The 95th percentile of those times, in milliseconds: how long a confirm holds a
    /// slot, its wait in the line left out. `None` before the first.
    pub service_p95_ms: Option<u64>,
}

/// The slots and the line, shared by every confirm.
#[derive(Clone, Default)]
pub struct Capacity(Arc<Mutex<Line>>);

#[derive(Default)]
struct Line {
    /// `None`: no cap, nobody waits.
    limits: Option<Limits>,
    busy: usize,
    waiting: VecDeque<Waiter>,
    next_id: u64,
    refused: u64,
    /// How many slots were held for how many whole milliseconds.
    service_ms: BTreeMap<u64, u64>,
    served: u64,
}

struct Waiter {
    id: u64,
    handed: oneshot::Sender<()>,
}

impl Line {
    fn has_free_slot(&self) -> bool {
        self.limits
            .is_none_or(|limits| self.busy < limits.slots.get() as usize)
    }

    /// Hands free slots to the line, front first.
    fn hand_on(&mut self) {
        while self.has_free_slot() {
            let Some(waiter) = self.waiting.pop_front() else {
                return;
            };
            // Only a waiter that is still there is in the line (it leaves under this
            // lock), so the send fails only for one forgotten rather than dropped.
            if waiter.handed.send(()).is_ok() {
                self.busy += 1;
            }
        }
    }

    fn give_back(&mut self) {
        self.busy = self.busy.saturating_sub(1);
        self.hand_on();
    }

    /// The smallest time at least 95 % of the served took no longer than.
    fn service_p95_ms(&self) -> Option<u64> {
        let rank = (self.served * 95).div_ceil(100).max(1);
        let mut seen = 0;
        self.service_ms.iter().find_map(|(ms, count)| {
            seen += count;
            (seen >= rank).then_some(*ms)
        })
    }
}

impl Capacity {
    /// Puts `limits` in force: see the module's documentation for who it acts on.
    pub fn set(&self, limits: Option<Limits>) {
        let mut line = lock(&self.0);
        line.limits = limits;
        line.hand_on();
    }

    /// A confirm arrives: a slot at once when one is free and nobody waits, else a place
    /// at the back of the line, else refused.
    pub fn arrive(&self) -> Result<Queued, LineFull> {
        let mut line = lock(&self.0);
        let place = match line.limits {
            Some(limits) if !line.waiting.is_empty() || !line.has_free_slot() => {
                if line.waiting.len() >= limits.line as usize {
                    line.refused += 1;
                    return Err(LineFull { limits });
                }
                let (handed, granted) = oneshot::channel();
                let id = line.next_id;
                line.next_id += 1;
                line.waiting.push_back(Waiter { id, handed });
                Some((id, granted))
            }
            // A free slot and nobody before it, or no cap at all.
            _ => {
                line.busy += 1;
                None
            }
        };
        Ok(Queued {
            capacity: self.clone(),
            place,
        })
    }

    /// How many are processing and waiting now, and how many were refused.
    pub fn load(&self) -> Load {
        let line = lock(&self.0);
        Load {
            processing: line.busy,
            waiting: line.waiting.len(),
            refused: line.refused,
            served: line.served,
            service_p95_ms: line.service_p95_ms(),
        }
    }
}

/// A confirm let in: holding a slot already, or in the line for one.
#[must_use = "a place is given up when dropped"]
pub struct Queued {
    capacity: Capacity,
    /// `None`: the slot is held already.
    place: Option<(u64, oneshot::Receiver<()>)>,
}

impl Queued {
    /// Waits for the slot, however long the line takes.
    pub async fn slot(mut self) -> Slot {
        if let Some((_, handed)) = &mut self.place {
            // The sender is only ever dropped having sent: the line keeps it until then,
            // and the line lives as long as this place's `capacity`.
            let _ = handed.await;
        }
        self.place = None;
        Slot {
            capacity: self.capacity.clone(),
        }
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        let Some((id, mut handed)) = self.place.take() else {
            return;
        };
        let mut line = lock(&self.capacity.0);
        if let Some(at) = line.waiting.iter().position(|waiter| waiter.id == id) {
            line.waiting.remove(at);
        } else if handed.try_recv().is_ok() {
            // Handed a slot as it left: the next one takes it.
            line.give_back();
        }
    }
}

/// One of the slots, held by a confirm being processed; given back when dropped.
#[must_use = "a slot is given back when dropped"]
pub struct Slot {
    capacity: Capacity,
}

impl Slot {
    /// Gives the slot back, its confirm processed in `held` (counted in whole ms).
    pub fn served(self, held: std::time::Duration) {
        let ms = u64::try_from(held.as_millis()).unwrap_or(u64::MAX);
        let mut line = lock(&self.capacity.0);
        *line.service_ms.entry(ms).or_default() += 1;
        line.served += 1;
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        lock(&self.capacity.0).give_back();
    }
}

#[cfg(test)]
mod tests;
