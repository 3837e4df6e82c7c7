//! HTTP surface of the simulated gateway.
//!
//! Handlers only translate between JSON and the [`Ledger`](crate::ledger::Ledger)
//! and [`Faults`](crate::faults::Faults): validation of wire bodies happens here, decisions happen
//! in the ledger, the random rolls (decline, jitter) are made here and passed
//! in, and the system clock is read in exactly one place (`crate::now_ms`).
//! The webhooks a decision or a cancel owes are taken from the ledger in the
//! same step and handed to [`webhooks`](crate::webhooks) for delivery.
//!
//! The Toss API (`/v1/payments/…`) goes through [`auth`] first: every request
//! is recorded as it arrived, then refused unless it names the secret key.
//! The settlement export ([`settlements`]) is the simulator's own file, not
//! Toss's settlements API, so it stays as it was: unauthenticated and not
//! recorded among the calls. So is the imitation of the payment window
//! ([`window`]): a buyer's browser opens it, not the payment system.

mod admin;
mod answer;
mod auth;
mod confirm;
mod idempotency;
mod payments;
mod settlements;
mod window;

use axum::extract::DefaultBodyLimit;
use axum::http::{Method, Uri};
use axum::middleware::from_fn_with_state;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::SimState;
pub use answer::Answer;

/// Confirm bodies are a few short fields; anything near this is a client bug.
pub const BODY_LIMIT_BYTES: usize = 16 * 1024;

pub fn app(state: SimState) -> Router {
    let toss = Router::new()
        .route(
            "/v1/payments/confirm",
            post(confirm::confirm).layer(from_fn_with_state(state.clone(), window::as_issued)),
        )
        .route(
            "/v1/payments/orders/{order_id}",
            get(payments::payment_by_order),
        )
        .route("/v1/payments/{payment_key}", get(payments::payment_by_key))
        .route("/v1/payments/{payment_key}/cancel", post(payments::cancel))
        .route_layer(from_fn_with_state(state.clone(), auth::toss_api));
    Router::new()
        .merge(toss)
        .route("/v1/settlements", get(settlements::settlements))
        .route("/window", get(window::window))
        .route("/window/pay", post(window::pay))
        .route("/window/cancel", post(window::cancel))
        .route("/admin/ledger", get(admin::ledger))
        .route("/admin/faults", get(admin::faults).put(admin::set_faults))
        .route("/admin/capacity", get(admin::capacity_load))
        .route("/healthz", get(healthz))
        .fallback(unknown_route)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(BODY_LIMIT_BYTES))
        .with_state(state)
}

async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

async fn unknown_route(method: Method, uri: Uri) -> ApiError {
    ApiError::NotFound(format!("no route for {method} {}", uri.path()))
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}
