//! Stripe's webhook signature, as Stripe signs and as it is forged, replayed or broken.

use super::*;

const SECRET: &str = "whsec_test_secret";
const SIGNED_AT_S: i64 = 1_700_000_000;
const BODY: &[u8] =
    br#"{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"metadata":{"order_id":"order-1"}}}}"#;
/// HMAC-SHA256(SECRET, "1700000000." + BODY), made with Python's `hmac`, not this code.
const SIGNATURE: &str = "5c0148a74e0602c204859022ce886a89f21ab9f8e7187e527d528c7f09970339";

/// `secret`'s signature of `body` at `t`, as Stripe makes it.
fn sign(secret: &str, t: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

fn check(header: &str, now_ms: i64) -> Result<(), WebhookRefusal> {
    verify(Some(SECRET), Some(header.as_bytes()), BODY, now_ms)
}

fn refused(why: &'static str) -> Result<(), WebhookRefusal> {
    Err(WebhookRefusal::Signature(why))
}

const NOW_MS: i64 = SIGNED_AT_S * 1000;

#[test]
fn stripe_s_own_signature_verifies() {
    assert_eq!(sign(SECRET, SIGNED_AT_S, BODY), SIGNATURE);
    assert_eq!(
        check(&format!("t={SIGNED_AT_S},v1={SIGNATURE}"), NOW_MS),
        Ok(())
    );
}

#[test]
fn any_of_several_v1_signatures_may_match_and_other_schemes_are_ignored() {
    let old = sign("whsec_old_secret", SIGNED_AT_S, BODY);
    let header = format!("t={SIGNED_AT_S}, v1={old}, v1={SIGNATURE}, v0=6ffbb59b2300aae63f27");
    assert_eq!(check(&header, NOW_MS), Ok(()));
}

#[test]
fn another_secret_s_signature_is_refused() {
    let forged = sign("whsec_another_secret", SIGNED_AT_S, BODY);
    let header = format!("t={SIGNED_AT_S},v1={forged}");
    assert_eq!(check(&header, NOW_MS), refused("no v1 signature matches"));
}

#[test]
fn a_tampered_body_or_time_is_refused() {
    let header = format!("t={SIGNED_AT_S},v1={SIGNATURE}");
    let tampered = BODY
        .to_vec()
        .into_iter()
        .map(|b| if b == b'1' { b'2' } else { b });
    let tampered: Vec<u8> = tampered.collect();
    assert_eq!(
        verify(Some(SECRET), Some(header.as_bytes()), &tampered, NOW_MS),
        refused("no v1 signature matches")
    );
    let later = format!("t={},v1={SIGNATURE}", SIGNED_AT_S + 1);
    assert_eq!(check(&later, NOW_MS), refused("no v1 signature matches"));
}

#[test]
fn a_signature_older_than_300_s_is_refused_and_one_of_300_s_is_not() {
    let header = format!("t={SIGNED_AT_S},v1={SIGNATURE}");
    assert_eq!(check(&header, NOW_MS + 300_000), Ok(()));
    assert_eq!(
        check(&header, NOW_MS + 301_000),
        refused("signed more than 300 s ago")
    );
}

#[test]
fn a_signature_from_more_than_300_s_ahead_is_refused() {
    let header = format!("t={SIGNED_AT_S},v1={SIGNATURE}");
    assert_eq!(check(&header, NOW_MS - 300_000), Ok(()));
    assert_eq!(
        check(&header, NOW_MS - 301_000),
        refused("signed more than 300 s ahead of our clock")
    );
}

#[test]
fn without_a_header_or_a_secret_nothing_is_accepted() {
    assert_eq!(
        verify(Some(SECRET), None, BODY, NOW_MS),
        refused("no Stripe-Signature header")
    );
    let header = format!("t={SIGNED_AT_S},v1={SIGNATURE}");
    assert_eq!(
        verify(None, Some(header.as_bytes()), BODY, NOW_MS),
        refused("GATEWAY_WEBHOOK_SECRET is not set")
    );
}

#[test]
fn a_malformed_header_is_refused() {
    let v1 = format!("v1={SIGNATURE}");
    let too_many = format!("t={SIGNED_AT_S}{}", format!(",{v1}").repeat(9));
    for header in [
        String::new(),
        v1.clone(),
        format!("t=soon,{v1}"),
        format!("t={SIGNED_AT_S},t={SIGNED_AT_S},{v1}"),
        format!("t={SIGNED_AT_S},v1=not-hex"),
        format!("t={SIGNED_AT_S};{v1}"),
        format!("t={},{v1}", i64::MAX),
        too_many,
    ] {
        assert_eq!(
            check(&header, NOW_MS),
            refused("the Stripe-Signature header is malformed"),
            "{header:?}"
        );
    }
    assert_eq!(
        check(&format!("t={SIGNED_AT_S},v0={SIGNATURE}"), NOW_MS),
        refused("the Stripe-Signature header has no v1 signature")
    );
    assert_eq!(
        verify(Some(SECRET), Some(&[0xff, 0xfe][..]), BODY, NOW_MS),
        refused("the Stripe-Signature header is malformed")
    );
}
