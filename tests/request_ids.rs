//! End to end: a confirm's request id — the client's own `X-Request-Id` when well
//! formed, else the edge's — comes back on the edge's answer, is in the edge's log and,
//! signed into the call, in the origin's log (one JSON object per line with
//! `LOG_FORMAT=json`) and in the origin's JSON error body.

use crate::support;

use serde_json::{json, Value};
use support::{EdgeSetup, System};

async fn confirm(system: &System, id: Option<&str>, body: Value) -> reqwest::Response {
    let token = system.token("user-1", 600);
    let mut request = system
        .http
        .post(format!("{}/payments/confirm", system.edge))
        .bearer_auth(token)
        .header(
            "idempotency-key",
            body["orderId"].as_str().unwrap_or_default(),
        )
        .json(&body);
    if let Some(id) = id {
        request = request.header("x-request-id", id);
    }
    request.send().await.expect("the edge answers")
}

/// The origin's log lines that name `id`, each a JSON object.
fn origin_lines(system: &System, id: &str) -> Vec<Value> {
    let log = system.log("origin");
    for line in log.lines().filter(|line| !line.trim().is_empty()) {
        assert!(
            serde_json::from_str::<Value>(line).is_ok_and(|v| v.is_object()),
            "not one JSON object: {line}"
        );
    }
    log.lines()
        .filter(|line| line.contains(id))
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

#[tokio::test]
async fn a_confirms_request_id_is_in_the_answer_both_logs_and_the_error_body() {
    let system = System::start_with_origin(EdgeSetup::default(), &[("LOG_FORMAT", "json")]).await;
    let body = json!({"orderId": "order-1", "paymentKey": "pk-order-1", "amount": 1000});
    let answer = confirm(&system, Some("trace-7f3a:1"), body).await;
    assert_eq!(answer.status(), reqwest::StatusCode::CREATED);
    assert_eq!(answer.headers()["x-request-id"], "trace-7f3a:1");
    assert!(
        system
            .log("edge")
            .contains("request trace-7f3a:1: Post /payments/confirm -> origin 201"),
        "{}",
        system.log("edge")
    );
    let lines = origin_lines(&system, "trace-7f3a:1");
    assert!(
        lines
            .iter()
            .any(|line| line["span"]["request_id"] == "trace-7f3a:1"
                && line["fields"]["message"] == "answered"
                && line["fields"]["status"] == 201),
        "{lines:?}"
    );

    // An id that is not well formed is replaced; an error from the origin carries it.
    let unknown = json!({"orderId": "order-2", "paymentKey": "pk-order-2", "amount": 1000, "eventId": "no-such-event"});
    let refused = confirm(&system, Some("not an id"), unknown).await;
    assert_eq!(refused.status(), reqwest::StatusCode::NOT_FOUND);
    let id = refused.headers()["x-request-id"]
        .to_str()
        .expect("text")
        .to_owned();
    assert!(
        id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{id}"
    );
    let error: Value = refused.json().await.expect("JSON");
    assert_eq!(
        (error["code"].clone(), error["requestId"].clone()),
        (json!("EVENT_NOT_FOUND"), json!(id)),
        "{error}"
    );
    assert!(!origin_lines(&system, &id).is_empty());

    // An answer of the edge's own carries one too.
    let me = system
        .http
        .get(format!("{}/auth/me", system.edge))
        .send()
        .await
        .expect("the edge answers");
    assert_eq!(me.status(), reqwest::StatusCode::UNAUTHORIZED);
    assert!(me.headers().contains_key("x-request-id"));
}
