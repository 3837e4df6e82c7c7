//! The first-come queue of an event: one `WaitingRoom` Durable Object per event id.
//!
//! - [`protocol`] — the calls the Worker makes to a room, and the `QueueStatus` answer.
//! - [`object`] — the Durable Object: SQLite is the truth, the in-memory index
//!   (`rules::queue::EventQueue`) is rebuilt from it when the object starts, and an
//!   alarm expires unused passes.
//! - [`client`] — the Worker's side.

pub mod client;
pub mod object;
pub mod protocol;
