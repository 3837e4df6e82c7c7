//! KEK rotation against the real origin: `origin keys rewrap` moves every payment key
//! onto the new current KEK while the origin, still on the old one, goes on serving and
//! reading them; later payments are picked up by the next run, and a run with nothing
//! to do changes nothing. A bad key configuration stops the origin at start.

use crate::support;

use serde_json::Value;
use support::{order_body, System};

async fn confirm(system: &System, order_id: &str) {
    let response = system
        .confirm_at_origin("user-1", Some(order_id), &order_body(order_id))
        .await;
    let body: Value = response.json().await.expect("JSON");
    assert_eq!(body["status"], "APPROVED", "{body}");
}

async fn read_back(system: &System, order_id: &str) {
    let response = system
        .origin_get("user-1", &format!("/payments/{order_id}"))
        .await;
    assert_eq!(response.status(), 200, "{order_id}");
    let body: Value = response.json().await.expect("JSON");
    assert_eq!(body["status"], "APPROVED", "{body}");
}

fn rewrap(system: &System) -> Value {
    let printed = system.origin_cli(&["keys", "rewrap", "--batch", "2"]);
    serde_json::from_str(&printed).expect("a JSON summary")
}

fn counts(report: &Value) -> [u64; 4] {
    ["currentVersion", "examined", "rewrapped", "failed"]
        .map(|name| report[name].as_u64().unwrap_or(u64::MAX))
}

#[tokio::test]
async fn payment_keys_move_to_a_new_kek_while_the_origin_serves() {
    let mut system = System::backend(&[]).await;
    let orders: Vec<String> = (0..5).map(|n| format!("rotate-{n}")).collect();
    for order in &orders {
        confirm(&system, order).await;
    }

    system.set_origin_env("ENCRYPTION_CURRENT_KEK", "v2");
    assert_eq!(counts(&rewrap(&system)), [2, 5, 5, 0]);
    // The running origin, still sealing under v1, reads the rewrapped keys and pays on.
    for order in &orders {
        read_back(&system, order).await;
    }
    confirm(&system, "rotate-late").await;
    assert_eq!(counts(&rewrap(&system)), [2, 1, 1, 0], "only the newcomer");
    assert_eq!(counts(&rewrap(&system)), [2, 0, 0, 0], "nothing left to do");

    system.restart_origin().await;
    confirm(&system, "rotate-after").await;
    assert_eq!(
        counts(&rewrap(&system)),
        [2, 0, 0, 0],
        "sealed under v2 already"
    );
    read_back(&system, "rotate-late").await;

    system.set_origin_env("ENCRYPTION_CURRENT_KEK", "v3");
    let refused = system.origin_cli_output(&["serve"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(stderr.contains("ENCRYPTION_CURRENT_KEK"), "{stderr}");
    assert!(
        !stderr.contains("ERERERER"),
        "no key material in the message: {stderr}"
    );
}
