//! The checkout page in a real browser: Debian's headless Chromium, driven by
//! playwright-core (`tests/browser/checkout.mjs`), goes from the waiting room's admitted
//! state to the edge's checkout page, into the simulator's imitation of Toss's payment
//! window, and back — to the receipt (at desktop and phone widths, and again on a reload,
//! paid once), to the reason and a retry (cancelled in the window), to the decline and a
//! retry (a card the PG declines), or to "we are confirming" and then the receipt (the
//! PG's answer lost, recovery settling it). The
//! screenshots of every step are kept in `target/test-artifacts/`.

use crate::support;

use std::io::{BufRead, BufReader, Lines};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use harness::eventually::eventually;
use reqwest::StatusCode;
use serde_json::json;
use support::{EdgeSetup, System};

const EVENT: &str = "drop-pay";

/// The event every test buys: gated, so checkout needs the pass, at 5000.
async fn define_event(system: &System) {
    let event = json!({
        "eventId": EVENT, "stock": 10, "amount": 5000, "gated": true, "name": "Spring drop",
    });
    let (status, defined) = system.set_event(event).await;
    assert_eq!(status, StatusCode::OK, "{defined}");
}

/// The browser script as a new user `user` at `viewport` (`desktop` or `phone`), on the
/// waiting room the shop links to (with the price), until `ending`; its stdout by lines.
fn buy(
    system: &System,
    user: &str,
    ending: &str,
    viewport: &str,
) -> (Child, Lines<BufReader<ChildStdout>>) {
    system.add_user(user, "buyer-password");
    let url = format!("{}/queue/{EVENT}?price=5000", system.edge);
    browse(&url, user, ending, viewport)
}

fn browse(
    url: &str,
    user: &str,
    ending: &str,
    viewport: &str,
) -> (Child, Lines<BufReader<ChildStdout>>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let artifacts = root.join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("an artifacts folder");
    let prefix = artifacts.join(format!("checkout-{ending}-{viewport}"));
    let mut browser = Command::new("node")
        .arg(root.join("tests/browser/checkout.mjs"))
        .args([url, user, "buyer-password"])
        .arg(&prefix)
        .args([ending, viewport])
        .current_dir(root)
        .stdout(Stdio::piped())
        .spawn()
        .expect("node starts the browser script");
    let lines = BufReader::new(browser.stdout.take().expect("its stdout")).lines();
    (browser, lines)
}

fn next(lines: &mut Lines<BufReader<ChildStdout>>) -> String {
    lines.next().and_then(Result::ok).unwrap_or_default()
}

fn ends_well(mut browser: Child) {
    assert!(browser.wait().expect("the browser script ends").success());
}

#[tokio::test]
async fn a_buyer_pays_from_the_queue_through_the_window_to_the_receipt_once() {
    let system = System::start().await;
    define_event(&system).await;
    let mut browsers = Vec::new();
    for viewport in ["desktop", "phone"] {
        let (browser, lines) = buy(&system, &format!("buyer-{viewport}"), "receipt", viewport);
        browsers.push((viewport, browser, lines));
    }
    let mut orders = Vec::new();
    for (viewport, browser, mut lines) in browsers {
        let line = next(&mut lines);
        let order = line.strip_prefix("RECEIPT ").unwrap_or_default().to_owned();
        assert!(!order.is_empty(), "{viewport}: no receipt: {line:?}");
        assert_eq!(next(&mut lines), "RELOADED", "{viewport}: the reload");
        ends_well(browser);
        orders.push(order);
    }

    let payments = system.payments_at(&system.origin).await;
    for order in &orders {
        assert_eq!(payments[order]["status"], "APPROVED", "{order}");
        assert_eq!(payments[order]["amount"], 5000, "{order}");
    }
    assert_eq!(payments.len(), 2, "{payments:?}");
    let ledger = system.ledger().await;
    let approvals = ledger["approvals"].as_array().expect("a list");
    assert_eq!(
        approvals.len(),
        2,
        "one charge each, the reload none: {ledger}"
    );
    assert_eq!(
        ledger["requestCount"], 2,
        "one confirm each reached the PG: {ledger}"
    );
}

#[tokio::test]
async fn cancelling_in_the_window_says_why_and_offers_to_try_again() {
    let system = System::start().await;
    define_event(&system).await;
    let (browser, mut lines) = buy(&system, "buyer-cancels", "cancel", "phone");
    let line = next(&mut lines);
    assert!(line.starts_with("CANCELLED "), "{line:?}");
    assert_eq!(next(&mut lines), "RETRIED");
    ends_well(browser);
    assert!(system.payments_at(&system.origin).await.is_empty());
    assert_eq!(
        system.ledger().await["requestCount"],
        0,
        "nothing confirmed"
    );
}

#[tokio::test]
async fn a_declined_card_says_so_and_offers_to_try_again() {
    let system = System::start().await;
    define_event(&system).await;
    // The PG declines the confirm, as Toss's sandbox does under this test code.
    system
        .set_faults(json!({"mode": "NORMAL", "testCode": "REJECT_CARD_PAYMENT"}))
        .await;
    let (browser, mut lines) = buy(&system, "buyer-declined", "declined", "phone");
    let line = next(&mut lines);
    let order = line
        .strip_prefix("DECLINED ")
        .unwrap_or_default()
        .to_owned();
    assert!(!order.is_empty(), "{line:?}");
    ends_well(browser);
    let payment = &system.payments_at(&system.origin).await[&order];
    assert_eq!(
        (&payment["status"], &payment["failureReason"]),
        (&json!("FAILED"), &json!("DECLINED"))
    );
    let ledger = system.ledger().await;
    assert_eq!(ledger["approvals"], json!([]), "nothing charged: {ledger}");
}

#[tokio::test]
async fn a_lost_answer_shows_we_are_confirming_and_then_the_receipt() {
    let manual_recovery = [
        ("GATEWAY_TIMEOUT_MS", "300"),
        ("RECOVERY_INTERVAL_MS", "3600000"),
        ("RECOVERY_MIN_AGE_MS", "1000"),
    ];
    let system = System::start_with_origin(EdgeSetup::default(), &manual_recovery).await;
    define_event(&system).await;
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000}))
        .await;
    let (browser, mut lines) = buy(&system, "buyer-waits", "unknown", "desktop");
    let line = next(&mut lines);
    let order = line
        .strip_prefix("CONFIRMING ")
        .unwrap_or_default()
        .to_owned();
    assert!(!order.is_empty(), "{line:?}");
    assert_eq!(
        system.payments_at(&system.origin).await[&order]["status"],
        "UNKNOWN"
    );

    eventually(
        "recovery approves the payment",
        Duration::from_secs(30),
        Duration::from_millis(500),
        || async {
            let report = system.run_recovery_at(&system.origin).await;
            let status = system.payments_at(&system.origin).await[&order]["status"].clone();
            (status == "APPROVED")
                .then_some(())
                .ok_or(format!("{status}, recovery: {report}"))
        },
    )
    .await;
    assert_eq!(next(&mut lines), format!("RECEIPT {order}"));
    ends_well(browser);
}

#[tokio::test]
async fn without_a_payment_window_the_page_says_checkout_is_not_configured() {
    let system = System::start_with(EdgeSetup {
        vars: vec![("PAYMENT_WINDOW_URL", String::new())],
        ..EdgeSetup::default()
    })
    .await;
    let page = system
        .http
        .get(format!("{}/checkout/{EVENT}", system.edge))
        .send()
        .await
        .expect("the edge answers");
    assert_eq!(page.status(), StatusCode::OK);
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap_or_default();
    assert!(policy.contains("script-src 'sha256-"), "{policy}");
    let url = format!("{}/checkout/{EVENT}", system.edge);
    let (browser, mut lines) = browse(&url, "nobody", "unconfigured", "phone");
    assert_eq!(next(&mut lines), "UNCONFIGURED");
    ends_well(browser);
}
