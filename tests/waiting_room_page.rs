//! The waiting-room page in a real browser: Debian's headless Chromium, driven by
//! playwright-core (`tests/browser/waiting_room.mjs`), signs in through the page, sees
//! its position, and sees the admitted state once the user ahead leaves. The screenshot
//! is kept as a test artifact in `target/test-artifacts/waiting-room.png`.

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use reqwest::StatusCode;
use support::{EdgeSetup, System};

#[tokio::test]
async fn the_page_shows_the_position_and_then_the_admitted_state() {
    let system = System::start_with(EdgeSetup {
        vars: vec![("QUEUE_ADMIT_LIMIT", "1".into())],
        ..EdgeSetup::default()
    })
    .await;
    let ahead = system.token("user-ahead", 600);
    let entered = system
        .http
        .post(format!("{}/queue/drop-9/enter", system.edge))
        .bearer_auth(&ahead)
        .send()
        .await
        .unwrap();
    assert_eq!(entered.status(), StatusCode::OK);
    system.add_user("visitor", "visitor-password");

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let artifacts = root.join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("an artifacts folder");
    let screenshot = artifacts.join("waiting-room.png");
    let _ = std::fs::remove_file(&screenshot);
    let mut browser = Command::new("node")
        .arg(root.join("tests/browser/waiting_room.mjs"))
        .arg(format!("{}/queue/drop-9", system.edge))
        .args(["visitor", "visitor-password"])
        .arg(&screenshot)
        .current_dir(root)
        .stdout(Stdio::piped())
        .spawn()
        .expect("node starts the browser script");
    let mut lines = BufReader::new(browser.stdout.take().expect("its stdout")).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    assert_eq!(first, "WAITING", "the page did not show position 2");

    let left = system
        .http
        .post(format!("{}/queue/drop-9/leave", system.edge))
        .bearer_auth(&ahead)
        .send()
        .await
        .unwrap();
    assert_eq!(left.status(), StatusCode::NO_CONTENT);

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
