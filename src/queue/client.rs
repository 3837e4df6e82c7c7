//! The Worker's side of an event's waiting room.

use std::cell::Cell;

use rules::drop::RoomUpdate;

use super::protocol::{Configured, DrawList, Entered, PassClaim, Placement, Report, RoomRequest};
use crate::arrivals::client::{user_shard, BINDING as SHARDS};
use crate::arrivals::object::ShardCall;
use crate::clock::now_ms;
use crate::durable_call::{call_object, call_object_for_body, tell_object, ObjectUnavailable};

/// The Durable Object namespace binding in `wrangler.toml`.
pub const BINDING: &str = "WAITING_ROOMS";

thread_local! {
    static CALLS: Cell<u64> = const { Cell::new(0) };
}

/// How many calls this isolate has made to rooms since it started (`/healthz` shows it):
/// beside the polls it answered, what those polls cost the rooms.
pub fn calls() -> u64 {
    CALLS.with(Cell::get)
}

fn counted() {
    CALLS.with(|calls| calls.set(calls.get() + 1));
}

/// Marks the room of `event_id` sold out (idempotent): nobody new joins its line.
pub async fn mark_sold_out(env: &worker::Env, event_id: &str) -> Result<(), ObjectUnavailable> {
    counted();
    tell_object(env, BINDING, event_id, &RoomRequest::MarkSoldOut).await
}

/// Pauses payments in the room of `event_id` for `for_ms` from now (a shorter pause than
/// the one in force changes nothing).
pub async fn pause_payments(
    env: &worker::Env,
    event_id: &str,
    for_ms: u64,
) -> Result<(), ObjectUnavailable> {
    counted();
    tell_object(
        env,
        BINDING,
        event_id,
        &RoomRequest::PausePayments { for_ms },
    )
    .await
}

/// Hands the room of `event_id` an operator's settings for its drop.
pub async fn configure(
    env: &worker::Env,
    event_id: &str,
    update: &RoomUpdate,
) -> Result<Configured, ObjectUnavailable> {
    counted();
    let request = RoomRequest::Configure {
        update: update.clone(),
    };
    call_object(env, BINDING, event_id, &request).await
}

/// The room of `event_id`, for operators.
pub async fn report(env: &worker::Env, event_id: &str) -> Result<Report, ObjectUnavailable> {
    counted();
    call_object(env, BINDING, event_id, &RoomRequest::Report).await
}

/// The draw of `event_id`'s room, for audit: `limit` people from place `from`.
pub async fn draw_list(
    env: &worker::Env,
    event_id: &str,
    from: u64,
    limit: u32,
) -> Result<DrawList, ObjectUnavailable> {
    counted();
    call_object(
        env,
        BINDING,
        event_id,
        &RoomRequest::DrawList { from, limit },
    )
    .await
}

/// The room of `event_id`'s snapshot, encoded (`rules::queue::snapshot`).
pub async fn snapshot(env: &worker::Env, event_id: &str) -> Result<Vec<u8>, ObjectUnavailable> {
    counted();
    call_object_for_body(env, BINDING, event_id, &RoomRequest::Snapshot).await
}

/// The waiting room of one event, on behalf of one user: the enters, polls and leaves go
/// to the user's arrival shard when the event has more than one (`crate::arrivals`), the
/// rest to its room.
pub struct WaitingRoomClient<'a> {
    env: &'a worker::Env,
    event_id: &'a str,
    user: &'a str,
    /// The key shards are chosen under (the ticket key).
    shard_key: &'a [u8],
}

impl<'a> WaitingRoomClient<'a> {
    pub fn new(
        env: &'a worker::Env,
        shard_key: &'a [u8],
        event_id: &'a str,
        user: &'a str,
    ) -> Self {
        Self {
            env,
            event_id,
            user,
            shard_key,
        }
    }

    pub async fn enter(&self) -> Result<Entered, ObjectUnavailable> {
        self.arrival_call(RoomRequest::Enter {
            user: self.user.to_owned(),
        })
        .await
    }

    /// `None` when the user is not in the line.
    pub async fn status(&self) -> Result<Option<Placement>, ObjectUnavailable> {
        let request = RoomRequest::Status {
            user: self.user.to_owned(),
        };
        self.arrival_call(request).await
    }

    pub async fn leave(&self) -> Result<(), ObjectUnavailable> {
        self.arrival_tell(RoomRequest::Leave {
            user: self.user.to_owned(),
        })
        .await
    }

    pub async fn claim_pass(&self, order_id: &str) -> Result<PassClaim, ObjectUnavailable> {
        let request = RoomRequest::ClaimPass {
            user: self.user.to_owned(),
            order_id: order_id.to_owned(),
        };
        self.call(request).await
    }

    pub async fn release_claim(&self, order_id: &str) -> Result<(), ObjectUnavailable> {
        let request = RoomRequest::ReleaseClaim {
            user: self.user.to_owned(),
            order_id: order_id.to_owned(),
        };
        self.tell(request).await
    }

    pub async fn untie_claim(&self, order_id: &str) -> Result<(), ObjectUnavailable> {
        let request = RoomRequest::UntieClaim {
            user: self.user.to_owned(),
            order_id: order_id.to_owned(),
        };
        self.tell(request).await
    }

    pub async fn consume(&self) -> Result<(), ObjectUnavailable> {
        self.arrival_tell(RoomRequest::Consume {
            user: self.user.to_owned(),
        })
        .await
    }

    /// Where the user's arrivals — enter, poll, leave, consume — go: their shard when the
    /// event has more than one, else the room. When the directory cannot say (no copy of
    /// it in the last minute), nowhere: the call fails and the user is told to come back,
    /// so a sharded event's crowd never lands on its room.
    async fn shard(&self) -> Result<Option<(String, u32)>, ObjectUnavailable> {
        let shard =
            user_shard(self.env, self.shard_key, self.event_id, self.user, now_ms()).await?;
        Ok(shard.map(|shard| (shard.name(self.event_id), shard.shards)))
    }

    fn shard_call(&self, request: RoomRequest, shards: u32) -> ShardCall {
        ShardCall {
            event: self.event_id.to_owned(),
            shards,
            call: request,
        }
    }

    async fn arrival_call<T: serde::de::DeserializeOwned>(
        &self,
        request: RoomRequest,
    ) -> Result<T, ObjectUnavailable> {
        match self.shard().await? {
            None => self.call(request).await,
            Some((name, shards)) => {
                counted();
                call_object(self.env, SHARDS, &name, &self.shard_call(request, shards)).await
            }
        }
    }

    async fn arrival_tell(&self, request: RoomRequest) -> Result<(), ObjectUnavailable> {
        match self.shard().await? {
            None => self.tell(request).await,
            Some((name, shards)) => {
                counted();
                tell_object(self.env, SHARDS, &name, &self.shard_call(request, shards)).await
            }
        }
    }

    async fn call<T: serde::de::DeserializeOwned>(
        &self,
        request: RoomRequest,
    ) -> Result<T, ObjectUnavailable> {
        counted();
        call_object(self.env, BINDING, self.event_id, &request).await
    }

    async fn tell(&self, request: RoomRequest) -> Result<(), ObjectUnavailable> {
        counted();
        tell_object(self.env, BINDING, self.event_id, &request).await
    }
}
