//! The first-come queue of an event: one `WaitingRoom` Durable Object per event id.
//!
//! - [`protocol`] — the calls the Worker makes to a room, and the `QueueStatus` answer.
//! - [`object`] — the Durable Object: the in-memory index (`rules::queue::EventQueue`)
//!   rebuilt from its storage ([`storage`], the truth) when the object starts, an alarm
//!   that expires unused passes, and the line's snapshot.
//! - `batch` — a batch from one of the event's arrival shards (`crate::arrivals`).
//! - `opening` — a drop defined at run time, in its room: settings, prequeue, report;
//!   `draw` — the prequeue drawn at the opening, in batches through the alarm.
//! - [`client`] — the Worker's side.
//! - [`snapshots`] — the Worker's copy of each room's snapshot, at most a second old, and
//!   the ticket holders' polls answered from it; [`shared_snapshots`] — the copies a data
//!   centre's isolates share through the Cache API.

mod batch;
pub mod client;
mod draw;
pub mod object;
mod opening;
pub mod protocol;
pub mod shared_snapshots;
pub mod snapshots;
pub mod storage;
