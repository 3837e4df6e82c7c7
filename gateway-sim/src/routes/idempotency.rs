//! `Idempotency-Key` on the Toss API's POSTs, as Toss honours it: the
//! header's value, the key claimed while its request is processed, and what
//! is kept under it.
//!
//! What is kept: the first answer of a request that was processed — decided,
//! refused by a payment rule (`ALREADY_PROCESSED_PAYMENT`,
//! `DUPLICATED_ORDER_ID`, a cancel refused), or answered by a test code —
//! unless that answer is a 5xx. Whether Toss keeps 5xx answers is
//! unconfirmed; the simulator does not, so the next request under the key is
//! processed afresh (and, if the first had charged, told
//! `ALREADY_PROCESSED_PAYMENT`). A request never processed keeps nothing
//! either: refused before processing (authorization, the key itself, its
//! body, a full line at capacity — its key never claimed —, the rate cap),
//! dropped by `HANG_BEFORE_PROCESSING` (its key released as the hang begins),
//! or answered 500 by `ERROR_500`. A key whose request is still being
//! processed — `DELAY`'s wait, a capacity's processing time — answers
//! `409 IDEMPOTENT_REQUEST_PROCESSING`. `HANG_AFTER_PROCESSING` holds only
//! the answer's delivery: the answer is kept when the decision is made, and a
//! repeat during the hold is replayed at once.
//!
//! In non-idempotent mode (`idempotent: false`) keys are ignored altogether.
//! GETs ignore them, as Toss's do.

use axum::http::HeaderMap;

use crate::codes;
use crate::error::ApiError;
use crate::ledger::{ChargeId, Claim, KeyClaim};
use crate::routes::Answer;
use crate::{now_ms, SimState};

pub(super) const IDEMPOTENCY_KEY: &str = "idempotency-key";
/// Toss's longest key.
pub const MAX_KEY_CHARS: usize = 300;

/// The request's key: `None` without the header; 1 to [`MAX_KEY_CHARS`]
/// characters of visible ASCII, else `INVALID_IDEMPOTENCY_KEY`.
pub(super) fn key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get(IDEMPOTENCY_KEY) else {
        return Ok(None);
    };
    let invalid =
        |detail: &str| ApiError::detailed(codes::INVALID_IDEMPOTENCY_KEY, detail.to_owned());
    let key = value
        .to_str()
        .map_err(|_| invalid("Idempotency-Key must be visible ASCII"))?;
    if key.is_empty() || key.len() > MAX_KEY_CHARS {
        return Err(invalid(&format!(
            "Idempotency-Key must be 1 to {MAX_KEY_CHARS} characters, got {}",
            key.len()
        )));
    }
    Ok(Some(key.to_owned()))
}

/// What the key lets a request do.
pub(super) enum Keyed {
    /// Be processed, keeping its answer under the key (if any).
    Fresh(KeyGuard),
    /// Nothing: the first request's answer is sent again.
    Replay(Answer),
}

/// Claims `key` under `path`, unless there is none or keys are not honoured
/// (`honoured`: the `idempotent` fault setting).
pub(super) fn claim(
    state: &SimState,
    path: &str,
    key: Option<String>,
    honoured: bool,
) -> Result<Keyed, ApiError> {
    let Some(key) = key.filter(|_| honoured) else {
        return Ok(Keyed::Fresh(KeyGuard::none(state)));
    };
    match state.with_ledger(|ledger| ledger.claim_key(path, &key, now_ms())) {
        Claim::Fresh(claim) => Ok(Keyed::Fresh(KeyGuard {
            state: state.clone(),
            claim: Some(claim),
        })),
        Claim::Replay(stored) => {
            tracing::info!(
                path,
                key,
                "Idempotency-Key repeated; replaying the first answer"
            );
            Ok(Keyed::Replay(Answer::from_stored(stored)))
        }
        Claim::InFlight => Err(ApiError::Toss(codes::IDEMPOTENT_REQUEST_PROCESSING)),
    }
}

/// A claimed key; released when dropped unless [`KeyGuard::keep`] kept an
/// answer under it, so a request whose handler is dropped (its client gone)
/// leaves nothing behind.
pub(super) struct KeyGuard {
    state: SimState,
    claim: Option<KeyClaim>,
}

impl KeyGuard {
    fn none(state: &SimState) -> Self {
        Self {
            state: state.clone(),
            claim: None,
        }
    }

    /// Keeps `answer` under the key — unless it is a 5xx, which releases it;
    /// `charge`: the charge a replay counts a confirm of.
    pub(super) fn keep(mut self, answer: &Answer, charge: Option<ChargeId>) {
        let Some(claim) = self.claim.take() else {
            return;
        };
        self.state.with_ledger(|ledger| {
            if answer.status.is_server_error() {
                ledger.release_key(claim);
            } else {
                ledger.complete_key(claim, answer.stored(), charge);
            }
        });
    }
}

impl Drop for KeyGuard {
    fn drop(&mut self) {
        if let Some(claim) = self.claim.take() {
            self.state.with_ledger(|ledger| ledger.release_key(claim));
        }
    }
}
