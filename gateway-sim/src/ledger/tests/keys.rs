//! Idempotency-Keys: claimed, kept, replayed, released, expired.

use super::*;

const CONFIRM: &str = "/v1/payments/confirm";

fn answer(body: &str) -> StoredAnswer {
    StoredAnswer {
        status: 200,
        body: body.as_bytes().to_vec(),
    }
}

fn fresh(ledger: &mut Ledger, path: &str, key: &str, now_ms: u64) -> KeyClaim {
    match ledger.claim_key(path, key, now_ms) {
        Claim::Fresh(claim) => claim,
        other => panic!("{key} under {path} is not fresh: {other:?}"),
    }
}

#[test]
fn a_kept_answer_is_replayed_and_a_claimed_key_is_in_flight() {
    let mut ledger = Ledger::default();
    let claim = fresh(&mut ledger, CONFIRM, "k-1", 0);
    assert_eq!(ledger.claim_key(CONFIRM, "k-1", 1), Claim::InFlight);
    ledger.complete_key(claim, answer("first"), None);
    assert_eq!(
        ledger.claim_key(CONFIRM, "k-1", 2),
        Claim::Replay(answer("first"))
    );
    assert_eq!(
        ledger.claim_key(CONFIRM, "k-1", 3),
        Claim::Replay(answer("first"))
    );
}

#[test]
fn a_key_is_told_apart_by_its_path() {
    let mut ledger = Ledger::default();
    let claim = fresh(&mut ledger, CONFIRM, "k-1", 0);
    ledger.complete_key(claim, answer("confirm"), None);
    let cancel = fresh(&mut ledger, "/v1/payments/pk-1/cancel", "k-1", 1);
    ledger.release_key(cancel);
    let other = fresh(&mut ledger, "/v1/payments/pk-2/cancel", "k-1", 2);
    ledger.release_key(other);
}

#[test]
fn a_released_key_is_fresh_again() {
    let mut ledger = Ledger::default();
    let claim = fresh(&mut ledger, CONFIRM, "k-1", 0);
    ledger.release_key(claim);
    let again = fresh(&mut ledger, CONFIRM, "k-1", 1);
    ledger.complete_key(again, answer("second"), None);
    assert_eq!(
        ledger.claim_key(CONFIRM, "k-1", 2),
        Claim::Replay(answer("second"))
    );
}

#[test]
fn a_key_expires_fifteen_days_after_its_first_use() {
    let mut ledger = Ledger::default();
    let claim = fresh(&mut ledger, CONFIRM, "k-1", 1000);
    ledger.complete_key(claim, answer("first"), None);
    let last_day = 1000 + KEY_LIFETIME_MS - 1;
    assert_eq!(
        ledger.claim_key(CONFIRM, "k-1", last_day),
        Claim::Replay(answer("first"))
    );
    let renewed = fresh(&mut ledger, CONFIRM, "k-1", last_day + 1);
    ledger.release_key(renewed);
}

#[test]
fn a_stale_claim_neither_keeps_nor_releases_a_newer_one() {
    let mut ledger = Ledger::default();
    let stale = fresh(&mut ledger, CONFIRM, "k-1", 0);
    // The same claim, as a guard would hold it, after the key moved on.
    let stale_copy = KeyClaim {
        identity: (CONFIRM.to_owned(), "k-1".to_owned()),
        id: 1,
    };
    ledger.release_key(stale);
    let newer = fresh(&mut ledger, CONFIRM, "k-1", 1);
    ledger.release_key(stale_copy);
    assert_eq!(ledger.claim_key(CONFIRM, "k-1", 2), Claim::InFlight);
    ledger.complete_key(newer, answer("newer"), None);
    assert_eq!(
        ledger.claim_key(CONFIRM, "k-1", 3),
        Claim::Replay(answer("newer"))
    );
}

#[test]
fn a_replay_counts_a_confirm_of_the_charge_its_answer_tells_of() {
    let mut ledger = Ledger::default();
    let claim = fresh(&mut ledger, CONFIRM, "k-1", 0);
    let ConfirmOutcome::Approved(charge, _) =
        confirm(&mut ledger, request("o-1", "pk-1", 1000), 0, IDEMPOTENT)
    else {
        panic!("not approved");
    };
    ledger.complete_key(claim, answer("approved"), Some(charge));
    for now in [1, 2] {
        assert_eq!(
            ledger.claim_key(CONFIRM, "k-1", now),
            Claim::Replay(answer("approved"))
        );
    }
    assert_eq!(ledger.snapshot().approvals[0].request_count, 3);
}
