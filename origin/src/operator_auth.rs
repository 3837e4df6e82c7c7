//! The gate of the operator routes: the bearer `OPERATOR_TOKEN`, compared in constant
//! time, and a throttle on failed attempts — an address that has failed
//! [`FAILURES_ALLOWED`] times within [`FAILURE_WINDOW_MS`] is answered 429
//! `RATE_LIMITED` until the oldest of them leaves the window, whatever token it sends,
//! so a token cannot be guessed at speed. Other addresses are not slowed: the real
//! operator keeps working while someone else guesses — unless that someone holds more
//! addresses than can be remembered one by one ([`ADDRESSES`]); then new addresses share
//! one allowance. Behind a proxy every client is the proxy's address.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use rules::expiring::ExpiringMap;
use rules::login_limit::client_key;

use crate::clock::now_ms;
use crate::error::ApiError;

/// Failed attempts one address may make in a window.
pub const FAILURES_ALLOWED: usize = 10;
/// The window failed attempts are counted in.
pub const FAILURE_WINDOW_MS: i64 = 60_000;
/// Addresses whose failures are remembered one by one. Past that, the failures of the
/// addresses that do not fit are counted together, and once those have spent the
/// allowance every address not remembered is refused with them: an attacker with more
/// addresses than this slows everyone new, never gets more guesses.
const ADDRESSES: usize = 10_000;

/// The operator's token (`None`: operator routes are off) and the failed attempts.
pub struct OperatorGate {
    token: Option<Arc<str>>,
    failures: FailedAttempts,
}

impl OperatorGate {
    pub fn new(token: Option<&str>) -> Self {
        Self {
            token: token.map(Arc::from),
            failures: FailedAttempts::default(),
        }
    }
}

/// Recent failed attempts, by client address (an IPv6 address by its /64).
#[derive(Default)]
struct FailedAttempts {
    failures: Mutex<Failures>,
}

struct Failures {
    by_address: ExpiringMap<VecDeque<i64>>,
    /// The failures of addresses [`Failures::by_address`] had no room for.
    untracked: VecDeque<i64>,
}

impl Default for Failures {
    fn default() -> Self {
        Self {
            by_address: ExpiringMap::new(ADDRESSES),
            untracked: VecDeque::new(),
        }
    }
}

impl FailedAttempts {
    /// How long `address` is still refused at `now_ms`, if it has spent its failures.
    fn refusing(&self, address: &str, now_ms: i64) -> Option<i64> {
        let mut failures = self.failures.lock().ok()?;
        let Failures {
            by_address,
            untracked,
        } = &mut *failures;
        let counted = match by_address.get_mut(address, now_ms) {
            Some((failures, _)) => failures,
            None => untracked,
        };
        while counted
            .front()
            .is_some_and(|at| at + FAILURE_WINDOW_MS <= now_ms)
        {
            counted.pop_front();
        }
        (counted.len() >= FAILURES_ALLOWED)
            .then(|| counted.front().map(|at| at + FAILURE_WINDOW_MS - now_ms))
            .flatten()
    }

    /// Counts a failed attempt of `address` at `now_ms`.
    fn record(&self, address: &str, now_ms: i64) {
        let Ok(mut failures) = self.failures.lock() else {
            return;
        };
        let keep_last = |failures: &mut VecDeque<i64>| {
            while failures.len() > FAILURES_ALLOWED {
                failures.pop_front();
            }
        };
        let stored = failures.by_address.upsert(
            address,
            VecDeque::from([now_ms]),
            now_ms + FAILURE_WINDOW_MS,
            now_ms,
            |old, new| {
                old.extend(new);
                keep_last(old);
            },
        );
        if !stored {
            failures.untracked.push_back(now_ms);
            keep_last(&mut failures.untracked);
        }
    }
}

/// Lets a request through only with the operator's bearer token, from an address that
/// has not spent its failed attempts.
pub async fn require_operator(
    State(gate): State<Arc<OperatorGate>>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let expected = gate
        .token
        .as_deref()
        .ok_or(ApiError::OperatorRoutesDisabled)?;
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip().to_string());
    let address = client_key(peer.as_deref());
    let now = now_ms();
    if let Some(wait_ms) = gate.failures.refusing(&address, now) {
        tracing::warn!(%address, "operator route refused: too many failed attempts");
        return Err(ApiError::TooManyAttempts {
            retry_after_secs: (wait_ms + 999) / 1000,
        });
    }
    let given = request
        .headers()
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default();
    if !same_secret(given.as_bytes(), expected.as_bytes()) {
        gate.failures.record(&address, now);
        tracing::warn!(path = %request.uri().path(), %address, "operator route refused");
        return Err(ApiError::OperatorTokenInvalid);
    }
    Ok(next.run(request).await)
}

/// Compares in time that depends on the lengths only, not on where they differ.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_the_map_cannot_hold_share_one_allowance() {
        let failures = FailedAttempts::default();
        for n in 0..ADDRESSES {
            failures.record(&format!("10.0.{}.{}", n / 256, n % 256), 1_000);
        }
        for n in 0..FAILURES_ALLOWED {
            assert_eq!(failures.refusing(&format!("new-{n}"), 1_001), None);
            failures.record(&format!("new-{n}"), 1_001);
        }
        assert!(failures.refusing("another-new-one", 1_002).is_some());
        assert_eq!(
            failures.refusing("10.0.0.1", 1_002),
            None,
            "one failure of its own"
        );
    }

    #[test]
    fn an_address_is_refused_once_it_has_spent_its_failures_and_only_until_they_age() {
        let failures = FailedAttempts::default();
        for n in 0..FAILURES_ALLOWED as i64 {
            assert_eq!(failures.refusing("a", 1_000 + n), None);
            failures.record("a", 1_000 + n);
        }
        assert_eq!(failures.refusing("a", 1_010), Some(FAILURE_WINDOW_MS - 10));
        assert_eq!(failures.refusing("b", 1_010), None, "another address");
        assert_eq!(failures.refusing("a", 1_000 + FAILURE_WINDOW_MS), None);
    }

    #[test]
    fn only_the_same_bytes_are_the_same_secret() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
        assert!(!same_secret(b"", b"abc"));
    }
}
