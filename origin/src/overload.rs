//! The API's own limits (`docs/design/guard.md`): a body read whole — at most 16 KiB,
//! within [`BODY_DEADLINE`] — before anything else, so a client that sends its body
//! slowly holds no slot; a cap on requests handled at once, taken only then (and on the
//! signed routes only once the signature holds), with the excess answered 503 `BUSY` +
//! `Retry-After` at once instead of queueing; a deadline on each request; and a count of
//! every answer by route and status for the metrics listener.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{to_bytes, Body};
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;

use rules::confirm::{InvalidConfirm, MAX_BODY_BYTES};

use crate::error::ApiError;
use crate::metrics::Metrics;

/// Requests the API handles at once, and how long each may take.
#[derive(Clone)]
pub struct Capacity {
    slots: Arc<Semaphore>,
    deadline: Duration,
}

impl Capacity {
    /// `max_concurrent` requests at once, each within [`REQUEST_DEADLINE`].
    pub fn new(max_concurrent: u32) -> Self {
        Self::with_deadline(max_concurrent, REQUEST_DEADLINE)
    }

    pub fn with_deadline(max_concurrent: u32, deadline: Duration) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(max_concurrent as usize)),
            deadline,
        }
    }
}

/// The longest a request's body may take to arrive: 16 KiB needs a fraction of this on
/// any link a browser's request came over before the edge sent it on.
pub const BODY_DEADLINE: Duration = Duration::from_secs(5);

/// Reads the body whole before the request goes on: 400 `BODY_TOO_LARGE` past 16 KiB,
/// 408 `REQUEST_TIMEOUT` when it has not all arrived within `deadline`. What comes
/// after — the signature check, the capacity slot — then never waits on the client.
pub async fn read_body_first(
    State(deadline): State<Duration>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let body = tokio::time::timeout(deadline, to_bytes(body, MAX_BODY_BYTES))
        .await
        .map_err(|_| ApiError::RequestTimeout)?
        .map_err(|err| {
            let over_the_limit = std::error::Error::source(&err)
                .is_some_and(|cause| cause.is::<http_body_util::LengthLimitError>());
            if over_the_limit {
                ApiError::from(InvalidConfirm::TooLarge)
            } else {
                ApiError::BadRequest {
                    code: "INVALID_REQUEST",
                    message: "the request body could not be read to its end".into(),
                }
            }
        })?;
    Ok(next.run(Request::from_parts(parts, Body::from(body))).await)
}

/// The longest any request may take, body upload included. Far above what a confirm
/// needs (its database waits and the PG call are each bounded by seconds), which runs
/// to its end in a task of its own even when its client is gone.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(30);

/// Handles the request if a slot is free now, within the deadline; sheds it otherwise.
pub async fn shed_excess(
    State(capacity): State<Capacity>,
    request: Request,
    next: Next,
) -> Response {
    match capacity.slots.clone().try_acquire_owned() {
        Ok(_slot) => tokio::time::timeout(capacity.deadline, next.run(request))
            .await
            .unwrap_or_else(|_| ApiError::RequestTimeout.into_response()),
        Err(_) => {
            tracing::warn!(path = %request.uri().path(), "shed a request: the API is at capacity");
            ApiError::Busy.into_response()
        }
    }
}

/// Counts the answer to every request by method, matched route and status. Every label
/// comes from a bounded set — the standard methods (any other is `OTHER`), the routes
/// (any path that matched none is `unmatched`) — so a client cannot grow the metrics.
pub async fn count_requests(
    State(metrics): State<Arc<Metrics>>,
    request: Request,
    next: Next,
) -> Response {
    let method = method_label(request.method());
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_owned();
    let response = next.run(request).await;
    metrics.http_answered(method, &route, response.status().as_u16());
    response
}

/// The method's label: one of the standard methods, or `OTHER`.
fn method_label(method: &axum::http::Method) -> &'static str {
    const STANDARD: [&str; 9] = [
        "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "CONNECT", "TRACE",
    ];
    STANDARD
        .into_iter()
        .find(|known| *known == method.as_str())
        .unwrap_or("OTHER")
}

#[cfg(test)]
mod tests {
    use axum::body::{Body, Bytes};
    use axum::http::StatusCode;
    use axum::middleware::from_fn_with_state;
    use axum::routing::post;
    use axum::Router;
    use tower::ServiceExt as _;

    use super::*;

    fn router(capacity: Capacity) -> Router {
        Router::new()
            .route("/echo", post(|body: Bytes| async move { body }))
            .layer(from_fn_with_state(capacity, shed_excess))
    }

    async fn code_of(response: Response) -> String {
        let body = to_bytes(response.into_body(), usize::MAX).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        body["code"].as_str().unwrap_or_default().to_owned()
    }

    /// A body that sends one byte and then nothing, forever.
    fn stalled_body() -> Body {
        let first =
            futures_util::stream::once(async { Ok::<_, std::io::Error>(Bytes::from_static(b"{")) });
        Body::from_stream(futures_util::StreamExt::chain(
            first,
            futures_util::stream::pending(),
        ))
    }

    #[test]
    fn a_method_label_is_a_standard_method_or_other() {
        let label =
            |name: &str| method_label(&axum::http::Method::from_bytes(name.as_bytes()).unwrap());
        assert_eq!(label("GET"), "GET");
        assert_eq!(label("PATCH"), "PATCH");
        assert_eq!(label("FOOBAR"), "OTHER");
        assert_eq!(label("get"), "OTHER");
    }

    #[tokio::test]
    async fn a_request_past_its_deadline_is_answered_408_and_frees_its_slot() {
        let capacity = Capacity::with_deadline(1, Duration::from_millis(50));
        let request = Request::post("/echo").body(stalled_body()).unwrap();
        let response = router(capacity.clone()).oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::REQUEST_TIMEOUT);
        let request = Request::post("/echo").body(Body::from("ok")).unwrap();
        let response = router(capacity).oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn a_body_is_read_whole_within_its_deadline_or_refused() {
        let router = Router::new()
            .route("/echo", post(|body: Bytes| async move { body }))
            .layer(from_fn_with_state(
                Duration::from_millis(50),
                read_body_first,
            ));
        let request = Request::post("/echo").body(stalled_body()).unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::REQUEST_TIMEOUT);
        let big = Request::post("/echo")
            .body(Body::from(vec![b'x'; MAX_BODY_BYTES + 1]))
            .unwrap();
        let response = router.clone().oneshot(big).await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert_eq!(code_of(response).await, "BODY_TOO_LARGE");
        let broken = futures_util::stream::iter([
            Ok(Bytes::from_static(b"{")),
            Err(std::io::Error::other("the client went away")),
        ]);
        let request = Request::post("/echo")
            .body(Body::from_stream(broken))
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert_eq!(code_of(response).await, "INVALID_REQUEST");
        let request = Request::post("/echo").body(Body::from("ok")).unwrap();
        let response = router.oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn a_request_beyond_the_cap_is_shed_at_once() {
        let capacity = Capacity::with_deadline(1, Duration::from_secs(5));
        let held = tokio::spawn(
            router(capacity.clone()).oneshot(Request::post("/echo").body(stalled_body()).unwrap()),
        );
        while capacity.slots.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        let request = Request::post("/echo").body(Body::from("ok")).unwrap();
        let response = router(capacity).oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()["retry-after"], "1");
        held.abort();
    }
}
