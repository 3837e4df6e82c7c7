//! Every request's id: the edge's `X-Request-Id` — signed with the rest of the request,
//! so the signature check refuses a changed one — or, for a request that did not come
//! through the edge (a PG webhook, an operator's), a fresh one. It is a field of the
//! request's tracing span, so every log line of the request names it; it comes back in
//! `X-Request-Id`, and every JSON error body carries it as `requestId`.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use rules::request_id::well_formed;
use rules::signing::REQUEST_ID_HEADER;
use tracing::Instrument as _;

/// The largest error body given its request id (they are a few hundred bytes).
const MAX_ERROR_BODY: usize = 64 * 1024;

pub async fn with_request_id(req: Request, next: Next) -> Response {
    let given = req
        .headers()
        .get(REQUEST_ID_HEADER)
        .and_then(|value| value.to_str().ok())
        .filter(|id| well_formed(id))
        .map(str::to_owned);
    let id = given.unwrap_or_else(fresh);
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        method = %req.method(),
        path = %req.uri().path()
    );
    let response = next.run(req).instrument(span.clone()).await;
    let status = response.status();
    span.in_scope(|| tracing::info!(status = status.as_u16(), "answered"));
    let mut response = if status.is_client_error() || status.is_server_error() {
        with_id_in_body(response, &id).await
    } else {
        response
    };
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    response
}

fn fresh() -> String {
    let mut bytes = [0u8; 16];
    match getrandom::fill(&mut bytes) {
        Ok(()) => hex::encode(bytes),
        // No randomness: an id that says so rather than none.
        Err(_) => "no-randomness".to_owned(),
    }
}

/// A JSON error body with `requestId` added; any other body as it was.
async fn with_id_in_body(response: Response, id: &str) -> Response {
    let is_json = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|kind| kind.starts_with("application/json"));
    if !is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ERROR_BODY).await else {
        parts.status = StatusCode::INTERNAL_SERVER_ERROR;
        return Response::from_parts(parts, Body::empty());
    };
    let body = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(serde_json::Value::Object(mut fields)) => {
            fields.insert("requestId".into(), id.into());
            serde_json::to_vec(&fields).unwrap_or_else(|_| bytes.to_vec())
        }
        _ => bytes.to_vec(),
    };
    parts.headers.remove("content-length");
    Response::from_parts(parts, Body::from(body))
}
