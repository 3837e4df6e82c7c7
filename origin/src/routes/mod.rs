//! The origin's three routers: the API (signed routes behind the edge signature, the
//! PG's webhooks), the operator routes behind the operator's token, each on a listener
//! of its own, and the metrics listener. Built from
//! state, so tests drive them without a socket. The handlers, one file per group of
//! routes:
//!
//! - [`payments`] — confirm (TX 1, guarded gateway call, TX 2) and read-back; the
//!   waiting-room gate and the order's holder checked first (`gate.rs`), the outcome of
//!   the call (`outcome.rs`).
//! - [`credentials`] — the signed credential check behind the edge's login.
//! - [`webhooks`] — the PG's webhooks: hints, looked up at a bounded rate.
//! - [`admin`] — operator routes behind `OPERATOR_TOKEN`.
//! - [`reconciliations`] — the operator's settlement upload, queue and resolve.

pub mod admin;
pub mod console;
pub mod credentials;
pub mod events;
mod gate;
pub mod outbox;
mod outcome;
pub mod payments;
pub mod reconciliations;
pub mod rooms;
pub mod webhooks;

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, State};
use axum::middleware::from_fn_with_state;
use axum::routing::{get, post};
use axum::{Json, Router};

use crate::edge_signature::require_edge_signature;
use crate::error::ApiError;
use crate::metrics::Metrics;
use crate::operator_auth::require_operator;
use crate::overload::{count_requests, read_body_first, shed_excess, Capacity, BODY_DEADLINE};
use crate::state::AppState;

/// The API listener's routes. Every request's body is read whole first (bounded in size
/// and time), so no client holds a capacity slot while it sends slowly; the signed routes
/// take their slot only once the edge's signature holds, so an unsigned request holds
/// none.
pub fn app(state: AppState) -> Router {
    let signed = Router::new()
        .route("/payments/confirm", post(payments::confirm))
        .route("/payments", get(payments::list))
        .route("/payments/{order_id}", get(payments::get))
        .route_layer(from_fn_with_state(state.capacity.clone(), shed_excess))
        .route_layer(from_fn_with_state(
            state.edge.clone(),
            require_edge_signature,
        ));
    // Logins wait for the password hasher: their own cap, so a flood of them can make
    // logins wait or fail, never a confirm, a read or an operator route.
    let credentials = Router::new()
        .route(
            "/internal/credentials/verify",
            post(credentials::verify_credentials),
        )
        .route_layer(from_fn_with_state(
            state.login_capacity.clone(),
            shed_excess,
        ))
        .route_layer(from_fn_with_state(
            state.edge.clone(),
            require_edge_signature,
        ));
    let open = Router::new()
        .route("/gateway/webhooks/{provider}", post(webhooks::receive))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route_layer(from_fn_with_state(state.capacity.clone(), shed_excess));
    Router::new()
        .merge(signed)
        .merge(credentials)
        .merge(open)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(from_fn_with_state(BODY_DEADLINE, read_body_first))
        .layer(from_fn_with_state(state.metrics.clone(), count_requests))
        .layer(axum::middleware::from_fn(
            crate::request_id::with_request_id,
        ))
        .with_state(state)
}

/// Operator routes handled at once on their own listener, whatever the API is doing.
const OPERATOR_REQUESTS_AT_ONCE: u32 = 32;

/// The operator listener's routes (`ORIGIN_ADMIN_LISTEN`): every route behind
/// `OPERATOR_TOKEN` and its failed-attempt throttle, with a cap of its own — a flood on
/// the API listener takes none of its slots.
pub fn admin_app(state: AppState) -> Router {
    let operator = Router::new()
        .route("/admin/guard", get(admin::guard))
        .route("/admin/guard/breaker", post(admin::set_breaker))
        .route("/admin/payments", get(admin::payments))
        .route("/admin/recovery/run", post(admin::run_recovery))
        .route(
            "/admin/events",
            get(events::list_events).post(events::put_event),
        )
        .route("/admin/events/{event_id}", get(events::get_event))
        .route("/admin/history", get(console::history))
        .route("/admin/webhooks", get(outbox::webhooks))
        .route("/admin/webhooks/enable", post(outbox::enable))
        .route("/admin/webhooks/{id}/redeliver", post(outbox::redeliver))
        .route("/admin/payment-events", get(outbox::payment_events))
        .route("/admin/events/{event_id}/draw", get(rooms::draw_list))
        .route(
            "/admin/events/{event_id}/{action}",
            post(rooms::set_room_state),
        )
        .route("/admin/reconciliations", get(reconciliations::list))
        .route(
            "/admin/reconciliations/{id}/resolve",
            post(reconciliations::resolve),
        )
        .route_layer(from_fn_with_state(
            Capacity::new(OPERATOR_REQUESTS_AT_ONCE),
            shed_excess,
        ))
        .route_layer(from_fn_with_state(state.operator.clone(), require_operator))
        .route("/healthz", get(healthz))
        .route("/admin/console", get(console::page))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(from_fn_with_state(BODY_DEADLINE, read_body_first));
    // Uploads are long: their own deadline and cap, and no body limit but the file's.
    let reconciliation = Router::new()
        .route("/admin/reconciliations/run", post(reconciliations::run))
        .route_layer(from_fn_with_state(state.operator.clone(), require_operator))
        .layer(DefaultBodyLimit::disable())
        .layer(from_fn_with_state(
            Capacity::with_deadline(reconciliations::RUNS_AT_ONCE, reconciliations::RUN_DEADLINE),
            shed_excess,
        ));
    operator
        .merge(reconciliation)
        .layer(from_fn_with_state(state.metrics.clone(), count_requests))
        .layer(axum::middleware::from_fn(
            crate::request_id::with_request_id,
        ))
        .with_state(state)
}

/// The metrics listener's routes.
pub fn metrics_app(metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route("/metrics", get(render_metrics))
        .route("/healthz", get(healthz))
        .fallback(not_found)
        .with_state(metrics)
}

async fn healthz() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "status": "ok" }))
}

/// Ready while the recovery loop keeps completing cycles; 503 once it has not for three
/// intervals and a lease, so an orchestrator can restart the process.
async fn readyz(State(state): State<AppState>) -> Result<Json<serde_json::Value>, ApiError> {
    if state.recovery.ready(crate::clock::now_ms()) {
        return Ok(Json(serde_json::json!({ "status": "ready" })));
    }
    Err(ApiError::Refused {
        status: axum::http::StatusCode::SERVICE_UNAVAILABLE,
        code: "NOT_READY",
        message: "the recovery loop has not completed a cycle lately".into(),
    })
}

async fn render_metrics(State(metrics): State<Arc<Metrics>>) -> impl axum::response::IntoResponse {
    (
        [("content-type", "text/plain; version=0.0.4; charset=utf-8")],
        metrics.render(),
    )
}

async fn not_found() -> ApiError {
    ApiError::NotFound {
        code: "NOT_FOUND",
        message: "no such route",
    }
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}
