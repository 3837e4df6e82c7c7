//! The operator console (`GET /admin/console` on the operator listener) in a real
//! browser: Debian's headless Chromium, driven by playwright-core with the keyboard only
//! (`tests/browser/console.mjs`), signs in with the operator's token, sees the
//! reconciliation exceptions and the PG guard's concurrency limit and refusals, resolves
//! one with a note, and sees the queue shrink. The concurrency limit is off and a payment
//! is held at the PG meanwhile, so the console must show the guard's own calls in flight
//! (1), not the limit's (none when off). The screenshot is kept in
//! `target/test-artifacts/operator-console.png`.

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use support::{System, OPERATOR_TOKEN};

#[tokio::test]
async fn an_operator_resolves_an_exception_in_the_console_and_sees_the_queue_shrink() {
    let system = System::backend(&[
        ("GATEWAY_CONCURRENCY", "off"),
        ("GATEWAY_TIMEOUT_MS", "120000"),
    ])
    .await;
    let (status, _) = system
        .set_event(serde_json::json!({"eventId": "spring", "stock": 100, "amount": 5000}))
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    for order in ["order-1", "order-2", "order-3"] {
        let (status, body) = system.confirm_order(order).await;
        assert_eq!(status, reqwest::StatusCode::CREATED, "{body}");
    }
    // The PG's file of today without two of our orders: two INTERNAL_ONLY exceptions.
    let kept: String = system
        .settlement_file_of_today()
        .await
        .split_inclusive("\r\n")
        .filter(|row| !row.contains(",order-2,") && !row.contains(",order-3,"))
        .collect();
    let report = system.reconcile(kept).await;
    assert_eq!(report["pending"], 2, "{report}");

    let page = system
        .http
        .get(format!("{}/admin/console", system.origin_admin))
        .send()
        .await
        .expect("the origin answers");
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .expect("text")
        .to_owned();
    assert!(
        !policy.contains("unsafe-inline") && policy.contains("default-src 'none'"),
        "{policy}"
    );

    system
        .set_faults(serde_json::json!({"mode": "HANG_BEFORE_PROCESSING", "delayMs": 120_000}))
        .await;
    // Sent, and kept open (the origin holds it at the PG) to the end of the test.
    let held = system.confirm_response("order-held");
    tokio::pin!(held);
    let guard = tokio::select! {
        guard = system.guard_until(|g| g["inFlight"] == 1) => guard,
        answer = &mut held => panic!("the held confirm was answered: {}", answer.status()),
    };
    let mode = guard["concurrency"]["mode"]
        .as_str()
        .unwrap_or_else(|| panic!("no concurrency mode: {guard}"))
        .to_owned();

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let artifacts = root.join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("an artifacts folder");
    let screenshot = artifacts.join("operator-console.png");
    let _ = std::fs::remove_file(&screenshot);
    let mut browser = Command::new("node")
        .arg(root.join("tests/browser/console.mjs"))
        .arg(format!("{}/admin/console", system.origin_admin))
        .arg(OPERATOR_TOKEN)
        .arg(&screenshot)
        .current_dir(root)
        .stdout(Stdio::piped())
        .spawn()
        .expect("node starts the browser script");
    let mut lines = BufReader::new(browser.stdout.take().expect("its stdout")).lines();
    let mut next = || lines.next().and_then(Result::ok).unwrap_or_default();
    assert_eq!(next(), "PENDING 2");
    assert_eq!(next(), format!("CONCURRENCY {mode} IN_FLIGHT 1"));
    assert_eq!(next(), "RESOLVED 1");
    assert!(browser.wait().expect("the browser script ends").success());
    assert!(
        screenshot.exists(),
        "no screenshot at {}",
        screenshot.display()
    );

    let pending = system
        .operator_get("/admin/reconciliations?status=PENDING")
        .await;
    assert_eq!(
        pending["items"].as_array().map(Vec::len),
        Some(1),
        "{pending}"
    );
    let resolved = system
        .operator_get("/admin/reconciliations?status=RESOLVED")
        .await;
    assert_eq!(
        resolved["items"][0]["note"], "settled by hand with the PG",
        "{resolved}"
    );
}
