//! When the provider's key set is fetched, as scripts on plain numbers (milliseconds):
//!
//! - `@T` — the time is now T;
//! - `known=D` / `unknown=D` — a token whose kid is in the set / in no set is decided
//!   `D`: `use`, `wait`, or a fetch — `first`, `expired`, `kid` — which the script then
//!   starts at once;
//! - `ok:TTL` — the fetch under way brings set number N (counted from 1), kept TTL ms;
//!   `fail` — it fails;
//! - `set=N` — the set kept is number N (`set=-` for none).
//!
//! One scripted behaviour per test, so the first failure does not hide the rest.

use crate::token::key_cache::{ttl_ms, Decision, KeyCache, Need, Reason};
use crate::token::key_cache::{DEFAULT_TTL_MS, MAX_TTL_MS, MIN_TTL_MS};

/// `JWT_JWKS_MIN_REFETCH_SECONDS`' default, and the shell's bound on one fetch.
const MIN_REFETCH_MS: i64 = 30_000;
const FETCH_TIMEOUT_MS: i64 = 3_500;

fn check(script: &str) {
    let mut cache: KeyCache<u32> = KeyCache::new(MIN_REFETCH_MS, FETCH_TIMEOUT_MS);
    let (mut now, mut sets) = (0, 0);
    for step in script.split_whitespace() {
        let at = format!("at {now} ms, `{step}` in `{script}`");
        if let Some(time) = step.strip_prefix('@') {
            now = time.parse().unwrap();
        } else if let Some(ttl) = step.strip_prefix("ok:") {
            sets += 1;
            cache.fetched(sets, ttl.parse().unwrap(), now);
        } else if step == "fail" {
            assert_eq!(cache.failed(now), now + MIN_REFETCH_MS, "{at}");
        } else if let Some(expected) = step.strip_prefix("set=") {
            let kept = cache.set().map_or("-".to_owned(), u32::to_string);
            assert_eq!(kept, expected, "{at}");
        } else {
            let (need, expected) = step.split_once('=').unwrap();
            let need = match need {
                "known" => Need::Known,
                "unknown" => Need::UnknownKid,
                other => panic!("no need `{other}`"),
            };
            let decision = cache.decide(need, now);
            let name = match decision {
                Decision::Use => "use",
                Decision::Wait => "wait",
                Decision::Fetch(Reason::First) => "first",
                Decision::Fetch(Reason::Expired) => "expired",
                Decision::Fetch(Reason::UnknownKid) => "kid",
            };
            assert_eq!(name, expected, "{at}");
            if let Decision::Fetch(reason) = decision {
                cache.started(reason, now);
            }
        }
    }
}

#[test]
fn the_first_token_fetches_and_those_beside_it_wait_for_that_fetch() {
    check("set=- known=first @10 known=wait unknown=wait @200 ok:300000 set=1 known=use");
}

#[test]
fn a_set_is_used_until_its_ttl_then_fetched_again_before_use() {
    check("known=first ok:60000 @59999 known=use @60000 known=expired @60100 known=use ok:60000 set=2 @61000 known=use");
}

#[test]
fn while_an_expired_set_is_fetched_again_other_tokens_use_it_as_it_is() {
    check("known=first ok:60000 @60000 known=expired @60001 known=use unknown=wait @60500 ok:60000 known=use");
}

#[test]
fn an_unknown_kid_fetches_at_once_after_the_first_fetch_then_once_per_30_seconds() {
    check("known=first ok:300000 @1000 unknown=kid ok:300000 set=2 @1001 unknown=use @30999 unknown=use @31000 unknown=kid");
}

#[test]
fn many_unknown_kids_in_a_row_make_one_fetch() {
    check("known=first ok:300000 @5 unknown=kid @6 unknown=wait @7 unknown=wait @8 ok:300000 unknown=use @9 unknown=use @29999 unknown=use");
}

#[test]
fn a_failed_fetch_keeps_the_last_good_set_and_nothing_is_fetched_for_30_seconds() {
    check("known=first ok:60000 @10000 unknown=kid fail set=1 known=use unknown=use @39999 unknown=use @40000 unknown=kid");
}

#[test]
fn a_failed_first_fetch_leaves_no_set_and_is_tried_again_30_seconds_later() {
    check("known=first fail set=- known=use unknown=use @29999 known=use @30000 unknown=first ok:300000 set=1");
}

#[test]
fn a_failed_expiry_fetch_is_tried_again_30_seconds_later_with_the_old_set_in_use() {
    check("known=first ok:30000 @30000 known=expired fail set=1 @59999 known=use @60000 known=expired ok:30000 set=2");
}

#[test]
fn a_fetch_whose_request_was_cancelled_holds_no_one_back_past_its_timeout() {
    check("known=first @3499 known=wait @3500 known=first ok:30000 set=1");
    check("known=first ok:300000 @100 unknown=kid @3599 unknown=wait @3600 unknown=use @30100 unknown=kid");
}

#[test]
fn the_ttl_is_s_maxage_or_max_age_within_its_bounds() {
    let cases = [
        (None, DEFAULT_TTL_MS),
        (Some(""), DEFAULT_TTL_MS),
        (Some("public, max-age=600"), 600_000),
        (Some("Max-Age=\"600\", must-revalidate"), 600_000),
        (Some("max-age=600, s-maxage=1200"), 1_200_000),
        (Some("s-maxage=1200, max-age=600"), 1_200_000),
        (Some("max-age=1"), MIN_TTL_MS),
        (Some("max-age=0"), MIN_TTL_MS),
        (Some("max-age=-5"), MIN_TTL_MS),
        (Some("max-age=31536000"), MAX_TTL_MS),
        (Some("max-age=99999999999999999"), MAX_TTL_MS),
        (Some("max-age=99999999999999999999"), DEFAULT_TTL_MS),
        (Some("max-age=soon"), DEFAULT_TTL_MS),
        (Some("no-store"), DEFAULT_TTL_MS),
        (Some("no-cache, max-age=600"), DEFAULT_TTL_MS),
        (Some("private, max-age=600"), 600_000),
    ];
    for (header, expected) in cases {
        assert_eq!(ttl_ms(header), expected, "{header:?}");
    }
}

#[test]
fn each_good_fetch_is_a_new_generation_fresh_for_its_ttl_and_a_failure_keeps_the_last() {
    use crate::token::verified::ProviderSet;
    let mut cache: KeyCache<u32> = KeyCache::new(MIN_REFETCH_MS, FETCH_TIMEOUT_MS);
    assert_eq!(cache.provider_set(), ProviderSet::NONE);
    cache.fetched(1, 60_000, 1_000);
    let first = ProviderSet {
        generation: 1,
        fresh_until_ms: 61_000,
    };
    assert_eq!(cache.provider_set(), first);
    cache.failed(70_000);
    assert_eq!(cache.provider_set(), first, "the last good set stays");
    cache.fetched(2, 60_000, 100_000);
    let second = ProviderSet {
        generation: 2,
        fresh_until_ms: 160_000,
    };
    assert_eq!(cache.provider_set(), second);
}
