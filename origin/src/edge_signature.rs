//! The origin trusts only the edge (`docs/design/edge-trust.md`): every signed route passes through
//! [`require_edge_signature`], which refuses a missing, wrong, stale or replayed
//! signature before any handler runs, and hands the handler the [`EdgeCaller`].
//!
//! Replays are refused by nonce: a nonce is remembered for as long as its signature is
//! fresh, so what is kept is bounded by the edge's request rate over one skew window.
//! On SQLite — one instance — it is kept in memory. On PostgreSQL, where several
//! instances share the database, it is kept there (`edge_nonces`, insert-or-refuse: one
//! insert per signed request), so a request replayed to another instance is refused too;
//! [`purge_stale_nonces`] forgets the stale ones.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::{to_bytes, Body};
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::Response;
use rules::confirm::{InvalidConfirm, MAX_BODY_BYTES};
use rules::pass::{Gate, PASS_HEADER};
use rules::signing::{
    SignedRequest, IDEMPOTENCY_KEY_HEADER, MAX_SKEW_MS, NONCE_HEADER, REQUEST_ID_HEADER,
    SIGNATURE_HEADER, TIMESTAMP_HEADER, USER_HEADER,
};

use crate::clock::now_ms;
use crate::error::ApiError;
use crate::store::Store;

/// The authenticated user a signed request acts for, and what the edge's gate said of it
/// (signed, `rules::pass`; `Gate::Ungated` when the edge sent no word).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeCaller {
    pub user_id: String,
    pub gate: Gate,
}

/// Verifies edge signatures and remembers the nonces it has accepted.
pub struct EdgeVerifier {
    secret: Vec<u8>,
    seen: Seen,
}

/// Where accepted nonces are kept.
enum Seen {
    /// This instance's memory: the only instance.
    Here(Mutex<ReplayGuard>),
    /// The database every instance shares.
    Shared(Arc<dyn Store>),
}

/// A signature that holds, before its nonce is checked.
struct Verified {
    caller: EdgeCaller,
    nonce: String,
    timestamp_ms: i64,
}

impl EdgeVerifier {
    /// Nonces kept in memory: for an origin that is the only instance.
    pub fn new(secret: Vec<u8>) -> Self {
        Self {
            secret,
            seen: Seen::Here(Mutex::new(ReplayGuard::default())),
        }
    }

    /// Nonces kept in `store`, shared by every instance on its database.
    pub fn shared(secret: Vec<u8>, store: Arc<dyn Store>) -> Self {
        Self {
            secret,
            seen: Seen::Shared(store),
        }
    }

    /// Whether `nonce` is seen for the first time; remembered until its signature is
    /// stale.
    async fn first_use(
        &self,
        nonce: &str,
        timestamp_ms: i64,
        now_ms: i64,
    ) -> Result<bool, ApiError> {
        match &self.seen {
            Seen::Here(guard) => Ok(guard
                .lock()
                .map_err(|_| ApiError::internal("replay guard poisoned"))?
                .first_use(nonce, timestamp_ms, now_ms)),
            Seen::Shared(store) => Ok(store
                .first_use_of_nonce(nonce, timestamp_ms + MAX_SKEW_MS)
                .await?),
        }
    }

    fn verify(&self, parts: &Parts, body: &[u8], now_ms: i64) -> Result<Verified, ApiError> {
        // A header given twice is ambiguous: refused, never read one way or the other.
        let header = |name: &str| {
            let mut values = parts.headers.get_all(name).iter();
            match (values.next(), values.next()) {
                (Some(value), None) => value.to_str().ok(),
                _ => None,
            }
        };
        let refuse = |reason: &str| {
            tracing::warn!(reason, path = %parts.uri.path(), "edge signature refused");
            ApiError::SignatureInvalid
        };
        let (Some(user_id), Some(timestamp), Some(nonce), Some(signature)) = (
            header(USER_HEADER),
            header(TIMESTAMP_HEADER),
            header(NONCE_HEADER),
            header(SIGNATURE_HEADER),
        ) else {
            return Err(refuse("signature headers missing"));
        };
        let timestamp_ms = timestamp
            .parse::<i64>()
            .map_err(|_| refuse("timestamp malformed"))?;
        if !is_nonce(nonce) {
            return Err(refuse("nonce malformed"));
        }
        // Absent, the gate said nothing; present, it must be read one way only.
        let pass = if parts.headers.contains_key(PASS_HEADER) {
            header(PASS_HEADER).ok_or_else(|| refuse("pass header malformed"))?
        } else {
            ""
        };
        let path_and_query = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
        SignedRequest {
            method: parts.method.as_str(),
            path_and_query,
            timestamp_ms,
            nonce,
            user_id,
            idempotency_key: header(IDEMPOTENCY_KEY_HEADER).unwrap_or_default(),
            request_id: header(REQUEST_ID_HEADER).unwrap_or_default(),
            pass,
            body,
        }
        .verify(&self.secret, signature, now_ms)
        .map_err(|rejection| refuse(&rejection.to_string()))?;
        let gate = Gate::parse(pass).ok_or_else(|| refuse("pass malformed"))?;
        Ok(Verified {
            caller: EdgeCaller {
                user_id: user_id.to_owned(),
                gate,
            },
            nonce: nonce.to_owned(),
            timestamp_ms,
        })
    }
}

/// How often [`purge_stale_nonces`] runs: one skew window.
const PURGE_EVERY: std::time::Duration = std::time::Duration::from_millis(MAX_SKEW_MS as u64);

/// Forgets the shared nonces whose signatures are stale, every skew window, for as long as
/// the origin runs; a failed purge is retried at the next.
pub async fn purge_stale_nonces(store: Arc<dyn Store>) {
    let mut every = tokio::time::interval(PURGE_EVERY);
    loop {
        every.tick().await;
        if let Err(err) = store.purge_edge_nonces(now_ms()).await {
            tracing::warn!(error = %err, "could not purge stale edge nonces");
        }
    }
}

/// Axum middleware for the signed routes.
pub async fn require_edge_signature(
    State(verifier): State<Arc<EdgeVerifier>>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    if !parts.headers.contains_key(SIGNATURE_HEADER) {
        tracing::warn!(path = %parts.uri.path(), "unsigned request refused");
        return Err(ApiError::SignatureInvalid);
    }
    let body = to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| InvalidConfirm::TooLarge)?;
    let now = now_ms();
    let verified = verifier.verify(&parts, &body, now)?;
    if !verifier
        .first_use(&verified.nonce, verified.timestamp_ms, now)
        .await?
    {
        tracing::warn!(path = %parts.uri.path(), "edge signature refused: nonce replayed");
        return Err(ApiError::SignatureInvalid);
    }
    let mut request = Request::from_parts(parts, Body::from(body));
    request.extensions_mut().insert(verified.caller);
    Ok(next.run(request).await)
}

/// The edge sends 128 random bits as 32 lowercase hex digits; nothing else is a nonce.
fn is_nonce(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Nonces seen while their signatures are fresh.
#[derive(Default)]
struct ReplayGuard {
    /// Nonce → the time after which its signature is stale anyway.
    expires: HashMap<String, i64>,
    next_sweep_ms: i64,
}

impl ReplayGuard {
    /// True the first time a fresh nonce is seen; false for every replay.
    fn first_use(&mut self, nonce: &str, timestamp_ms: i64, now_ms: i64) -> bool {
        if now_ms >= self.next_sweep_ms {
            self.expires.retain(|_, expires| *expires >= now_ms);
            self.next_sweep_ms = now_ms + MAX_SKEW_MS;
        }
        if self.expires.contains_key(nonce) {
            return false;
        }
        self.expires
            .insert(nonce.to_owned(), timestamp_ms + MAX_SKEW_MS);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nonce_is_accepted_once() {
        let mut guard = ReplayGuard::default();
        assert!(guard.first_use("a", 1_000, 1_000));
        assert!(!guard.first_use("a", 1_000, 1_001));
        assert!(guard.first_use("b", 1_000, 1_001));
    }

    #[test]
    fn a_nonce_is_forgotten_only_after_its_signature_is_stale() {
        let mut guard = ReplayGuard::default();
        assert!(guard.first_use("a", 0, 0));
        assert!(!guard.first_use("a", 0, MAX_SKEW_MS));
        assert!(guard.first_use("c", MAX_SKEW_MS * 3, MAX_SKEW_MS * 3));
        assert_eq!(guard.expires.len(), 1, "the stale nonce was swept");
    }

    #[test]
    fn only_32_lowercase_hex_digits_are_a_nonce() {
        assert!(is_nonce("0123456789abcdef0123456789abcdef"));
        assert!(!is_nonce("0123456789ABCDEF0123456789ABCDEF"));
        assert!(!is_nonce("0123456789abcdef"));
        assert!(!is_nonce("0123456789abcdef0123456789abcdeg"));
    }
}
