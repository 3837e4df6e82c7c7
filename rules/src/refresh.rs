//! Refresh tokens: their format, how they are stored, and the single-use rule with
//! reuse detection (RFC 9700 §4.14.2).
//!
//! A refresh token is `rt2.{user id, base64url}.{family}.{256 random bits,
//! base64url}.{MAC, base64url}`. It is opaque to clients. The MAC — HMAC-SHA256 under the
//! edge's [`RefreshKey`], its first 128 bits — makes it self-authenticating: a token the
//! edge did not issue is refused before any object is called, so made-up user ids and
//! families cost nothing and reach nobody's session object. The edge reads the user id
//! to find the user's session object and the family to count refreshes per login; that
//! object stores nothing but the token's SHA-256. The random part is the secret: the MAC
//! says who issued the token, only the session object says whether it is live.
//!
//! Tokens of one login form a *family*. Refreshing retires the presented token and
//! issues its successor in the same family. Presenting a retired token again means
//! two parties hold the family — a thief and the user — so the whole family is
//! revoked, the successor included, and both must log in again.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

const PREFIX: &str = "rt2";
/// Random bytes in a refresh token: 256 bits, twice the 128 the spec asks as a floor.
pub const SECRET_BYTES: usize = 32;
/// The MAC's bytes in a token: 128 bits, past any online guessing.
const MAC_BYTES: usize = 16;
const MAX_FAMILY_LEN: usize = 64;
const MAX_TOKEN_LEN: usize = 384;
/// What a [`RefreshKey`] is derived under, so it is never the secret it comes from.
const KEY_LABEL: &[u8] = b"refresh-token-mac/v2";

/// The key refresh tokens are MACed under: derived from a secret of the edge's.
#[derive(Clone)]
pub struct RefreshKey([u8; 32]);

/// Never prints the key.
impl std::fmt::Debug for RefreshKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RefreshKey(..)")
    }
}

impl RefreshKey {
    /// The key derived from `secret`: HMAC-SHA256(secret, label).
    pub fn derive(secret: &[u8]) -> Self {
        let mut mac = hmac_of(secret);
        mac.update(KEY_LABEL);
        Self(mac.finalize().into_bytes().into())
    }

    fn mac(&self, body: &str) -> Hmac<Sha256> {
        let mut mac = hmac_of(&self.0);
        mac.update(body.as_bytes());
        mac
    }
}

fn hmac_of(key: &[u8]) -> Hmac<Sha256> {
    // HMAC takes keys of any length; the error case cannot happen.
    Hmac::<Sha256>::new_from_slice(key).unwrap_or_else(|_| unreachable!("any key length"))
}

/// A refresh token as the client holds it.
#[derive(Clone, PartialEq, Eq)]
pub struct RefreshToken {
    text: String,
    user_id: String,
    family: String,
}

/// Never prints the token itself.
impl std::fmt::Debug for RefreshToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RefreshToken(..)")
    }
}

impl RefreshToken {
    /// A new token of `family` for `user_id` from `secret`, fresh random bytes the
    /// caller drew, MACed under `key`. `family` is the caller's own id: ASCII letters,
    /// digits, `-` and `_`.
    pub fn new(user_id: &str, family: &str, secret: &[u8; SECRET_BYTES], key: &RefreshKey) -> Self {
        let user = URL_SAFE_NO_PAD.encode(user_id);
        let body = format!(
            "{PREFIX}.{user}.{family}.{}",
            URL_SAFE_NO_PAD.encode(secret)
        );
        let tag = key.mac(&body).finalize().into_bytes();
        let text = format!("{body}.{}", URL_SAFE_NO_PAD.encode(&tag[..MAC_BYTES]));
        Self {
            text,
            user_id: user_id.to_owned(),
            family: family.to_owned(),
        }
    }

    /// Reads a token presented by a client; `None` when it is not one `key` issued.
    pub fn parse(text: &str, key: &RefreshKey) -> Option<Self> {
        if text.len() > MAX_TOKEN_LEN {
            return None;
        }
        let (body, tag) = text.rsplit_once('.')?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        if tag.len() != MAC_BYTES || key.mac(body).verify_truncated_left(&tag).is_err() {
            return None;
        }
        let [PREFIX, user, family, secret] = crate::dotted::fields(body)? else {
            return None;
        };
        let user = URL_SAFE_NO_PAD
            .decode(user)
            .ok()
            .and_then(|u| String::from_utf8(u).ok())?;
        let secret = URL_SAFE_NO_PAD.decode(secret).ok()?;
        let family_ok = !family.is_empty()
            && family.len() <= MAX_FAMILY_LEN
            && family
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'));
        (!user.is_empty() && family_ok && secret.len() == SECRET_BYTES).then(|| Self {
            text: text.to_owned(),
            user_id: user,
            family: family.to_owned(),
        })
    }

    /// The user whose session object holds this token's family.
    pub fn user_id(&self) -> &str {
        &self.user_id
    }

    /// The login this token belongs to.
    pub fn family(&self) -> &str {
        &self.family
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

    fn key() -> RefreshKey {
        RefreshKey::derive(b"edge-secret-0123456789abcdef0123456789")
    }

    fn token(secret: u8) -> RefreshToken {
        RefreshToken::new("user-1", "fam-1", &[secret; SECRET_BYTES], &key())
    }

    #[test]
    fn a_token_names_its_user_and_family_and_round_trips() {
        let token = token(7);
        let parsed = RefreshToken::parse(token.as_str(), &key()).unwrap();
        assert_eq!(parsed, token);
        assert_eq!((parsed.user_id(), parsed.family()), ("user-1", "fam-1"));
        assert_eq!(parsed.hash().len(), 64);
        assert_ne!(self::token(8).hash(), token.hash());
    }

    #[test]
    fn a_token_of_another_key_or_changed_in_any_part_is_refused() {
        let good = token(7);
        let other_key = RefreshKey::derive(b"another-edge-secret-0123456789abcdef");
        assert_eq!(RefreshToken::parse(good.as_str(), &other_key), None);
        let (body, tag) = good.as_str().rsplit_once('.').unwrap();
        let forged_user = body.replacen(
            &URL_SAFE_NO_PAD.encode("user-1"),
            &URL_SAFE_NO_PAD.encode("user-2"),
            1,
        );
        for text in [
            format!("{forged_user}.{tag}"),
            format!("{}.{tag}", body.replacen("fam-1", "fam-2", 1)),
            format!("{body}.{}", URL_SAFE_NO_PAD.encode([0u8; MAC_BYTES])),
            format!("{body}.{}", &tag[..tag.len() - 2]),
        ] {
            assert_eq!(RefreshToken::parse(&text, &key()), None, "{text}");
        }
    }

    #[test]
    fn anything_else_is_not_a_refresh_token() {
        let key = key();
        // Well-MACed, badly formed: each part is checked as well as the MAC.
        let macd = |body: &str| {
            let tag = key.mac(body).finalize().into_bytes();
            format!("{body}.{}", URL_SAFE_NO_PAD.encode(&tag[..MAC_BYTES]))
        };
        let secret = URL_SAFE_NO_PAD.encode([7; SECRET_BYTES]);
        let user = URL_SAFE_NO_PAD.encode("user-1");
        for text in [
            String::new(),
            "rt2....".into(),
            macd(&format!("rt1.{user}.fam.{secret}")),
            macd(&format!("rt2..fam.{secret}")),
            macd(&format!("rt2.{user}..{secret}")),
            macd(&format!("rt2.{user}.fa.m.{secret}")),
            macd(&format!("rt2.{user}.fam/1.{secret}")),
            macd(&format!("rt2.{user}.{}.{secret}", "f".repeat(65))),
            macd(&format!(
                "rt2.{user}.fam.{}",
                URL_SAFE_NO_PAD.encode([7; 16])
            )),
            macd(&format!("rt2.{user}.fam.{secret}=")),
            "rt1.dXNlci0x.AAAA".into(),
        ] {
            assert_eq!(RefreshToken::parse(&text, &key), None, "{text}");
        }
    }

    #[test]
    fn debug_output_never_shows_the_token_or_the_key() {
        assert_eq!(format!("{:?}", token(7)), "RefreshToken(..)");
        assert_eq!(format!("{:?}", key()), "RefreshKey(..)");
    }
}
