//! The waiting-room page in a real browser: Debian's headless Chromium, driven by
//! playwright-core (`tests/browser/waiting_room.mjs`), signs in through the page, sees
//! its position, and then either the admitted state once the user ahead leaves, the
//! sold-out state — and no more polling — once the event sells out, or the paused notice
//! while the origin's breaker is open. The screenshots are
//! kept as test artifacts in `target/test-artifacts/`.

use crate::support;

use std::io::{BufRead, BufReader, Lines};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};

use reqwest::StatusCode;
use serde_json::{json, Value};
use support::{EdgeSetup, System, OPERATOR_TOKEN};

/// The browser script on `event`'s page at the desktop width, signed in as a new user
/// `visitor`, waiting for the page's last state `ending`; its stdout by lines, and where
/// its screenshot goes (`file` in the artifacts folder).
fn open_page(
    system: &System,
    event: &str,
    ending: &str,
    file: &str,
) -> (Child, Lines<BufReader<ChildStdout>>, PathBuf) {
    open_page_as(system, event, "visitor", ending, "desktop", file)
}

/// [`open_page`] as a new user `user`, at `width` (`desktop` or `phone`).
fn open_page_as(
    system: &System,
    event: &str,
    user: &str,
    ending: &str,
    width: &str,
    file: &str,
) -> (Child, Lines<BufReader<ChildStdout>>, PathBuf) {
    system.add_user(user, "visitor-password");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let artifacts = root.join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("an artifacts folder");
    let screenshot = artifacts.join(file);
    let _ = std::fs::remove_file(&screenshot);
    let mut browser = Command::new("node")
        .arg(root.join("tests/browser/waiting_room.mjs"))
        .arg(format!("{}/queue/{event}", system.edge))
        .args([user, "visitor-password"])
        .arg(&screenshot)
        .args([ending, width])
        .current_dir(root)
        .stdout(Stdio::piped())
        .spawn()
        .expect("node starts the browser script");
    let lines = BufReader::new(browser.stdout.take().expect("its stdout")).lines();
    (browser, lines, screenshot)
}

async fn edge_post(system: &System, token: &str, path: &str, body: Option<Value>) -> StatusCode {
    let mut request = system
        .http
        .post(format!("{}{path}", system.edge))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request
            .header(
                "idempotency-key",
                body["orderId"].as_str().unwrap_or_default(),
            )
            .json(&body);
    }
    request.send().await.expect("the edge answers").status()
}

async fn start_with_admit_limit_one() -> System {
    System::start_with(EdgeSetup {
        vars: vec![
            ("QUEUE_ADMIT_LIMIT", "1".into()),
            ("GATED_EVENTS", "drop-9".into()),
        ],
        ..EdgeSetup::default()
    })
    .await
}

#[tokio::test]
async fn the_page_shows_the_position_and_then_the_admitted_state() {
    let system = start_with_admit_limit_one().await;
    let ahead = system.token("user-ahead", 600);
    assert_eq!(
        edge_post(&system, &ahead, "/queue/drop-9/enter", None).await,
        StatusCode::OK
    );
    let (mut browser, mut lines, screenshot) =
        open_page(&system, "drop-9", "admitted", "waiting-room.png");
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    assert_eq!(first, "WAITING", "the page did not show position 2");

    assert_eq!(
        edge_post(&system, &ahead, "/queue/drop-9/leave", None).await,
        StatusCode::NO_CONTENT
    );

    let last = lines.next().and_then(Result::ok).unwrap_or_default();
    assert!(
        last.starts_with("ADMITTED "),
        "the page did not show the admitted state: {last:?}"
    );
    assert!(browser.wait().expect("the browser script ends").success());
    assert!(
        screenshot.exists(),
        "no screenshot at {}",
        screenshot.display()
    );
}

#[tokio::test]
async fn the_page_says_sold_out_and_stops_polling() {
    let system = start_with_admit_limit_one().await;
    let created = system
        .http
        .post(format!("{}/admin/events", system.origin_admin))
        .bearer_auth(OPERATOR_TOKEN)
        .json(&json!({ "eventId": "drop-10", "stock": 1, "amount": 1000, "gated": false }))
        .send()
        .await
        .expect("the origin answers");
    assert_eq!(created.status(), StatusCode::OK);
    let (ahead, other) = (
        system.token("user-ahead", 600),
        system.token("user-other", 600),
    );
    assert_eq!(
        edge_post(&system, &ahead, "/queue/drop-10/enter", None).await,
        StatusCode::OK
    );
    let (mut browser, mut lines, screenshot) =
        open_page(&system, "drop-10", "sold-out", "waiting-room-sold-out.png");
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    assert_eq!(first, "WAITING", "the page did not show position 2");

    let order = |id: &str| json!({ "orderId": id, "paymentKey": format!("pk-{id}"), "amount": 1000, "eventId": "drop-10" });
    let confirm = "/payments/confirm";
    assert_eq!(
        edge_post(&system, &ahead, confirm, Some(order("order-ahead"))).await,
        StatusCode::CREATED
    );
    assert_eq!(
        edge_post(&system, &other, confirm, Some(order("order-other"))).await,
        StatusCode::CONFLICT
    );

    let last = lines.next().and_then(Result::ok).unwrap_or_default();
    assert_eq!(
        last, "SOLD_OUT",
        "the page did not show sold out, or kept polling"
    );
    assert!(browser.wait().expect("the browser script ends").success());
    assert!(
        screenshot.exists(),
        "no screenshot at {}",
        screenshot.display()
    );
}

#[tokio::test]
async fn the_page_says_payments_are_paused_and_keeps_the_place() {
    let system = System::start_with_origin(
        EdgeSetup {
            vars: vec![
                ("QUEUE_ADMIT_LIMIT", "1".into()),
                ("GATED_EVENTS", "drop-11".into()),
            ],
            ..EdgeSetup::default()
        },
        &[("BREAKER_OPEN_MS", "60000")],
    )
    .await;
    let (status, _) = system
        .set_event(json!({ "eventId": "drop-11", "stock": 10, "amount": 1000 }))
        .await;
    assert_eq!(status, StatusCode::OK);
    let ahead = system.token("user-ahead", 600);
    assert_eq!(
        edge_post(&system, &ahead, "/queue/drop-11/enter", None).await,
        StatusCode::OK
    );
    let (mut browser, mut lines, screenshot) =
        open_page(&system, "drop-11", "paused", "waiting-room-paused.png");
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    assert_eq!(first, "WAITING", "the page did not show position 2");

    let forced = system
        .http
        .post(format!("{}/admin/guard/breaker", system.origin_admin))
        .bearer_auth(OPERATOR_TOKEN)
        .json(&json!({"state": "FORCED_OPEN", "reason": "PG incident"}))
        .send()
        .await
        .expect("the origin answers");
    assert_eq!(forced.status(), StatusCode::OK);
    let order = json!({ "orderId": "order-ahead", "paymentKey": "pk-order-ahead-2", "amount": 1000, "eventId": "drop-11" });
    assert_eq!(
        edge_post(&system, &ahead, "/payments/confirm", Some(order)).await,
        StatusCode::CREATED,
        "refused CIRCUIT_OPEN at the origin, which says for how long"
    );

    let last = lines.next().and_then(Result::ok).unwrap_or_default();
    assert!(
        last.starts_with("PAUSED "),
        "the page did not say payments are paused: {last:?}"
    );
    assert!(browser.wait().expect("the browser script ends").success());
    assert!(
        screenshot.exists(),
        "no screenshot at {}",
        screenshot.display()
    );
}

/// How far ahead the page test's drop opens: both pages must be in its prequeue by then,
/// two Chromiums starting cold on a fresh machine (9 s for one in CI) and signing in.
/// A prequeued page next asks at the opening it was told (in 60 s at most), so bringing
/// the opening forward once they are in would leave the pages waiting for it.
const OPENS_IN_MS: i64 = 40_000;

/// A drop's page at desktop and phone widths at once: the prequeue and the time of its
/// draw, then — the drop held by its operator — the position, the progress bar and the
/// held notice, then, resumed, the admitted state. Screenshots of each step, each width.
#[tokio::test]
async fn the_page_takes_a_drop_from_prequeue_to_draw_to_position_to_admitted() {
    let system = System::start().await;
    let now = harness::signed::now_ms();
    let (status, defined) = system
        .set_event(json!({
            "eventId": "drop-12", "stock": 10, "amount": 1000, "gated": true,
            "admitLimit": 2, "opensAt": now + OPENS_IN_MS, "prequeueFrom": now,
            "name": "Winter drop",
        }))
        .await;
    assert_eq!(status, StatusCode::OK, "{defined}");
    let operator = |action: &'static str| {
        let request = system
            .http
            .post(format!(
                "{}/admin/events/drop-12/{action}",
                system.origin_admin
            ))
            .bearer_auth(OPERATOR_TOKEN);
        async move { request.send().await.expect("the origin answers").status() }
    };
    assert_eq!(operator("pause").await, StatusCode::OK);

    let mut browsers = Vec::new();
    for width in ["desktop", "phone"] {
        let user = format!("visitor-{width}");
        let file = format!("waiting-room-drop-{width}.png");
        let (browser, lines, _) = open_page_as(&system, "drop-12", &user, "prequeue", width, &file);
        browsers.push((width, browser, lines));
    }
    for (width, _, lines) in &mut browsers {
        let line = lines.next().and_then(Result::ok).unwrap_or_default();
        assert!(line.starts_with("PREQUEUED "), "{width}: {line:?}");
    }
    let mut positions = Vec::new();
    for (width, _, lines) in &mut browsers {
        let line = lines.next().and_then(Result::ok).unwrap_or_default();
        let position = line
            .strip_prefix("POSITION ")
            .unwrap_or_default()
            .to_owned();
        assert!(["1", "2"].contains(&position.as_str()), "{width}: {line:?}");
        positions.push(position);
    }
    positions.sort();
    assert_eq!(positions, ["1", "2"], "one place each, drawn");

    assert_eq!(operator("resume").await, StatusCode::OK);
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    for (width, mut browser, mut lines) in browsers {
        let line = lines.next().and_then(Result::ok).unwrap_or_default();
        assert!(line.starts_with("ADMITTED "), "{width}: {line:?}");
        assert!(browser.wait().expect("the browser script ends").success());
        for step in ["prequeue", "position", "admitted"] {
            let shot = artifacts.join(format!("waiting-room-drop-{width}-{step}.png"));
            assert!(shot.exists(), "no screenshot at {}", shot.display());
        }
    }
}
