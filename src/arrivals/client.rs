//! The Worker's side of an event's arrival shards: which shard a user's calls go to.

use rules::queue::arrivals::shard_of;

use crate::directory;
use crate::durable_call::ObjectUnavailable;

/// The Durable Object namespace binding in `wrangler.toml`.
pub const BINDING: &str = "ARRIVAL_SHARDS";

/// A user's arrival shard of an event with more than one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserShard {
    /// From 0: the server's choice under its ticket key, so nobody picks theirs or
    /// learns another's.
    pub index: u32,
    /// The event's shards.
    pub shards: u32,
}

impl UserShard {
    /// The shard's object name: `{event}#{index}`.
    pub fn name(&self, event: &str) -> String {
        format!("{event}#{}", self.index)
    }
}

/// `user`'s arrival shard of `event` at `now_ms`, `None` when the event has one (its
/// room takes the arrivals). The shards are read from the event directory (a copy at
/// most a second old, up to a minute while it cannot answer); with no copy the error
/// stands — the caller answers 503 rather than send a sharded event's crowd to its room
/// (`docs/design/queue.md`, "Many shards").
pub async fn user_shard(
    env: &worker::Env,
    key: &[u8],
    event: &str,
    user: &str,
    now_ms: i64,
) -> Result<Option<UserShard>, ObjectUnavailable> {
    let shards = directory::client::shards(env, event, now_ms).await?;
    Ok((shards > 1).then(|| UserShard {
        index: shard_of(key, event, user, shards),
        shards,
    }))
}
