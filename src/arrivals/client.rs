//! The Worker's side of an event's arrival shards: which shard a user's calls go to.

use rules::queue::arrivals::shard_of;

/// The Durable Object namespace binding in `wrangler.toml`.
pub const BINDING: &str = "ARRIVAL_SHARDS";

/// The name of `user`'s shard of `event`'s `shards`: chosen by the server under its
/// ticket key, so nobody picks theirs or learns another's.
pub fn shard_name(key: &[u8], event: &str, user: &str, shards: u32) -> String {
    format!("{event}#{}", shard_of(key, event, user, shards))
}
