//! End to end: `origin event …`, the operator's command line for drops — create, a second
//! create refused, update keeping what it does not give, show with the edge's report,
//! pause, and a bad setting refused by name.

use crate::support;

use serde_json::{json, Value};
use support::room::start;

const EVENT: &str = "drop-night";

#[tokio::test]
async fn the_command_line_defines_changes_shows_and_pauses_a_drop() {
    let system = start(&[("RATE_LIMITED_ROUTES", "none")]).await;
    let run = |args: &[&str]| {
        let output = system.origin_cli_output(args);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        (output.status.success(), stdout, stderr)
    };
    let (ok, created, err) = run(&[
        "event",
        "create",
        EVENT,
        "--stock",
        "5",
        "--amount",
        "1000",
        "--gated",
        "true",
        "--admit-limit",
        "1",
        "--name",
        "Night drop",
    ]);
    assert!(ok, "{err}");
    let created: Value = serde_json::from_str(&created).expect("JSON");
    assert_eq!(created["room"]["version"], 1, "{created}");
    let (again, _, err) = run(&["event", "create", EVENT, "--stock", "5", "--amount", "1000"]);
    assert!(!again && err.contains("exists"), "{err}");

    let (ok, _, err) = run(&["event", "update", EVENT, "--admit-per-minute", "30"]);
    assert!(ok, "{err}");
    let (ok, shown, err) = run(&["event", "show", EVENT]);
    assert!(ok, "{err}");
    let shown: Value = serde_json::from_str(&shown).expect("JSON");
    assert_eq!(
        shown["room"]["settings"],
        json!({"gated": true, "admitLimit": 1, "admitPerMinute": 30, "name": "Night drop"}),
        "the update kept what it did not give: {shown}"
    );
    assert_eq!(shown["roomStatus"]["version"], 2, "{shown}");

    let (ok, paused, err) = run(&["event", "pause", EVENT]);
    assert!(ok, "{err}");
    assert!(paused.contains("\"paused\": true"), "{paused}");
    let (bad, _, err) = run(&["event", "update", EVENT, "--admit-limit", "0"]);
    assert!(!bad && err.contains("admitLimit"), "{err}");
}
