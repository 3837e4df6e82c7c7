//! `GET /admin/console`: the operator console, a page on the operator listener that
//! works the routes behind it — the reconciliation exceptions (resolve with a note),
//! UNKNOWN and flagged payments (run recovery now), the PG guard — its breaker
//! controls, its concurrency limit and its refusals — the events. The page itself
//! holds nothing: the operator's token, entered once and kept in the tab's
//! `sessionStorage`, goes with every call it makes. No external asset; its policy
//! allows its own script and style by hash alone.

use axum::http::header;
use axum::response::{IntoResponse, Response};

const PAGE: &str = include_str!("console.html");

pub async fn page() -> Response {
    static POLICY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let policy = POLICY.get_or_init(|| rules::csp::page_policy(PAGE));
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::CONTENT_SECURITY_POLICY, policy.as_str()),
            (header::X_FRAME_OPTIONS, "DENY"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        PAGE,
    )
        .into_response()
}
