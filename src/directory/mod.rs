//! The events operators defined at run time, for every isolate: one `EventDirectory`
//! Durable Object (`object.rs`) holding which events' confirms need a pass, and the
//! Worker's copy of it (`client.rs`), at most a second old. `GATED_EVENTS` stays the
//! default for events nobody configured.

pub mod client;
pub mod object;
