//! Idempotency-Keys, as Toss keeps them.
//!
//! Toss's identity of a request is (key, API key, URL, method), and the body
//! is no part of it: a key reused for another order replays the first order's
//! answer. The simulator accepts one API key and honours keys on POST only, so
//! a key here is told apart by its path. A key is claimed while its request is
//! processed (a repeat meanwhile is told `IDEMPOTENT_REQUEST_PROCESSING`), then
//! either holds the first answer, replayed byte for byte for
//! [`KEY_LIFETIME_MS`] from its first use, or is released, leaving nothing
//! behind: the caller decides which (see `routes::idempotency`).

use std::collections::HashMap;

use super::ChargeId;

/// Toss keeps a key 15 days from its first use.
pub const KEY_LIFETIME_MS: u64 = 15 * 24 * 60 * 60 * 1000;

/// An answer as it went on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    pub status: u16,
    pub body: Vec<u8>,
}

/// What a key says about a request that carries it.
#[derive(Debug, PartialEq, Eq)]
pub enum Claim {
    /// Nothing under the key: the request is processed, and the key is the
    /// caller's until it completes or releases it.
    Fresh(KeyClaim),
    /// The first request's answer, to send again; nothing is processed.
    Replay(StoredAnswer),
    /// The first request is still being processed.
    InFlight,
}

/// A key held while its request is processed.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a claimed key is completed or released"]
pub struct KeyClaim {
    pub(super) identity: (String, String),
    pub(super) id: u64,
}

#[derive(Debug)]
enum Entry {
    InFlight { id: u64, first_used_at: u64 },
    Done(Done),
}

#[derive(Debug)]
struct Done {
    answer: StoredAnswer,
    /// The charge the answer tells of, whose confirms a replay counts.
    charge: Option<ChargeId>,
    first_used_at: u64,
}

#[derive(Debug, Default)]
pub(super) struct Keys {
    entries: HashMap<(String, String), Entry>,
    claims: u64,
}

impl Keys {
    /// Looks `key` up under `path`, claiming it when nothing live is there.
    /// A replay comes with the charge its answer tells of.
    pub(super) fn claim(
        &mut self,
        path: &str,
        key: &str,
        now_ms: u64,
    ) -> (Claim, Option<ChargeId>) {
        let identity = (path.to_owned(), key.to_owned());
        match self.entries.get(&identity) {
            Some(Entry::InFlight { .. }) => return (Claim::InFlight, None),
            Some(Entry::Done(done))
                if now_ms < done.first_used_at.saturating_add(KEY_LIFETIME_MS) =>
            {
                return (Claim::Replay(done.answer.clone()), done.charge);
            }
            // Expired: the key is new again.
            Some(Entry::Done(_)) | None => {}
        }
        self.claims += 1;
        let id = self.claims;
        self.entries.insert(
            identity.clone(),
            Entry::InFlight {
                id,
                first_used_at: now_ms,
            },
        );
        (Claim::Fresh(KeyClaim { identity, id }), None)
    }

    /// Keeps `answer` under the claimed key, for every repeat to get.
    pub(super) fn complete(
        &mut self,
        claim: KeyClaim,
        answer: StoredAnswer,
        charge: Option<ChargeId>,
    ) {
        if let Some(entry) = self.entries.get_mut(&claim.identity) {
            if let Entry::InFlight { id, first_used_at } = *entry {
                if id == claim.id {
                    *entry = Entry::Done(Done {
                        answer,
                        charge,
                        first_used_at,
                    });
                }
            }
        }
    }

    /// Lets the key go: the next request under it is processed afresh.
    pub(super) fn release(&mut self, claim: KeyClaim) {
        let held = matches!(
            self.entries.get(&claim.identity),
            Some(Entry::InFlight { id, .. }) if *id == claim.id
        );
        if held {
            self.entries.remove(&claim.identity);
        }
    }
}
