//! What the router tests share: a simulator driven in-process, as the payment
//! system's clients would call it, and Toss's headers.

use axum::body::{to_bytes, Body};
use axum::http::{header, Request, StatusCode};
use axum::Router;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use gateway_sim::config::{SecretKey, DEFAULT_SECRET_KEY};
use gateway_sim::{app, SimState};
use serde_json::{json, Value};
use tower::ServiceExt;

/// `Authorization` as Toss wants it: `Basic base64(key + ":")`.
pub fn basic(key: &str) -> String {
    format!("Basic {}", STANDARD.encode(format!("{key}:")))
}

pub fn confirm_body(order_id: &str, payment_key: &str, amount: i64) -> Value {
    json!({ "paymentKey": payment_key, "orderId": order_id, "amount": amount })
}

pub fn cancel_body(reason: &str) -> Value {
    json!({ "cancelReason": reason })
}

/// An answer: its status and its body exactly as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: StatusCode,
    pub bytes: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or_else(|err| {
            panic!(
                "status {}: body is not JSON ({err}): {:?}",
                self.status,
                String::from_utf8_lossy(&self.bytes)
            )
        })
    }

    /// Asserts a Toss-shaped error: this status, this code, a message.
    pub fn assert_error(&self, status: u16, code: &str) {
        let body = self.json();
        assert_eq!(self.status.as_u16(), status, "{body}");
        assert_eq!(body["code"], code, "{body}");
        assert!(
            body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{body}"
        );
        assert_eq!(
            body.as_object().map(|o| o.len()),
            Some(2),
            "only code and message: {body}"
        );
    }

    pub fn assert_ok(&self) -> Value {
        let body = self.json();
        assert_eq!(self.status, StatusCode::OK, "{body}");
        body
    }
}

#[derive(Clone)]
pub struct Sim {
    router: Router,
    authorization: String,
}

impl Sim {
    /// A simulator with the default key, called with it.
    pub fn new() -> Self {
        Self::serving(SimState::default(), DEFAULT_SECRET_KEY)
    }

    /// A simulator accepting `key`, called with it.
    pub fn with_key(key: &str) -> Self {
        let key = SecretKey::new(key).expect("a Toss secret key");
        let state = SimState::new(key.clone(), None).expect("no webhooks");
        Self::serving(state, key.as_str())
    }

    pub fn serving(state: SimState, key: &str) -> Self {
        Self {
            router: app(state),
            authorization: basic(key),
        }
    }

    pub fn router(&self) -> Router {
        self.router.clone()
    }

    pub async fn send(&self, request: Request<Body>) -> Reply {
        let response = self
            .router
            .clone()
            .oneshot(request)
            .await
            .expect("router is infallible");
        let status = response.status();
        let bytes = to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("body readable");
        Reply {
            status,
            bytes: bytes.to_vec(),
        }
    }

    /// An authorized GET.
    pub async fn get(&self, path: &str) -> Reply {
        self.get_with(path, &[]).await
    }

    pub async fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        let mut request = Request::get(path).header(header::AUTHORIZATION, &self.authorization);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        self.send(request.body(Body::empty()).expect("valid request"))
            .await
    }

    /// An authorized JSON POST with `headers`.
    pub async fn post(&self, path: &str, headers: &[(&str, &str)], body: impl Into<Body>) -> Reply {
        let mut request = Request::post(path)
            .header(header::AUTHORIZATION, &self.authorization)
            .header(header::CONTENT_TYPE, "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        self.send(request.body(body.into()).expect("valid request"))
            .await
    }

    /// A confirm without an Idempotency-Key.
    pub async fn confirm(&self, body: Value) -> Reply {
        self.post("/v1/payments/confirm", &[], body.to_string())
            .await
    }

    /// A confirm under `key`.
    pub async fn confirm_keyed(&self, key: &str, body: Value) -> Reply {
        let headers = [("Idempotency-Key", key)];
        self.post("/v1/payments/confirm", &headers, body.to_string())
            .await
    }

    /// A full cancel without an Idempotency-Key.
    pub async fn cancel(&self, payment_key: &str) -> Reply {
        self.cancel_with(payment_key, &[], cancel_body("refund"))
            .await
    }

    pub async fn cancel_with(
        &self,
        payment_key: &str,
        headers: &[(&str, &str)],
        body: Value,
    ) -> Reply {
        let path = format!("/v1/payments/{payment_key}/cancel");
        self.post(&path, headers, body.to_string()).await
    }

    pub async fn put_faults_raw(&self, body: impl Into<Body>) -> Reply {
        let request = Request::put("/admin/faults")
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.into())
            .expect("valid request");
        self.send(request).await
    }

    /// Puts `faults` in force, asserting they were accepted.
    pub async fn put_faults(&self, faults: Value) -> Value {
        self.put_faults_raw(faults.to_string()).await.assert_ok()
    }

    pub async fn faults(&self) -> Value {
        self.unauthenticated_get("/admin/faults").await.assert_ok()
    }

    pub async fn ledger(&self) -> Value {
        self.unauthenticated_get("/admin/ledger").await.assert_ok()
    }

    pub async fn unauthenticated_get(&self, path: &str) -> Reply {
        let request = Request::get(path)
            .body(Body::empty())
            .expect("valid request");
        self.send(request).await
    }
}
