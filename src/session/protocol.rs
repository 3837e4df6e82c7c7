//! What the Worker asks a user's session object, and what it answers. One JSON POST
//! per call; the object is the only writer of its storage, and each call runs to
//! completion before the next, so every operation below is atomic.

use serde::{Deserialize, Serialize};

use crate::memory::Release;
use crate::rate_windows::{WindowAnswer, WindowCheck};

/// A call to a session object.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum SessionRequest {
    /// Is this access token revoked — itself, or the session (refresh family) it
    /// belongs to? And, on a rate-limited route, does the user's window admit the
    /// request? Made on every authenticated request: one round trip for both. First,
    /// `release` takes back admissions of earlier requests that a later window refused.
    Authorize {
        jti: String,
        family: Option<String>,
        /// The token's `iat`, epoch seconds.
        issued_at: Option<i64>,
        limit: Option<WindowCheck>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        release: Vec<Release>,
    },
    /// A login: a new refresh-token family with its first token. `started_at_ms` is when
    /// the login's request began: a login whose password was checked before every session
    /// was ended ends with them (its family opens revoked).
    Open {
        family: String,
        token_hash: String,
        expires_at_ms: i64,
        started_at_ms: i64,
    },
    /// Exchange a refresh token for its successor in the same family, if the family's
    /// refresh window (`limit`) admits it.
    Rotate {
        token_hash: String,
        successor_hash: String,
        successor_expires_at_ms: i64,
        limit: WindowCheck,
    },
    /// Revoke the access token until it expires, and its refresh family.
    Logout {
        jti: String,
        expires_at_ms: i64,
        family: Option<String>,
        /// The token's `iat`, epoch seconds.
        issued_at: Option<i64>,
    },
    /// End every session of the user begun before `before_ms`: every refresh family is
    /// revoked, and so is every access token issued before then. A password change, an
    /// operator's `origin user revoke-sessions`, or `POST /auth/logout-all`. Sent again,
    /// it changes nothing more.
    EndAll { before_ms: i64 },
}

/// The answer to [`SessionRequest::Authorize`]. A revoked token is not counted
/// against the window, so `limit` is then absent.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Authorized {
    pub revoked: bool,
    pub limit: Option<WindowAnswer>,
}

/// The answer to [`SessionRequest::Logout`]: whether the access token was already
/// revoked.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Revocation {
    pub revoked: bool,
}

/// The answer to [`SessionRequest::Rotate`].
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub enum RotateOutcome {
    /// The successor is live; the presented token is retired.
    Rotated { family: String },
    /// A retired token came back: the family is now revoked.
    Reused,
    /// Unknown, expired or revoked: nothing changed.
    Refused,
    /// The family has refreshed its share of the window: nothing changed.
    #[serde(rename_all = "camelCase")]
    Limited { retry_after_ms: i64 },
}
