//! Idempotency-Key on confirm (`docs/design/payments.md`, IETF draft semantics), per user:
//!
//! | the key… | answer |
//! |---|---|
//! | is missing | 400 `IDEMPOTENCY_KEY_REQUIRED` |
//! | was used for another body | 422 `IDEMPOTENCY_KEY_REUSED` |
//! | is in flight | 409 `IDEMPOTENCY_IN_FLIGHT` + `Retry-After` |
//! | finished | the stored response, byte for byte, + `Idempotent-Replayed: true` |
//!
//! Records are kept [`RETAIN`] and then purged. A claim in flight keeps others out
//! for at most its lease (`IDEMPOTENCY_LEASE_MS`, [`DEFAULT_LEASE`]): a request that
//! died (the process was killed) does not lock its key for a day, and the request that
//! takes it over finds the payment its predecessor may have inserted.

use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::clock::now_ms;
use crate::metrics::Metrics;
use crate::store::transient::retry_transient;
use crate::store::{IdempotencyClaim, Store, StoredResponse};

/// How long a finished key is replayed.
pub const RETAIN: Duration = Duration::from_secs(24 * 3600);

/// How long a claim in flight keeps a duplicate out unless `IDEMPOTENCY_LEASE_MS` says
/// otherwise. Far above the longest a confirm can take (database waits and the PG
/// timeout are each bounded by seconds); the configuration refuses a lease that is not
/// longer than the PG timeout.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(60);

/// How often expired records are purged.
const PURGE_EVERY: Duration = Duration::from_secs(600);

pub const REPLAYED_HEADER: &str = "idempotent-replayed";

/// The claim of `key` by `user_id` for a request with this `body`, held for `lease`.
pub fn claim(user_id: &str, key: &str, body: &[u8], lease: Duration) -> IdempotencyClaim {
    IdempotencyClaim {
        user_id: user_id.to_owned(),
        key: key.to_owned(),
        request_hash: hex::encode(Sha256::digest(body)),
        lease_ms: lease.as_millis() as i64,
        retain_ms: RETAIN.as_millis() as i64,
    }
}

/// A response as stored and as sent: a status and a JSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: StatusCode,
    pub body: String,
}

impl Answer {
    pub fn json(status: StatusCode, value: &impl serde::Serialize) -> Self {
        Self {
            status,
            // Our own plain data types serialize without fail.
            body: serde_json::to_string(value).unwrap_or_default(),
        }
    }

    pub fn stored(&self) -> StoredResponse {
        StoredResponse {
            status: self.status.as_u16(),
            body: self.body.clone(),
        }
    }

    /// The stored response of a finished key, marked as a replay.
    pub fn replay(stored: StoredResponse) -> Response {
        let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
        let mut response = Self {
            status,
            body: stored.body,
        }
        .into_response();
        response
            .headers_mut()
            .insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
        response
    }
}

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        (
            self.status,
            [("content-type", "application/json")],
            self.body,
        )
            .into_response()
    }
}

/// Purges records past [`RETAIN`] now and every `PURGE_EVERY`, for as long as it runs.
pub async fn purge_expired(store: Arc<dyn Store>, metrics: Arc<Metrics>) {
    let mut every = tokio::time::interval(PURGE_EVERY);
    loop {
        every.tick().await;
        let before = now_ms() - RETAIN.as_millis() as i64;
        let purged = retry_transient(&metrics, "purge_idempotency_keys", || {
            store.purge_idempotency_keys(before)
        })
        .await;
        match purged {
            Ok(0) => {}
            Ok(count) => tracing::info!(count, "purged expired idempotency keys"),
            Err(err) => tracing::warn!(error = %err, "could not purge idempotency keys"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_is_bound_to_the_body_and_the_user() {
        let first = claim("user-1", "key-1", b"{\"a\":1}", DEFAULT_LEASE);
        assert_eq!(first, claim("user-1", "key-1", b"{\"a\":1}", DEFAULT_LEASE));
        assert_ne!(
            first.request_hash,
            claim("user-1", "key-1", b"{\"a\":2}", DEFAULT_LEASE).request_hash
        );
        assert_eq!(first.request_hash.len(), 64);
        assert_eq!(first.lease_ms, 60_000);
        let short = claim("user-1", "key-1", b"{\"a\":1}", Duration::from_secs(3));
        assert_eq!(short.lease_ms, 3_000);
    }

    #[tokio::test]
    async fn a_replay_is_the_stored_response_marked() {
        let stored = StoredResponse {
            status: 202,
            body: r#"{"status":"UNKNOWN"}"#.into(),
        };
        let response = Answer::replay(stored);
        assert_eq!(response.status(), StatusCode::ACCEPTED);
        assert_eq!(response.headers()[REPLAYED_HEADER], "true");
        let body = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .unwrap();
        assert_eq!(&body[..], br#"{"status":"UNKNOWN"}"#);
    }
}
