//! The per-user session object: one Durable Object per user id (`sub`), holding that
//! user's access-token denylist and refresh-token families.
//!
//! - [`protocol`] — the requests the Worker sends the object, and its answers.
//! - [`object`] — the Durable Object itself: SQLite storage and the cleanup alarm.
//! - [`families`] — the user's logins: opened, rotated, revoked, bounded.
//! - [`client`] — the Worker's side: one call per request to the user's object.

pub mod client;
pub mod families;
pub mod object;
pub mod protocol;
