//! An event's arrivals spread over many objects (`docs/design/queue.md`, "Many shards"):
//! the `ArrivalShard` Durable Object ([`object`], its SQLite in [`storage`]) and the
//! Worker's side ([`client`]). The rules — who goes to which shard, the batches, the
//! head's numbering — are `rules::queue::arrivals`.

pub mod client;
pub mod object;
pub mod storage;
