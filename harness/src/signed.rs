//! Requests to the origin as the edge sends them: signed with the key the two share
//! (`rules::signing`), the user, timestamp, nonce and signature in the edge's headers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use rules::signing::SignedRequest;

/// A request to `base` carrying `request` and its signature under `secret`.
pub fn signed_request(
    http: &reqwest::Client,
    base: &str,
    secret: &[u8],
    request: &SignedRequest<'_>,
) -> anyhow::Result<reqwest::RequestBuilder> {
    let signature = request.sign(secret).context("an unsignable request")?;
    let method = reqwest::Method::from_bytes(request.method.as_bytes())?;
    let mut builder = http
        .request(method, format!("{base}{}", request.path_and_query))
        .header("x-edge-user", request.user_id)
        .header("x-edge-timestamp", request.timestamp_ms.to_string())
        .header("x-edge-nonce", request.nonce)
        .header("x-edge-signature", signature)
        .header("content-type", "application/json")
        .body(request.body.to_vec());
    if !request.idempotency_key.is_empty() {
        builder = builder.header("idempotency-key", request.idempotency_key);
    }
    if !request.pass.is_empty() {
        builder = builder.header(rules::pass::PASS_HEADER, request.pass);
    }
    Ok(builder)
}

/// A nonce no other request of this process has used.
pub fn fresh_nonce() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!(
        "{:016x}{:016x}",
        now_ms(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Milliseconds since the Unix epoch, as the services read it.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        })
}
