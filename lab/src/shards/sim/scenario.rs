//! What a simulated drop is — its arrivals, shards, and an object lost mid-drop — what
//! it assumes of the platform, and what one run saw.

/// A shard's call to the head and its answer, the head's work included.
pub const HEAD_CALL_MS: i64 = 5;
/// From an object's loss to its first answer: workerd's, measured
/// (`docs/room-at-a-million.md`: 0.18 s).
pub const RESTART_MS: i64 = 180;
/// A client whose enter failed sends it again this much later.
pub const CLIENT_RETRY_MS: i64 = 300;
/// A shard whose call to the head failed calls again this much later.
pub const SHARD_RETRY_MS: i64 = 100;
/// The data centres the drop's people come through: each fetches the head's snapshot
/// once a second for the polls of everyone there (the Cache API shares it).
pub const DATA_CENTRES: u64 = 20;
/// An admitted person claims their pass (a confirm) and pays this long after it is
/// issued, give or take half; one in fifty of the rest gives up and leaves 5–50 s
/// after arriving.
pub const PAYS_AFTER_MS: i64 = 20_000;
/// An object lost mid-drop, and when.
#[derive(Debug, Clone, Copy)]
pub enum Restart {
    Shard { shard: u32, at_ms: i64 },
    Head { at_ms: i64 },
}

#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    pub arrivals: u32,
    pub over_ms: i64,
    pub shards: u32,
    pub restart: Option<Restart>,
}

/// What one run saw.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Requests each shard received, by the second; the head's.
    pub shard_rps: Vec<Vec<u64>>,
    pub head_rps: Vec<u64>,
    /// Enters each shard received.
    pub shard_enters: Vec<u64>,
    /// Answers and final snapshots checked against the reference, and how many differed.
    pub checked: u64,
    pub wrong: u64,
    /// From arrival to the answer that numbered them, per person, ms.
    pub waits_ms: Vec<i64>,
    /// The most a person numbered ahead of another came after them, ms.
    pub max_inversion_ms: i64,
    /// Arrived and never numbered; numbered twice.
    pub lost: u64,
    pub twice: u64,
    /// Of the restarted object's people waiting at its loss, the longest until answered.
    pub back_within_ms: Option<i64>,
    pub affected: u64,
}
