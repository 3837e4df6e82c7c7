//! End to end: the first-come queue of an event in its Durable Object, the admission
//! pass and its expiry, the payment gate, the queue of a sold-out event, and the
//! waiting-room page.

use crate::support;

use std::time::Duration;

use futures_util::future::join_all;
use harness::eventually::eventually;
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::room::{confirm, enter, leave, queue_call, start, status, status_until};
use support::OPERATOR_TOKEN;

#[tokio::test]
async fn two_hundred_concurrent_entrants_get_exactly_positions_one_to_two_hundred() {
    let system = start(&[("RATE_LIMIT_GLOBAL", "1000/1s"), ("GATED_EVENTS", "drop-1")]).await;
    let tokens: Vec<String> = (0..200)
        .map(|i| system.token(&format!("fan-{i}"), 600))
        .collect();
    let placed = join_all(tokens.iter().map(|token| enter(&system, token, "drop-1"))).await;
    let mut positions: Vec<u64> = placed
        .iter()
        .map(|s| s["position"].as_u64().unwrap())
        .collect();
    positions.sort_unstable();
    assert_eq!(positions, (1..=200).collect::<Vec<_>>());
    for status in &placed {
        assert_eq!(status["eventId"], "drop-1");
        let admitted = status["position"].as_u64().unwrap() <= 100;
        assert_eq!(status["admitted"], admitted, "{status}");
        assert_eq!(status["passExpiresAt"].is_i64(), admitted, "{status}");
        assert!(status["pollAfterSeconds"]
            .as_u64()
            .is_some_and(|secs| secs >= 1));
    }
    // Entering again keeps the place.
    let again = enter(&system, &tokens[7], "drop-1").await;
    assert_eq!(again["position"], placed[7]["position"]);
}

#[tokio::test]
async fn when_the_admitted_user_leaves_the_next_is_admitted() {
    let system = start(&[("QUEUE_ADMIT_LIMIT", "1"), ("GATED_EVENTS", "drop-2")]).await;
    let (first, second) = (system.token("user-1", 600), system.token("user-2", 600));
    let one = enter(&system, &first, "drop-2").await;
    assert_eq!(
        (one["position"].as_u64(), one["admitted"].as_bool()),
        (Some(1), Some(true))
    );
    let two = enter(&system, &second, "drop-2").await;
    assert_eq!(
        (two["position"].as_u64(), two["admitted"].as_bool()),
        (Some(2), Some(false))
    );
    assert!(two.get("passExpiresAt").is_none());

    leave(&system, &first, "drop-2").await;
    let now: Value = status(&system, &second, "drop-2")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (now["position"].as_u64(), now["admitted"].as_bool()),
        (Some(1), Some(true))
    );
    assert!(now["passExpiresAt"].is_i64());
    let gone = status(&system, &first, "drop-2").await;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    assert_eq!(gone.json::<Value>().await.unwrap()["code"], "NOT_IN_QUEUE");
}

#[tokio::test]
async fn a_gated_confirm_needs_a_pass_and_spends_it() {
    let system = start(&[("QUEUE_ADMIT_LIMIT", "1"), ("GATED_EVENTS", "drop-3")]).await;
    for event in ["drop-3", "not-gated"] {
        let (status, _) = system
            .set_event(json!({ "eventId": event, "stock": 10, "amount": 1000 }))
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    let (first, second) = (system.token("user-1", 600), system.token("user-2", 600));
    enter(&system, &first, "drop-3").await;
    enter(&system, &second, "drop-3").await;

    let refused = confirm(&system, &second, "order-second", Some("drop-3")).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        refused.json::<Value>().await.unwrap()["code"],
        "QUEUE_PASS_REQUIRED"
    );
    assert_eq!(
        system.ledger().await["requestCount"],
        0,
        "nothing was forwarded"
    );

    assert_eq!(
        confirm(&system, &first, "order-first", Some("drop-3"))
            .await
            .status(),
        StatusCode::CREATED
    );
    assert_eq!(
        status(&system, &first, "drop-3").await.status(),
        StatusCode::NOT_FOUND,
        "the pass is spent"
    );
    let next: Value = status(&system, &second, "drop-3")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(next["admitted"], true);

    let ordinary = system.token("user-3", 600);
    assert_eq!(
        confirm(&system, &ordinary, "order-plain", None)
            .await
            .status(),
        StatusCode::CREATED
    );
    assert_eq!(
        confirm(&system, &ordinary, "order-other", Some("not-gated"))
            .await
            .status(),
        StatusCode::CREATED
    );
}

#[tokio::test]
async fn an_unused_pass_expires_and_admits_the_next_without_a_poll() {
    let system = start(&[
        ("QUEUE_ADMIT_LIMIT", "1"),
        ("QUEUE_PASS_TTL_SECONDS", "2"),
        ("GATED_EVENTS", "drop-4"),
    ])
    .await;
    let (first, second) = (system.token("user-1", 600), system.token("user-2", 600));
    let one = enter(&system, &first, "drop-4").await;
    assert_eq!(one["admitted"], true);
    assert_eq!(enter(&system, &second, "drop-4").await["admitted"], false);

    // user-1 never polls again: only the room's alarm can move user-2 up.
    let now = eventually(
        "user-2 admitted after the pass expired",
        Duration::from_secs(20),
        Duration::from_millis(250),
        || async {
            let now: Value = status(&system, &second, "drop-4")
                .await
                .json()
                .await
                .unwrap();
            if now["admitted"] == true {
                Ok(now)
            } else {
                Err(now.to_string())
            }
        },
    )
    .await;
    assert_eq!(now["position"], 1);
    assert_eq!(
        status(&system, &first, "drop-4").await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_sold_out_answer_closes_the_queue_to_newcomers_and_keeps_its_line() {
    let system = start(&[("QUEUE_ADMIT_LIMIT", "1"), ("GATED_EVENTS", "drop-6")]).await;
    let created = system
        .http
        .post(format!("{}/admin/events", system.origin_admin))
        .bearer_auth(OPERATOR_TOKEN)
        .json(&json!({ "eventId": "drop-6", "stock": 1, "amount": 1000 }))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::OK);
    let [a, b, waiting, late] =
        ["user-a", "user-b", "user-w", "user-c"].map(|u| system.token(u, 600));
    assert_eq!(enter(&system, &a, "drop-6").await["admitted"], true);
    let before = enter(&system, &b, "drop-6").await;
    assert!(before.get("soldOut").is_none(), "{before}");
    enter(&system, &waiting, "drop-6").await;

    let bought = confirm(&system, &a, "order-a", Some("drop-6")).await;
    assert_eq!(bought.status(), StatusCode::CREATED);
    assert_eq!(bought.json::<Value>().await.unwrap()["status"], "APPROVED");
    // user-a's pass is spent: user-b moves up and may try.
    assert_eq!(
        status(&system, &b, "drop-6")
            .await
            .json::<Value>()
            .await
            .unwrap()["admitted"],
        true
    );
    let refused = confirm(&system, &b, "order-b", Some("drop-6")).await;
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    assert_eq!(refused.json::<Value>().await.unwrap()["code"], "SOLD_OUT");
    assert_eq!(system.ledger().await["requestCount"], 1, "one PG call only");
    assert_eq!(system.operator_get("/admin/events/drop-6").await["sold"], 1);

    // Those in line keep their places; the one still waiting is told to stop polling.
    let behind = status_until(&system, &waiting, "drop-6", |s| s["soldOut"] == true).await;
    assert_eq!(
        behind,
        json!({ "eventId": "drop-6", "position": 2, "admitted": false,
                "pollAfterSeconds": 3600, "soldOut": true })
    );
    let admitted = status_until(&system, &b, "drop-6", |s| s["soldOut"] == true).await;
    assert_eq!(
        (
            &admitted["position"],
            &admitted["admitted"],
            &admitted["pollAfterSeconds"]
        ),
        (&json!(1), &json!(true), &json!(30))
    );
    assert!(admitted["passExpiresAt"].is_i64(), "{admitted}");

    // A newcomer is answered at once and not let in; entering again changes nothing.
    let turned_away = json!({ "eventId": "drop-6", "position": 0, "admitted": false,
                              "pollAfterSeconds": 3600, "soldOut": true });
    assert_eq!(enter(&system, &late, "drop-6").await, turned_away);
    assert_eq!(enter(&system, &late, "drop-6").await, turned_away);
    assert_eq!(
        status(&system, &late, "drop-6").await.status(),
        StatusCode::NOT_FOUND,
        "the line did not grow"
    );
    let mut again = enter(&system, &waiting, "drop-6").await;
    let ticket = again
        .as_object_mut()
        .and_then(|fields| fields.remove("ticket"));
    assert!(
        ticket.is_some_and(|t| t.is_string()),
        "a place has a ticket"
    );
    assert_eq!(again, behind);
    leave(&system, &b, "drop-6").await;
    assert_eq!(
        status(&system, &waiting, "drop-6")
            .await
            .json::<Value>()
            .await
            .unwrap()["position"],
        1,
        "user-c never stood ahead of user-w"
    );
}

#[tokio::test]
async fn the_waiting_room_is_a_page_for_browsers_and_json_for_clients() {
    let system = start(&[("GATED_EVENTS", "drop-5")]).await;
    let page = system
        .http
        .get(format!("{}/queue/drop-5", system.edge))
        .header("accept", "text/html,application/xhtml+xml")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let policy = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    assert!(policy.contains("base-uri 'none'"), "{policy}");
    assert!(policy.contains("script-src 'sha256-"), "{policy}");
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    assert!(page.text().await.unwrap().contains("Waiting room"));

    let token = system.token("user-1", 600);
    let missing = queue_call(&system, &token, reqwest::Method::GET, "drop-5").await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    enter(&system, &token, "drop-5").await;
    let json: Value = queue_call(&system, &token, reqwest::Method::GET, "drop-5")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (json["eventId"].as_str(), json["position"].as_u64()),
        (Some("drop-5"), Some(1))
    );
}
