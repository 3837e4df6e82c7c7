//! Refresh tokens: their format, how they are stored, and the single-use rule with
//! reuse detection (RFC 9700 §4.14.2).
//!
//! A refresh token is `rt1.{user id, base64url}.{256 random bits, base64url}`. It is
//! opaque to clients; the edge reads the user id from it only to find the user's
//! session object, and that object stores nothing but the token's SHA-256. The random
//! part is the secret: knowing a user id forges nothing.
//!
//! Tokens of one login form a *family*. Refreshing retires the presented token and
//! issues its successor in the same family. Presenting a retired token again means
//! two parties hold the family — a thief and the user — so the whole family is
//! revoked, the successor included, and both must log in again.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::{Digest, Sha256};

const PREFIX: &str = "rt1";
/// Random bytes in a refresh token: 256 bits, twice the 128 the spec asks as a floor.
pub const SECRET_BYTES: usize = 32;
const MAX_TOKEN_LEN: usize = 256;

/// A refresh token as the client holds it.
#[derive(Clone, PartialEq, Eq)]
pub struct RefreshToken {
    text: String,
    user_id: String,
}

/// Never prints the token itself.
impl std::fmt::Debug for RefreshToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RefreshToken(..)")
    }
}

impl RefreshToken {
    /// A new token for `user_id` from `secret`, fresh random bytes the caller drew.
    pub fn new(user_id: &str, secret: &[u8; SECRET_BYTES]) -> Self {
        let user = URL_SAFE_NO_PAD.encode(user_id);
        let text = format!("{PREFIX}.{user}.{}", URL_SAFE_NO_PAD.encode(secret));
        Self {
            text,
            user_id: user_id.to_owned(),
        }
    }

    /// Reads a token presented by a client; `None` when it is not one of ours.
    pub fn parse(text: &str) -> Option<Self> {
        if text.len() > MAX_TOKEN_LEN {
            return None;
        }
        let mut parts = text.split('.');
        let (Some(PREFIX), Some(user), Some(secret), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let user = URL_SAFE_NO_PAD
            .decode(user)
            .ok()
            .and_then(|u| String::from_utf8(u).ok())?;
        let secret = URL_SAFE_NO_PAD.decode(secret).ok()?;
        (!user.is_empty() && secret.len() == SECRET_BYTES).then(|| Self {
            text: text.to_owned(),
            user_id: user,
        })
    }

    /// The user whose session object holds this token's family.
    pub fn user_id(&self) -> &str {
        &self.user_id
    }

    /// What is stored: the lowercase hex SHA-256 of the token.
    pub fn hash(&self) -> String {
        hex::encode(Sha256::digest(self.text.as_bytes()))
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// What the session object knows of a presented token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredRefreshToken {
    /// Already exchanged for a successor.
    pub retired: bool,
    pub family_revoked: bool,
    pub expires_at_ms: i64,
}

/// What to do with a presented refresh token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshDecision {
    /// Retire it and issue its successor in the same family.
    Rotate,
    /// A retired token came back: revoke the whole family.
    RevokeFamily,
    /// Unknown, expired, or of a revoked family: refuse, change nothing.
    Refuse,
}

/// The single-use rule. A token expires at `expires_at_ms` exactly.
pub fn decide(token: Option<StoredRefreshToken>, now_ms: i64) -> RefreshDecision {
    match token {
        None => RefreshDecision::Refuse,
        Some(token) if token.expires_at_ms <= now_ms || token.family_revoked => {
            RefreshDecision::Refuse
        }
        Some(token) if token.retired => RefreshDecision::RevokeFamily,
        Some(_) => RefreshDecision::Rotate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn stored(
        retired: bool,
        family_revoked: bool,
        expires_at_ms: i64,
    ) -> Option<StoredRefreshToken> {
        Some(StoredRefreshToken {
            retired,
            family_revoked,
            expires_at_ms,
        })
    }

    #[test]
    fn the_single_use_rule() {
        use RefreshDecision::*;
        let cases = [
            (None, Refuse),
            (stored(false, false, NOW + 1), Rotate),
            (stored(true, false, NOW + 1), RevokeFamily),
            (stored(false, true, NOW + 1), Refuse),
            (stored(true, true, NOW + 1), Refuse),
            (stored(false, false, NOW), Refuse),
            (stored(true, false, NOW), Refuse),
        ];
        for (token, expected) in cases {
            assert_eq!(decide(token, NOW), expected, "{token:?}");
        }
    }

    #[test]
    fn a_token_names_its_user_and_round_trips() {
        let token = RefreshToken::new("user-1", &[7; SECRET_BYTES]);
        let parsed = RefreshToken::parse(token.as_str()).unwrap();
        assert_eq!(parsed, token);
        assert_eq!(parsed.user_id(), "user-1");
        assert_eq!(parsed.hash().len(), 64);
        assert_ne!(
            RefreshToken::new("user-1", &[8; SECRET_BYTES]).hash(),
            token.hash()
        );
    }

    #[test]
    fn anything_else_is_not_a_refresh_token() {
        let good = RefreshToken::new("user-1", &[7; SECRET_BYTES]);
        let (head, _) = good.as_str().rsplit_once('.').unwrap();
        for text in [
            String::new(),
            "rt1..".into(),
            head.to_owned(),
            format!("{head}.AAAA"),
            format!("{}.x", good.as_str()),
            good.as_str().replacen("rt1", "rt2", 1),
            format!("rt1..{}", URL_SAFE_NO_PAD.encode([7; SECRET_BYTES])),
            format!("{head}.{}=", URL_SAFE_NO_PAD.encode([7; SECRET_BYTES])),
        ] {
            assert_eq!(RefreshToken::parse(&text), None, "{text}");
        }
    }

    #[test]
    fn debug_output_never_shows_the_token() {
        let token = RefreshToken::new("user-1", &[7; SECRET_BYTES]);
        assert_eq!(format!("{token:?}"), "RefreshToken(..)");
    }
}
