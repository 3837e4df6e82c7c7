//! The concurrency limit in the guard's call path: the pure [`ConcurrencyLimit`] behind a
//! lock, and the line of calls waiting for a slot, each woken by a one-shot channel when
//! a slot is handed to it. A call waits at most `max_wait`, and is then refused as not
//! sent (`CONCURRENCY_LIMITED`); a breaker that opens refuses the whole line at once.
//!
//! A slot is held by a [`Slot`]: reporting the call's answer frees it and teaches the
//! limit; dropping it unreported (the call was refused further on, or cancelled) only
//! frees it. Either way the first call waiting gets it. A waiting call that is cancelled
//! leaves the line, and a slot handed to it as it went is passed on.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

use super::{lock, Refusal};
use crate::metrics::{ConcurrencyGauges, Metrics};
use crate::policy::concurrency::{Admission, ConcurrencyLimit, LimitMode, Sample, Ticket};

/// What a waiting call is told: the slot that is its, or why it is refused.
type Handed = Result<Ticket, Refusal>;

pub(super) struct Slots {
    max_wait: Duration,
    /// The guard's: the limit's clock is the guard's.
    epoch: Instant,
    line: Mutex<Line>,
    gauges: ConcurrencyGauges,
}

struct Line {
    limit: ConcurrencyLimit,
    waiters: VecDeque<Waiter>,
    next_id: u64,
}

struct Waiter {
    id: u64,
    handed: oneshot::Sender<Handed>,
}

impl Slots {
    /// `None` when `mode` is off. Below `healthy_ms` an answer that did not fail is healthy.
    pub(super) fn new(
        name: &'static str,
        mode: LimitMode,
        healthy_ms: u64,
        max_wait: Duration,
        epoch: Instant,
        metrics: &Metrics,
    ) -> Option<Self> {
        let limit = ConcurrencyLimit::new(mode, healthy_ms)?;
        let slots = Self {
            max_wait,
            epoch,
            line: Mutex::new(Line {
                limit,
                waiters: VecDeque::new(),
                next_id: 0,
            }),
            gauges: metrics.concurrency(name),
        };
        slots.publish(&mut lock(&slots.line));
        Some(slots)
    }

    /// A slot for a call to be sent now, after a wait of at most `max_wait` behind the
    /// calls that came first; or a refusal, the call not sent.
    pub(super) async fn acquire(&self) -> Result<Slot<'_>, Refusal> {
        let (id, handed) = {
            let mut line = lock(&self.line);
            let admission = line.limit.arrive(self.now_ms());
            self.publish(&mut line);
            match admission {
                Admission::Now(ticket) => return Ok(Slot::new(self, ticket)),
                Admission::Refused => return Err(Refusal::ConcurrencyLimited),
                Admission::Wait => {
                    let (sender, handed) = oneshot::channel();
                    let id = line.next_id;
                    line.next_id += 1;
                    line.waiters.push_back(Waiter { id, handed: sender });
                    (id, handed)
                }
            }
        };
        let mut waiting = Waiting {
            slots: self,
            id,
            handed,
            over: false,
        };
        // Handed a slot or refused within the wait; or not, and `leave` settles which.
        match tokio::time::timeout(self.max_wait, &mut waiting.handed).await {
            Ok(Ok(handed)) => {
                waiting.over = true;
                handed.map(|ticket| Slot::new(self, ticket))
            }
            _ => waiting.leave(),
        }
    }

    /// Refuses every call waiting, with `refusal`: the breaker opened, or an operator
    /// forced it open.
    pub(super) fn refuse_waiting(&self, refusal: Refusal) {
        let mut line = lock(&self.line);
        while let Some(waiter) = line.waiters.pop_front() {
            line.limit.give_up();
            // A waiter gone meanwhile finds its place empty in `leave`.
            let _ = waiter.handed.send(Err(refusal));
        }
        self.publish(&mut line);
    }

    /// The calls waiting now.
    pub(super) fn waiting(&self) -> u32 {
        lock(&self.line).limit.waiting()
    }

    /// The limit, the calls in flight under it and the calls waiting, as of now.
    pub(super) fn view(&self) -> (u32, u32, u32) {
        let mut line = lock(&self.line);
        let limit = self.publish(&mut line);
        (limit, line.limit.in_flight(), line.limit.waiting())
    }

    /// Hands free slots to the calls waiting, first come first served.
    fn hand_over(&self, line: &mut Line) {
        let now_ms = self.now_ms();
        while !line.waiters.is_empty() {
            let Some(ticket) = line.limit.hand_over(now_ms) else {
                break;
            };
            let Some(waiter) = line.waiters.pop_front() else {
                line.limit.release(ticket);
                break;
            };
            if waiter.handed.send(Ok(ticket)).is_err() {
                // Its call is gone: the slot goes to the next.
                line.limit.release(ticket);
            }
        }
        self.publish(line);
    }

    /// Sets the metrics from `line`; the limit as of now.
    fn publish(&self, line: &mut Line) -> u32 {
        let limit = line.limit.limit(self.now_ms());
        self.gauges.set(limit, line.limit.waiting());
        limit
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }
}

/// A call's place in the line, until it is handed a slot or refused.
struct Waiting<'a> {
    slots: &'a Slots,
    id: u64,
    handed: oneshot::Receiver<Handed>,
    over: bool,
}

impl<'a> Waiting<'a> {
    /// Leaves the line: refused if still in it, else what it was handed as it left.
    fn leave(&mut self) -> Result<Slot<'a>, Refusal> {
        self.over = true;
        let slots = self.slots;
        let mut line = lock(&slots.line);
        if let Some(at) = line.waiters.iter().position(|w| w.id == self.id) {
            line.waiters.remove(at);
            line.limit.give_up();
            slots.publish(&mut line);
            return Err(Refusal::ConcurrencyLimited);
        }
        drop(line);
        match self.handed.try_recv() {
            Ok(handed) => handed.map(|ticket| Slot::new(slots, ticket)),
            // Out of the line and never told: nothing else takes a waiter out.
            Err(_) => Err(Refusal::ConcurrencyLimited),
        }
    }
}

impl Drop for Waiting<'_> {
    /// A call cancelled while it waits leaves the line, and gives back a slot it was
    /// handed as it went.
    fn drop(&mut self) {
        if !self.over {
            // A slot handed to it is dropped with it, which passes it on.
            let _ = self.leave();
        }
    }
}

/// One slot under the limit, held by a call from before it is sent until its answer.
pub(super) struct Slot<'a> {
    slots: &'a Slots,
    ticket: Ticket,
    /// How the call went, once it is known.
    sample: Option<Sample>,
}

impl<'a> Slot<'a> {
    fn new(slots: &'a Slots, ticket: Ticket) -> Self {
        Self {
            slots,
            ticket,
            sample: None,
        }
    }

    /// The call's answer came: the slot is free, and the limit learns from `sample`.
    pub(super) fn finish(mut self, sample: Sample) {
        self.sample = Some(sample);
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let slots = self.slots;
        let mut line = lock(&slots.line);
        match self.sample.take() {
            Some(sample) => line.limit.finish(self.ticket, slots.now_ms(), sample),
            None => line.limit.release(self.ticket),
        }
        slots.hand_over(&mut line);
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod with_devices;
