//! Settlement reconciliation's fixture: an origin with APPROVED payments, and the
//! operator's requests.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use origin::store::{NewPayment, Outcome};
use serde_json::Value;

use super::{simulator, Origin, OPERATOR_TOKEN};

/// 2026-11-30 12:00 UTC, in epoch milliseconds.
pub const NOON: i64 = 1_796_040_000_000;
pub const DAY: i64 = 86_400_000;

/// An origin with APPROVED payments `o-1` … `o-4` (1,000 … 4,000 won) on 2026-11-30,
/// and `o-old` the day before.
pub async fn origin() -> Origin {
    let origin = Origin::with_gateway(&simulator().await, Duration::from_secs(2)).await;
    for (n, approved_at) in [(1, NOON), (2, NOON), (3, NOON), (4, NOON + 1)] {
        approve(&origin, &format!("o-{n}"), n * 1_000, approved_at).await;
    }
    approve(&origin, "o-old", 500, NOON - DAY).await;
    origin
}

pub async fn approve(origin: &Origin, order_id: &str, amount: i64, approved_at: i64) {
    let payment = origin
        .store
        .insert_pending(NewPayment {
            order_id: order_id.into(),
            user_id: "user-1".into(),
            payment_key: format!("pk-{order_id}"),
            amount,
            event_id: None,
            confirm_key: "ck-test".into(),
            now_ms: approved_at - 1_000,
        })
        .await
        .unwrap();
    origin
        .store
        .record_outcome(
            payment.payment_id,
            Outcome::Approved { approved_at },
            approved_at,
        )
        .await
        .unwrap();
}

pub fn operator(
    method: &str,
    path: &str,
    content_type: &str,
    body: impl Into<Body>,
) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {OPERATOR_TOKEN}"))
        .header("content-type", content_type)
        .body(body.into())
        .unwrap()
}

pub async fn queue(origin: &Origin, query: &str) -> Vec<Value> {
    let (status, body) = origin
        .send(operator(
            "GET",
            &format!("/admin/reconciliations{query}"),
            "text/plain",
            Body::empty(),
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["items"].as_array().cloned().unwrap_or_default()
}
