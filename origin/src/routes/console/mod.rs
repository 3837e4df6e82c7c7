//! `GET /admin/console`: the operator console, a page on the operator listener that
//! works the routes behind it:
//!
//! - the drops (`drops.js`): defined or changed, paused, resumed and closed, each over
//!   the version the page shows; a live view of each room, refreshed every few
//!   seconds; the draw's seed and list;
//! - charts of the last 15 minutes (`charts.js`, inline SVG) from `GET /admin/history`;
//! - the PG guard — its breaker controls, its concurrency limit and its refusals — the
//!   merchant's webhooks (the endpoint, the backlog, failures, dead letters sent again),
//!   the reconciliation exceptions (resolve with a note), UNKNOWN and flagged payments
//!   (run recovery now) (`console.js`);
//! - amounts in the event's currency and times in the operator's time zone, named
//!   (`format.js`).
//!
//! The page itself holds nothing: the operator's token, entered once and kept in the
//! tab's `sessionStorage`, goes with every call it makes. It is put together once from
//! its parts, each script and the style inline; no external asset, and its policy allows
//! them by hash alone.

use std::sync::OnceLock;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::state::AppState;

const LAYOUT: &str = include_str!("layout.html");
const STYLE: &str = include_str!("console.css");
/// In the order they run: each later one uses what the earlier ones define.
const SCRIPTS: [&str; 4] = [
    include_str!("format.js"),
    include_str!("charts.js"),
    include_str!("drops.js"),
    include_str!("console.js"),
];

/// The page, its style and scripts inline.
fn page_text() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| {
        let scripts: String = SCRIPTS
            .iter()
            .map(|script| format!("<script>{script}</script>\n"))
            .collect();
        LAYOUT
            .replace("<!--style-->", &format!("<style>{STYLE}</style>"))
            .replace("<!--scripts-->", &scripts)
    })
}

pub async fn page() -> Response {
    static POLICY: OnceLock<String> = OnceLock::new();
    let page = page_text();
    let policy = POLICY.get_or_init(|| rules::csp::page_policy(page));
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::CONTENT_SECURITY_POLICY, policy.as_str()),
            (header::X_FRAME_OPTIONS, "DENY"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        page,
    )
        .into_response()
}

/// `GET /admin/history`: the last 15 minutes this process sampled (`crate::history`).
pub async fn history(State(state): State<AppState>) -> Json<crate::history::HistoryView> {
    Json(state.history.view(crate::clock::now_ms()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_is_in_the_page_and_allowed_by_its_hash() {
        let page = page_text();
        assert!(!page.contains("<!--"), "a marker is left in the page");
        assert_eq!(page.matches("<script>").count(), SCRIPTS.len());
        let policy = rules::csp::page_policy(page);
        assert_eq!(
            policy.matches("'sha256-").count(),
            SCRIPTS.len() + 1,
            "{policy}"
        );
    }
}
