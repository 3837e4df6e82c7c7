//! Bring your own identity provider (`JWT_JWKS_URL`, `docs/design/sessions.md`): its
//! key set, fetched and kept in this isolate's memory, and bearer tokens verified with it
//! beside the edge's own keys.
//!
//! When to fetch is the rules' decision (`rules::token::key_cache`): on the first of the
//! provider's tokens, when the set's TTL (its `Cache-Control`) has passed, and when a
//! token names a kid the set lacks — a rotation — at most once per
//! `JWT_JWKS_MIN_REFETCH_SECONDS`. Whatever goes wrong with a fetch (no answer, an
//! error, an answer that is not a key set the rules accept), one line says so with the
//! URL and the reason, and the last good set stays in use.
//!
//! A token that passed is kept in this isolate's memory until it expires
//! (`rules::token::verified`), a provider's with the generation of the key set — every
//! successful fetch is a new one (`KeyCache::provider_set`) — and no longer than that
//! set is fresh, so a session's
//! next request, or a flood of one token's refused requests, does not pay for its
//! signature again, and a key the provider withdrew stops the tokens it signed within the
//! set's TTL, as without the memory.
//!
//! One fetch at a time per isolate: a request whose token needs what a fetch under way
//! will bring waits for it on a timer of its own, then verifies with what it brought (it
//! cannot await the other request's fetch: the runtime cancels a request that waits on
//! I/O another request started; see `crate::queue::snapshots`). The edge's own tokens
//! never wait for, or cause, a fetch.

mod fetch;
pub mod settings;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use rules::token::key_cache::{ttl_ms, Decision, KeyCache, Need, Reason};
use rules::token::verified::{ProviderSet, VerifiedTokens, CAPACITY};
use rules::token::{AccessClaims, KeySource, ProviderKeys, TokenRejection};
use worker::Delay;

use crate::clock;
use crate::config::EdgeConfig;
pub use settings::JwksSettings;

/// How a request waits for another's fetch: in steps of this.
const WAIT_STEP: Duration = Duration::from_millis(20);
/// Rounds of deciding, verifying and waiting a request makes at most: more than a fetch
/// under way can hold it (the fetch's bound, in steps, and the fetches it may make).
const MAX_ROUNDS: u32 = 250;
/// How long a fetch under way holds others back: its own bound, and a margin.
const IN_FLIGHT_MS: i64 = 3_500;

thread_local! {
    static CACHE: RefCell<Option<KeyCache<Rc<ProviderKeys>>>> = const { RefCell::new(None) };
    static VERIFIED: RefCell<Option<VerifiedTokens>> = const { RefCell::new(None) };
}

/// Verifies a bearer token at `now_ms` with the edge's own keys and, when
/// `JWT_JWKS_URL` is set, the identity provider's; a token this isolate verified before
/// answers from its memory.
pub async fn verify(
    token: &str,
    config: &EdgeConfig,
    now_ms: i64,
) -> Result<AccessClaims, TokenRejection> {
    let generation = provider_set(config).generation;
    if let Some(claims) = verified(|kept| kept.get(token, generation, now_ms)) {
        return Ok(claims);
    }
    let verdict = verify_now(token, config, now_ms).await;
    if let Ok(claims) = &verdict {
        let (set, leeway) = (provider_set(config), config.policy.leeway_secs);
        verified(|kept| kept.keep(token, claims, set, leeway, now_ms));
    }
    verdict
}

/// The provider's key set in use: its generation, and until when it is fresh.
fn provider_set(config: &EdgeConfig) -> ProviderSet {
    config.jwks.as_ref().map_or(ProviderSet::NONE, |settings| {
        with_cache(settings, |cache| cache.provider_set())
    })
}

/// Runs `f` on this isolate's verified tokens, made on first use.
fn verified<T>(f: impl FnOnce(&mut VerifiedTokens) -> T) -> T {
    VERIFIED.with(|kept| {
        f(kept
            .borrow_mut()
            .get_or_insert_with(|| VerifiedTokens::new(CAPACITY)))
    })
}

/// Verifies a bearer token with the keys, fetching the provider's when they are needed.
async fn verify_now(
    token: &str,
    config: &EdgeConfig,
    now_ms: i64,
) -> Result<AccessClaims, TokenRejection> {
    let Some(settings) = &config.jwks else {
        return config.policy.verify(token, now_ms.div_euclid(1000));
    };
    let mut now = now_ms;
    for _ in 0..MAX_ROUNDS {
        let set = with_cache(settings, |cache| cache.set().cloned());
        let verdict = config
            .policy
            .verify_with(token, set.as_deref(), now.div_euclid(1000));
        let need = match &verdict {
            Err(TokenRejection::UnknownKey) => Need::UnknownKid,
            Ok(claims) if claims.source == KeySource::Provider => Need::Known,
            _ => return verdict,
        };
        match with_cache(settings, |cache| cache.decide(need, now)) {
            Decision::Use => return verdict,
            Decision::Wait => Delay::from(WAIT_STEP).await,
            Decision::Fetch(reason) => refresh(settings, config, reason, now).await,
        }
        now = clock::now_ms();
    }
    let set = with_cache(settings, |cache| cache.set().cloned());
    config
        .policy
        .verify_with(token, set.as_deref(), now.div_euclid(1000))
}

/// Runs `f` on this isolate's cache, made on first use.
fn with_cache<T>(
    settings: &JwksSettings,
    f: impl FnOnce(&mut KeyCache<Rc<ProviderKeys>>) -> T,
) -> T {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        f(cache.get_or_insert_with(|| KeyCache::new(settings.min_refetch_ms, IN_FLIGHT_MS)))
    })
}

/// Fetches the key set for `reason` and keeps it, or keeps the last good one and says why.
async fn refresh(settings: &JwksSettings, config: &EdgeConfig, reason: Reason, now_ms: i64) {
    with_cache(settings, |cache| cache.started(reason, now_ms));
    let url = &settings.url;
    let loaded = fetch::key_set(url).await.and_then(|fetched| {
        let keys = ProviderKeys::parse(&fetched.body, &config.policy.keys)
            .map_err(|err| err.to_string())?;
        Ok((keys, ttl_ms(fetched.cache_control.as_deref())))
    });
    let done = clock::now_ms();
    match loaded {
        Ok((keys, ttl)) => {
            let kids: Vec<&str> = keys.keys().kids().collect();
            let skipped: Vec<String> = keys
                .skipped()
                .iter()
                .map(|skipped| format!("`{}` ({})", skipped.key, skipped.reason))
                .collect();
            let why = match reason {
                Reason::First => "the first token of the provider",
                Reason::Expired => "the kept set expired",
                Reason::UnknownKid => "a token named a kid not in the set",
            };
            worker::console_log!(
                "JWT_JWKS_URL {url}: key set fetched ({why}): {} kept for {} s{}",
                kids.join(", "),
                ttl / 1000,
                match skipped.is_empty() {
                    true => String::new(),
                    false => format!("; skipped {}", skipped.join(", ")),
                }
            );
            with_cache(settings, |cache| cache.fetched(Rc::new(keys), ttl, done));
        }
        Err(why) => {
            let (retry_at, kept) = with_cache(settings, |cache| {
                let kept = cache
                    .set()
                    .map(|set| set.keys().len())
                    .zip(cache.fetched_at());
                (cache.failed(done), kept)
            });
            let kept = match kept {
                Some((keys, at)) => format!(
                    "the last good set is kept ({keys} key{}, fetched {} s ago)",
                    if keys == 1 { "" } else { "s" },
                    (done - at).max(0) / 1000
                ),
                None => "there is no key set yet: the provider's tokens are refused".to_owned(),
            };
            worker::console_error!(
                "JWT_JWKS_URL {url}: key set not updated: {why}; {kept}; next fetch in {} s at the earliest",
                (retry_at - done).max(0) / 1000
            );
        }
    }
}
