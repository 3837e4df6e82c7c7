//! When an isolate fetches the identity provider's key set again: the decision table of
//! `JWT_JWKS_URL`'s cache, with the time a parameter, so every rule is tested on plain
//! numbers (`tests/key_cache.rs`).
//!
//! - **No set yet**: fetch. Until one is fetched the provider's tokens are refused (the
//!   edge's own keep working).
//! - **Expired** (its TTL from `Cache-Control`, [`ttl_ms`]): fetch before using it, so a
//!   key the provider withdrew stops verifying within the TTL.
//! - **A token names a kid the set lacks** (a rotation): fetch, but at most once per
//!   `min_refetch_ms` (`JWT_JWKS_MIN_REFETCH_SECONDS`, 30 s): made-up kids cannot make
//!   the edge hammer the provider.
//! - **A fetch failed**: the last good set stays — expired or not, it is what there is
//!   — and nothing is fetched again before `min_refetch_ms` has passed since.
//! - **A fetch is under way** (until it ends, or `fetch_timeout_ms` after it began, if its
//!   request was cancelled): nothing more is fetched. A token whose key is in the set
//!   uses it as it is; one that needs what the fetch brings waits for it.

use super::verified::ProviderSet;

/// The TTL when `Cache-Control` gives none, or forbids keeping the answer: the edge
/// cannot fetch the set for every request, so it keeps it this long.
pub const DEFAULT_TTL_MS: i64 = 5 * 60 * 1000;
/// No set is kept for less — an answer that says `max-age=0` is fetched again no more
/// often than this — nor for more: a provider's withdrawal of a key is seen within a day.
pub const MIN_TTL_MS: i64 = 30 * 1000;
pub const MAX_TTL_MS: i64 = 24 * 60 * 60 * 1000;

/// How long the key set of an answer with this `Cache-Control` is kept: `s-maxage`,
/// else `max-age`, within [`MIN_TTL_MS`]..=[`MAX_TTL_MS`]; [`DEFAULT_TTL_MS`] when the
/// header is absent, says neither, or says `no-store` or `no-cache`.
pub fn ttl_ms(cache_control: Option<&str>) -> i64 {
    let (mut max_age, mut s_maxage, mut forbidden) = (None, None, false);
    for directive in cache_control.unwrap_or_default().split(',') {
        let (name, value) = directive.split_once('=').unwrap_or((directive, ""));
        let seconds = value.trim().trim_matches('"').parse::<i64>().ok();
        match name.trim().to_ascii_lowercase().as_str() {
            "max-age" => max_age = max_age.or(seconds),
            "s-maxage" => s_maxage = s_maxage.or(seconds),
            "no-store" | "no-cache" => forbidden = true,
            _ => {}
        }
    }
    match s_maxage.or(max_age) {
        Some(seconds) if !forbidden => seconds.saturating_mul(1000).clamp(MIN_TTL_MS, MAX_TTL_MS),
        _ => DEFAULT_TTL_MS,
    }
}

/// What a token needs of the set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Its key is in the set (or it is not the provider's token at all).
    Known,
    /// Its kid is in no set the edge has.
    UnknownKid,
}

/// Why a fetch is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    First,
    Expired,
    UnknownKid,
}

/// What to do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Verify with the set there is (maybe none).
    Use,
    /// Another request's fetch will bring what is needed: wait for it, then decide again.
    Wait,
    /// Fetch; say so with [`KeyCache::started`], then the outcome.
    Fetch(Reason),
}

/// The set an isolate keeps, and when it fetched what.
#[derive(Debug)]
pub struct KeyCache<S> {
    min_refetch_ms: i64,
    fetch_timeout_ms: i64,
    /// The last good set and until when it is fresh.
    kept: Option<(S, i64)>,
    /// Good sets fetched so far: the last one's generation.
    generation: u64,
    fetched_at: Option<i64>,
    in_flight_until: Option<i64>,
    unknown_kid_fetch_at: Option<i64>,
    failed_at: Option<i64>,
}

impl<S> KeyCache<S> {
    pub fn new(min_refetch_ms: i64, fetch_timeout_ms: i64) -> Self {
        Self {
            min_refetch_ms,
            fetch_timeout_ms,
            kept: None,
            generation: 0,
            fetched_at: None,
            in_flight_until: None,
            unknown_kid_fetch_at: None,
            failed_at: None,
        }
    }

    /// The last good set, fresh or not.
    pub fn set(&self) -> Option<&S> {
        self.kept.as_ref().map(|(set, _)| set)
    }

    /// The last good set as a verified token is kept by: its generation (every good
    /// fetch makes a new one) and until when it is fresh; [`ProviderSet::NONE`] before
    /// the first.
    pub fn provider_set(&self) -> ProviderSet {
        self.kept
            .as_ref()
            .map_or(ProviderSet::NONE, |(_, fresh_until_ms)| ProviderSet {
                generation: self.generation,
                fresh_until_ms: *fresh_until_ms,
            })
    }

    /// When the last good set was fetched.
    pub fn fetched_at(&self) -> Option<i64> {
        self.fetched_at
    }

    /// What a token that needs `need` does at `now_ms`.
    pub fn decide(&self, need: Need, now_ms: i64) -> Decision {
        let spaced = |at: Option<i64>| at.is_none_or(|at| now_ms - at >= self.min_refetch_ms);
        let in_flight = self.in_flight_until.is_some_and(|until| now_ms < until);
        let may_fetch = !in_flight && spaced(self.failed_at);
        let needs_the_fetch = need == Need::UnknownKid || self.kept.is_none();
        match &self.kept {
            _ if in_flight && needs_the_fetch => Decision::Wait,
            None if may_fetch => Decision::Fetch(Reason::First),
            Some((_, fresh_until)) if now_ms >= *fresh_until && may_fetch => {
                Decision::Fetch(Reason::Expired)
            }
            Some(_)
                if need == Need::UnknownKid && may_fetch && spaced(self.unknown_kid_fetch_at) =>
            {
                Decision::Fetch(Reason::UnknownKid)
            }
            _ => Decision::Use,
        }
    }

    /// A fetch for `reason` begins at `now_ms`.
    pub fn started(&mut self, reason: Reason, now_ms: i64) {
        self.in_flight_until = Some(now_ms.saturating_add(self.fetch_timeout_ms));
        if reason == Reason::UnknownKid {
            self.unknown_kid_fetch_at = Some(now_ms);
        }
    }

    /// The fetch brought `set`, to be kept `ttl_ms`.
    pub fn fetched(&mut self, set: S, ttl_ms: i64, now_ms: i64) {
        self.kept = Some((set, now_ms.saturating_add(ttl_ms)));
        self.generation += 1;
        self.fetched_at = Some(now_ms);
        self.in_flight_until = None;
        self.failed_at = None;
    }

    /// The fetch failed (no answer in time, or one that was refused): the last good set
    /// stays. Returns when a fetch may be made again.
    pub fn failed(&mut self, now_ms: i64) -> i64 {
        self.in_flight_until = None;
        self.failed_at = Some(now_ms);
        now_ms.saturating_add(self.min_refetch_ms)
    }
}
