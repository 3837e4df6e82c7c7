//! The `ArrivalShard` Durable Object (class name in `wrangler.toml`): one of the
//! `shards` arrival shards of an event, named `{event}#{index}` — the index the server
//! gives each user (`rules::queue::arrivals::shard_of`). It takes its users' enters,
//! polls without a ticket and leaves, so that no object takes more than a share of an
//! event's arrivals; the event's room, its head, keeps the one line.
//!
//! A newcomer's enter waits for their batch: the shard gathers newcomers for one flush
//! interval (`rules::queue::arrivals::Batcher`), and its alarm stores the batch and hands
//! it to the head in one call, which numbers it; every enter of the batch is then
//! answered with the head's answer (position, ticket's arrival number). The numbers are
//! kept here, so entering again and leaving need nobody else; whoever left is taken out
//! of the line by the next batch. A batch the head did not answer is sent again — after
//! a failed call, ever more slowly (`Batcher::unreachable`), and after the shard
//! restarts — and the head keeps whoever holds a number, so nobody is numbered twice. A
//! batch the head refuses for good is given up (`Batcher::refused`): its people are
//! told to enter again, and the next batch goes. Who is numbered already and everything else —
//! prequeued, drawn, claims — is the head's: those calls are passed on to it. A report
//! says how many batches it sent and whom it holds.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

use futures_channel::oneshot;
use futures_util::future::{select, Either};
use rules::queue::arrivals::{flush_interval_ms, Batch, Batcher};
use serde::{Deserialize, Serialize};
use worker::{durable_object, DurableObject, Env, Request, Response, Result, State};

use super::storage::ShardStorage;
use crate::alarm::Alarm;
use crate::clock::now_ms;
use crate::durable_call::{
    call_object, call_object_in_body, read_call, reply, tell_object, InBody,
};
use crate::queue::client::BINDING as ROOMS;
use crate::queue::protocol::{Batched, Entered, Placement, RoomRequest};

/// How long an enter waits for its batch's number before it is answered unavailable
/// (its place in the batch is kept: entering again finds it).
const WAIT: Duration = Duration::from_secs(10);

/// A call to a shard: one of the edge's per-user calls to a room, for `event`, which has
/// `shards` shards.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShardCall {
    pub event: String,
    pub shards: u32,
    pub call: RoomRequest,
}

/// A shard for operators (and the lab): the batches it sent, and the users it holds a
/// number for.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShardReport {
    pub batches: u64,
    pub holding: u64,
}

#[durable_object]
pub struct ArrivalShard {
    state: State,
    /// Its alarm's time, kept in memory.
    alarm: Alarm,
    env: Env,
    storage: ShardStorage,
    /// Restored from storage on the first call or alarm after the object starts.
    batcher: RefCell<Option<Batcher>>,
    event: RefCell<Option<String>>,
    /// The enters waiting for their batch, by user.
    waiters: RefCell<HashMap<String, Vec<oneshot::Sender<Entered>>>>,
    /// Who left while waiting for their number: taken out once numbered.
    leave_once_numbered: RefCell<HashSet<String>>,
}

impl DurableObject for ArrivalShard {
    fn new(state: State, env: Env) -> Self {
        let storage = ShardStorage::new(state.storage().sql());
        Self {
            state,
            alarm: Alarm::new(),
            env,
            storage,
            batcher: RefCell::new(None),
            event: RefCell::new(None),
            waiters: RefCell::new(HashMap::new()),
            leave_once_numbered: RefCell::new(HashSet::new()),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let call: ShardCall = read_call(&req)?;
        let now = now_ms();
        self.restore(Some((&call.event, call.shards)), now).await?;
        match call.call {
            RoomRequest::Enter { user } => self.enter(&user, true, now).await,
            RoomRequest::Status { user } => self.enter(&user, false, now).await,
            RoomRequest::Leave { user } => self.leave(&user, false, now).await,
            RoomRequest::Consume { user } => self.leave(&user, true, now).await,
            RoomRequest::Report => reply(&ShardReport {
                batches: self
                    .storage
                    .place()?
                    .map_or(0, |p| p.next_batch.unsigned_abs()),
                holding: self.storage.holding()?,
            }),
            other => Err(worker::Error::RustError(format!(
                "not an arrival shard's call: {other:?}"
            ))),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        self.alarm.fired();
        let now = now_ms();
        self.restore(None, now).await?;
        self.flush(now).await?;
        Response::empty()
    }
}

impl ArrivalShard {
    /// The batcher and the event, from storage, once after the object starts (a shard
    /// new to its event first stores `called_for`, the event and its shards, from its
    /// call); a batch it had sent and not heard back on goes again at once.
    async fn restore(&self, called_for: Option<(&str, u32)>, now: i64) -> Result<()> {
        if self.batcher.borrow().is_some() {
            return Ok(());
        }
        if let Some((event, shards)) = called_for {
            self.storage.settle(event, shards)?;
        }
        let place = self
            .storage
            .place()?
            .ok_or_else(|| worker::Error::RustError("a shard called for no event".into()))?;
        let sent = self.storage.sent()?;
        let sent_left: Vec<u64> = sent.iter().flat_map(|b| b.left.clone()).collect();
        let shards = u32::try_from(place.shards).unwrap_or(1);
        let mut batcher = Batcher::restore(
            flush_interval_ms(shards),
            place.next_batch.unsigned_abs(),
            sent,
        );
        for seq in self.storage.leaving()? {
            if !sent_left.contains(&seq) {
                batcher.leave(seq, now);
            }
        }
        let again = batcher.has_sent();
        *self.batcher.borrow_mut() = Some(batcher);
        *self.event.borrow_mut() = Some(place.event);
        if again {
            self.alarm.no_later_than(&self.state.storage(), now).await?;
        }
        self.schedule().await
    }

    fn with_batcher<T>(&self, f: impl FnOnce(&mut Batcher) -> T) -> Result<T> {
        let mut guard = self.batcher.borrow_mut();
        let batcher = guard
            .as_mut()
            .ok_or_else(|| worker::Error::RustError("the batcher is not restored".into()))?;
        Ok(f(batcher))
    }

    fn event(&self) -> Result<String> {
        self.event
            .borrow()
            .clone()
            .ok_or_else(|| worker::Error::RustError("the shard's event is not known".into()))
    }

    /// The alarm at the gathering batch's due time, if one gathers.
    async fn schedule(&self) -> Result<()> {
        match self.with_batcher(|batcher| batcher.due_at())? {
            Some(due) => self.alarm.no_later_than(&self.state.storage(), due).await,
            None => Ok(()),
        }
    }

    /// An enter (or, `entering` false, a poll without a ticket): a newcomer waits for
    /// their batch's number; whoever is numbered already is the head's to answer.
    async fn enter(&self, user: &str, entering: bool, now: i64) -> Result<Response> {
        let request = match entering {
            true => RoomRequest::Enter {
                user: user.to_owned(),
            },
            false => RoomRequest::Status {
                user: user.to_owned(),
            },
        };
        let waiting = self.with_batcher(|batcher| batcher.is_waiting(user))?;
        if self.storage.seq_of(user)?.is_some() || (!waiting && !entering) {
            return match entering {
                true => reply(&self.head::<Entered>(&request).await?),
                false => reply(&self.head::<Option<Placement>>(&request).await?),
            };
        }
        if !waiting {
            self.with_batcher(|batcher| batcher.arrive(user, now))?;
            self.schedule().await?;
        }
        let (sender, receiver) = oneshot::channel();
        self.waiters
            .borrow_mut()
            .entry(user.to_owned())
            .or_default()
            .push(sender);
        let entered = match select(receiver, worker::Delay::from(WAIT)).await {
            Either::Left((Ok(entered), _)) => entered,
            Either::Left((Err(_), _)) => {
                return Err(worker::Error::RustError(
                    "the head refused the batch: enter again".into(),
                ))
            }
            Either::Right(_) => {
                return Err(worker::Error::RustError(format!(
                    "no number from the head in {WAIT:?}; the place in the batch is kept"
                )))
            }
        };
        match entering {
            true => reply(&entered),
            false => reply(&Some(entered.placement)),
        }
    }

    /// A leave, or the consume of a paid pass: a numbered user's number goes to the head
    /// with the next batch; anyone else's is the head's to take out.
    async fn leave(&self, user: &str, consume: bool, now: i64) -> Result<Response> {
        match self.storage.seq_of(user)? {
            Some(seq) => {
                self.storage.leave(user, seq)?;
                self.with_batcher(|batcher| batcher.leave(seq, now))?;
                self.schedule().await?;
            }
            None if self.with_batcher(|batcher| batcher.is_waiting(user))? => {
                self.leave_once_numbered
                    .borrow_mut()
                    .insert(user.to_owned());
            }
            None => {
                let user = user.to_owned();
                let request = match consume {
                    true => RoomRequest::Consume { user },
                    false => RoomRequest::Leave { user },
                };
                tell_object(&self.env, ROOMS, &self.event()?, &request)
                    .await
                    .map_err(|err| worker::Error::RustError(err.to_string()))?;
            }
        }
        Response::empty().map(|r| r.with_status(204))
    }

    async fn head<T: serde::de::DeserializeOwned>(&self, request: &RoomRequest) -> Result<T> {
        call_object(&self.env, ROOMS, &self.event()?, request)
            .await
            .map_err(|err| worker::Error::RustError(err.to_string()))
    }

    /// The alarm: the batch due goes to the head (stored first); its enters are answered.
    async fn flush(&self, now: i64) -> Result<()> {
        let Some(batch) = self.with_batcher(|batcher| batcher.to_send(now))? else {
            return self.schedule().await;
        };
        self.storage.store_sent(&batch)?;
        let request = RoomRequest::Batch {
            users: batch.users.clone(),
            left: batch.left.clone(),
        };
        let answer =
            call_object_in_body::<Batched>(&self.env, ROOMS, &self.event()?, &request).await;
        let batched = match answer {
            Ok(InBody::Answered(batched)) if batched.entered.len() == batch.users.len() => batched,
            Ok(InBody::Answered(_)) => {
                return self.give_up(&batch, "it answered another batch", now).await
            }
            Ok(InBody::Refused(reason)) => return self.give_up(&batch, &reason, now).await,
            Err(err) => {
                let at = self.with_batcher(|batcher| batcher.unreachable(batch.id, now))?;
                worker::console_error!(
                    "batch {} not taken, sent again in {} ms: {err}",
                    batch.id,
                    at.map_or(0, |at| at - now)
                );
                return self.schedule().await;
            }
        };
        let numbers: Vec<Option<u64>> = batched.entered.iter().map(|e| e.seq).collect();
        self.storage.answered(&batch, &numbers)?;
        self.with_batcher(|batcher| batcher.numbered(batch.id))?;
        for (user, entered) in batch.users.iter().zip(batched.entered) {
            let left = self.leave_once_numbered.borrow_mut().remove(user);
            if let (true, Some(seq)) = (left, entered.seq) {
                self.storage.leave(user, seq)?;
                self.with_batcher(|batcher| batcher.leave(seq, now))?;
            }
            let waiters = self.waiters.borrow_mut().remove(user).unwrap_or_default();
            for waiter in waiters {
                // A waiter gone (its request ended) is nobody to answer.
                let _ = waiter.send(entered.clone());
            }
        }
        self.schedule().await
    }

    /// The head refused `batch` for good: its newcomers' enters fail (they enter again;
    /// whoever the head numbered keeps the number), its leavers go with the next batch —
    /// or, when it carried nobody else, are given up with it — and the next batch goes.
    async fn give_up(&self, batch: &Batch, reason: &str, now: i64) -> Result<()> {
        worker::console_error!(
            "batch {} refused by the head, given up ({} to enter again): {reason}",
            batch.id,
            batch.users.len()
        );
        if let Some(refused) = self.with_batcher(|batcher| batcher.refused(batch.id, now))? {
            let done = Batch {
                left: refused.dropped,
                users: Vec::new(),
                ..batch.clone()
            };
            self.storage.answered(&done, &[])?;
            for user in &refused.users {
                self.leave_once_numbered.borrow_mut().remove(user);
                // Their waiters dropped: each enter is answered that it failed.
                self.waiters.borrow_mut().remove(user);
            }
        }
        self.schedule().await
    }
}
