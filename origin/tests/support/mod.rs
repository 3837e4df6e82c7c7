//! The origin driven through its routers, with a real SQLite file and a real HTTP
//! gateway on loopback: the simulator, or a stub that misbehaves on purpose.

#![allow(dead_code)] // the two binaries that measure their own process use a part of it

pub mod biff;
pub mod keys;
pub mod settlement;
pub mod toss;

use std::sync::Arc;
use std::time::Duration;

use axum::body::{to_bytes, Body};
use axum::http::{Request, StatusCode};
use axum::routing::post;
use axum::Router;
use origin::clock::now_ms;
use origin::edge_signature::EdgeVerifier;
use origin::guard::{GatewayGuard, GuardConfig};
use origin::metrics::Metrics;
use origin::operator_auth::OperatorGate;
use origin::overload::Capacity;
use origin::policy::recovery::RecoveryConfig;
use origin::recovery::Recovery;
use origin::routes::{admin_app, app, metrics_app};
use origin::state::AppState;
use origin::store::Store;
use origin::users::Passwords;
use rules::pass::{Gate, PASS_HEADER};
use rules::signing::SignedRequest;
use serde_json::Value;
use tower::ServiceExt as _;

const SECRET: &[u8] = b"origin-test-secret-0123456789abcdef";
pub const OPERATOR_TOKEN: &str = "operator-test-token-0123456789abcdef";

pub struct Origin {
    /// The API listener's routes.
    pub router: Router,
    /// The operator listener's routes.
    pub admin: Router,
    pub metrics: Router,
    pub store: Arc<dyn Store>,
    /// What the console's history samples, to take a sample when a test says.
    pub history: origin::history::Sources,
    /// The delivery of the outbox to the merchant, where one runs: stopped on drop.
    delivery: Option<tokio::task::JoinHandle<()>>,
    _db: tempfile::TempDir,
}

impl Drop for Origin {
    fn drop(&mut self) {
        if let Some(delivery) = &self.delivery {
            delivery.abort();
        }
    }
}

impl Origin {
    pub async fn with_gateway(gateway_url: &str, timeout: Duration) -> Self {
        let guard = GuardConfig {
            timeout,
            ..GuardConfig::default()
        };
        Self::with_guard(gateway_url, guard).await
    }

    pub async fn with_guard(gateway_url: &str, guard: GuardConfig) -> Self {
        Self::with_capacities(gateway_url, guard, 64, 64).await
    }

    /// An origin handling at most `requests` API requests and `logins` credential checks
    /// at once.
    pub async fn with_capacities(
        gateway_url: &str,
        guard: GuardConfig,
        requests: u32,
        logins: u32,
    ) -> Self {
        Self::build(gateway_url, guard, (requests, logins), None, None).await
    }

    /// An origin delivering its outbox to the merchant as `webhooks` says.
    pub async fn with_merchant_webhooks(
        gateway_url: &str,
        webhooks: origin::outbox::config::MerchantWebhooks,
    ) -> Self {
        let mut origin = Self::build(
            gateway_url,
            GuardConfig::default(),
            (64, 64),
            None,
            Some(webhooks.clone()),
        )
        .await;
        let delivery = origin::outbox::Delivery::new(
            origin.store.clone(),
            Arc::new(Metrics::default()),
            webhooks,
            "KRW",
        )
        .unwrap();
        origin.delivery = Some(tokio::spawn(Arc::new(delivery).run()));
        origin
    }

    /// An origin that tells the edge at `edge_url` of the drops' rooms.
    pub async fn with_edge(gateway_url: &str, edge_url: &str) -> Self {
        let edge = origin::edge::Edge {
            url: edge_url.to_owned(),
            secret: SECRET.to_vec(),
        };
        Self::build(
            gateway_url,
            GuardConfig::default(),
            (64, 64),
            Some(edge),
            None,
        )
        .await
    }

    /// `capacities`: the API requests and the credential checks handled at once.
    async fn build(
        gateway_url: &str,
        guard: GuardConfig,
        (requests, logins): (u32, u32),
        edge: Option<origin::edge::Edge>,
        merchant: Option<origin::outbox::config::MerchantWebhooks>,
    ) -> Self {
        let db = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", db.path().join("origin.sqlite3").display());
        let metrics = Arc::new(Metrics::default());
        // As `origin serve` opens it: on SQLite, its writes one at a time.
        let store = origin::store::open(&url, Duration::from_secs(3), keys::cipher("v1"))
            .await
            .unwrap();
        let gateway = toss::adapter(gateway_url);
        let (webhooks, _hints) = origin::recovery::hints::Hints::new();
        let state = AppState {
            store: store.clone(),
            gateway: gateway.clone(),
            guard: Arc::new(GatewayGuard::new("approve", guard, metrics.clone())),
            edge: Arc::new(EdgeVerifier::new(SECRET.to_vec())),
            metrics: metrics.clone(),
            passwords: Arc::new(Passwords::new().unwrap()),
            operator: Arc::new(OperatorGate::new(Some(OPERATOR_TOKEN))),
            capacity: Capacity::new(requests),
            login_capacity: Capacity::new(logins),
            recovery: Arc::new(Recovery::new(
                store.clone(),
                gateway,
                GatewayGuard::new("recover", guard, metrics.clone()),
                metrics.clone(),
                RecoveryConfig::for_gateway_timeout(guard.timeout),
            )),
            webhooks,
            edge_calls: edge.map(Arc::new),
            gated_events: Arc::default(),
            history: Arc::new(origin::history::History::new(now_ms())),
            merchant_webhooks: merchant.map(Arc::new),
            idempotency_lease: origin::idempotency::DEFAULT_LEASE,
        };
        let history = origin::history::Sources {
            history: state.history.clone(),
            store: state.store.clone(),
            guard: state.guard.clone(),
            metrics: state.metrics.clone(),
            edge: state.edge_calls.clone(),
        };
        Self {
            history,
            delivery: None,
            router: app(state.clone()),
            admin: admin_app(state),
            metrics: metrics_app(metrics),
            store,
            _db: db,
        }
    }

    /// Sends `request` to the listener that serves it, as deployed: `/admin/…` to the
    /// operator listener, everything else to the API.
    pub async fn send(&self, request: Request<Body>) -> (StatusCode, Value) {
        let listener = if request.uri().path().starts_with("/admin/") {
            &self.admin
        } else {
            &self.router
        };
        let response = listener.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    /// The metrics listener's `/metrics`.
    pub async fn metrics_text(&self) -> String {
        let request = Request::get("/metrics").body(Body::empty()).unwrap();
        let response = self.metrics.clone().oneshot(request).await.unwrap();
        let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    pub async fn confirm(&self, body: &str) -> (StatusCode, Value) {
        self.send(signed("POST", "/payments/confirm", Some("key-1"), body))
            .await
    }

    pub async fn read(&self, order_id: &str) -> (StatusCode, Value) {
        self.send(signed("GET", &format!("/payments/{order_id}"), None, ""))
            .await
    }
}

/// The headers the edge signs a request of `user-1` with, under `secret`, with a
/// fresh nonce and no word from its gate.
pub fn edge_headers(
    secret: &[u8],
    method: &str,
    path: &str,
    key: &str,
    body: &[u8],
) -> Vec<(&'static str, String)> {
    edge_headers_as(secret, "user-1", &Gate::Ungated, method, path, key, body)
}

/// The headers the edge signs a request of `user` with, under `secret`, with a fresh
/// nonce and its gate's word `gate` (sent only when it says something).
pub fn edge_headers_as(
    secret: &[u8],
    user: &str,
    gate: &Gate,
    method: &str,
    path: &str,
    key: &str,
    body: &[u8],
) -> Vec<(&'static str, String)> {
    static NEXT_NONCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nonce = format!(
        "{:032x}",
        NEXT_NONCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let timestamp_ms = now_ms();
    let pass = gate.field();
    let signature = SignedRequest {
        method,
        path_and_query: path,
        timestamp_ms,
        nonce: &nonce,
        user_id: user,
        idempotency_key: key,
        request_id: "",
        pass: &pass,
        body,
    }
    .sign(secret)
    .unwrap();
    let mut headers = vec![
        ("x-edge-user", user.to_owned()),
        ("x-edge-timestamp", timestamp_ms.to_string()),
        ("x-edge-nonce", nonce),
        ("x-edge-signature", signature),
    ];
    if !pass.is_empty() {
        headers.push((PASS_HEADER, pass));
    }
    headers
}

/// A request signed as the edge signs it, for user `user-1`, with a fresh nonce.
pub fn signed(method: &str, path: &str, key: Option<&str>, body: &str) -> Request<Body> {
    signed_as("user-1", &Gate::Ungated, method, path, key, body)
}

/// A request signed as the edge signs it, for `user` with the gate's word `gate`.
pub fn signed_as(
    user: &str,
    gate: &Gate,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: &str,
) -> Request<Body> {
    let headers = edge_headers_as(
        SECRET,
        user,
        gate,
        method,
        path,
        key.unwrap_or_default(),
        body.as_bytes(),
    );
    let mut request = Request::builder().method(method).uri(path);
    for (name, value) in headers {
        request = request.header(name, value);
    }
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    request.body(Body::from(body.to_owned())).unwrap()
}

/// Serves `router` on a free loopback port; returns its base URL.
pub async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

pub async fn simulator() -> String {
    serve(gateway_sim::app(gateway_sim::SimState::default())).await
}

/// A gateway whose confirm always answers `status` with `body`, after `delay`.
pub async fn stub_gateway(status: StatusCode, body: Value, delay: Duration) -> String {
    serve(Router::new().route(
        "/v1/payments/confirm",
        post(move || async move {
            tokio::time::sleep(delay).await;
            (status, axum::Json(body))
        }),
    ))
    .await
}
