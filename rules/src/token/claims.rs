//! The claims policy (RFC 7519 §4.1): what a signed token must say to be let in.
//!
//! Read in one pass from the verified payload, strings borrowed where they have no
//! escapes. Times are JSON integers in epoch seconds — a float, a string or a number
//! beyond `i64` is a wrong type, never rounded. `exp` is exclusive (RFC 7519 §4.1.4:
//! now must be *before* it), `nbf` inclusive, and the leeway widens both by the same
//! number of seconds. `iss` and `aud` are checked only when configured, and then they
//! are required; unconfigured, they are not read for meaning at all.
//!
//! A token of the identity provider's keys may lack `jti` — Firebase ID tokens and some
//! Auth0 access tokens carry none — and then is known by an id derived from what its
//! signature covers (`sha256-` and 32 hex digits), so a logout still revokes it. Not
//! from the signature itself: an ECDSA signature has a second valid form, the same token
//! under another name. Its `sid` names the provider's session, not one of the edge's
//! refresh families, so it is not read.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use sha2::{Digest as _, Sha256};

use super::json::{Members, Name, Value};
use super::jws::Verified;
use super::{KeySource, Policy, TokenRejection};

/// The prefix of an id derived for a provider's token that has no `jti`.
pub const DERIVED_JTI_PREFIX: &str = "sha256-";

/// The claims the gateway relies on, from a token that passed every check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessClaims {
    pub sub: String,
    pub jti: String,
    /// Expiry, epoch seconds.
    pub exp: i64,
    /// The session (refresh-token family) the token was issued in, when it names one.
    pub sid: Option<String>,
    /// When it was issued (`iat`), epoch seconds, when it says.
    pub iat: Option<i64>,
    /// Whose key signed it: the edge's own (`JWT_KEYS`) or the identity provider's.
    pub source: KeySource,
}

/// Applies the claims policy of `policy` at `now_secs` to a verified token.
pub(crate) fn check(
    verified: &Verified<'_>,
    policy: &Policy,
    now_secs: i64,
) -> Result<AccessClaims, TokenRejection> {
    // UTF-8 is checked once for the whole payload, not again string by string.
    let claims = match std::str::from_utf8(&verified.payload)
        .map(serde_json::from_str::<ParsedClaims<'_>>)
    {
        Ok(Ok(ParsedClaims(claims))) => claims?,
        _ => return Err(TokenRejection::ClaimsNotObject),
    };
    let sub = required_text(claims.sub, "sub")?;
    let jti = match (claims.jti, verified.source) {
        (None, KeySource::Provider) => Cow::Owned(derived_jti(verified.signing_input)),
        (jti, _) => required_text(jti, "jti")?,
    };
    let exp = time(claims.exp, "exp")?.ok_or(TokenRejection::MissingClaim("exp"))?;
    let sid = match verified.source {
        KeySource::Edge => claims
            .sid
            .map(|sid| required_text(Some(sid), "sid"))
            .transpose()?,
        KeySource::Provider => None,
    };
    let nbf = time(claims.nbf, "nbf")?;
    let iat = time(claims.iat, "iat")?;

    let (now, leeway) = (i128::from(now_secs), i128::from(policy.leeway_secs));
    if i128::from(exp) <= now - leeway {
        return Err(TokenRejection::Expired);
    }
    if nbf.is_some_and(|nbf| i128::from(nbf) > now + leeway) {
        return Err(TokenRejection::NotYetValid);
    }
    if let Some(issuer) = policy.issuer.as_deref() {
        match claims.iss {
            None => return Err(TokenRejection::MissingClaim("iss")),
            Some(Value::Str(iss)) if iss == issuer => {}
            Some(Value::Str(_)) => return Err(TokenRejection::WrongIssuer),
            Some(_) => return Err(TokenRejection::InvalidClaim("iss")),
        }
    }
    if let Some(audience) = policy.audience.as_deref() {
        match claims.aud {
            None => return Err(TokenRejection::MissingClaim("aud")),
            Some(Value::Str(aud)) if aud == audience => {}
            Some(Value::Strs(auds)) if auds.iter().any(|aud| aud == audience) => {}
            Some(Value::Str(_) | Value::Strs(_)) => return Err(TokenRejection::WrongAudience),
            Some(_) => return Err(TokenRejection::InvalidClaim("aud")),
        }
    }
    Ok(AccessClaims {
        sub: sub.into_owned(),
        jti: jti.into_owned(),
        exp,
        sid: sid.map(Cow::into_owned),
        iat,
        source: verified.source,
    })
}

/// The id of a token without `jti`: the first 128 bits of the SHA-256 of what its
/// signature covers, so one token always has one id and no two tokens share one.
fn derived_jti(signing_input: &str) -> String {
    let digest = Sha256::digest(signing_input.as_bytes());
    format!("{DERIVED_JTI_PREFIX}{}", hex::encode(&digest[..16]))
}

fn required_text<'c>(
    value: Option<Value<'c>>,
    name: &'static str,
) -> Result<Cow<'c, str>, TokenRejection> {
    match value {
        None => Err(TokenRejection::MissingClaim(name)),
        Some(Value::Str(text)) if !text.is_empty() => Ok(text),
        Some(_) => Err(TokenRejection::InvalidClaim(name)),
    }
}

fn time(value: Option<Value<'_>>, name: &'static str) -> Result<Option<i64>, TokenRejection> {
    match value {
        None => Ok(None),
        Some(Value::Int(secs)) => Ok(Some(secs)),
        Some(_) => Err(TokenRejection::InvalidClaim(name)),
    }
}

/// The registered claims as written; `None` when absent.
#[derive(Default)]
struct Claims<'c> {
    sub: Option<Value<'c>>,
    jti: Option<Value<'c>>,
    exp: Option<Value<'c>>,
    nbf: Option<Value<'c>>,
    iat: Option<Value<'c>>,
    iss: Option<Value<'c>>,
    aud: Option<Value<'c>>,
    sid: Option<Value<'c>>,
}

/// The claims read in one pass; a duplicate claim is a rejection, not a parse error.
struct ParsedClaims<'c>(Result<Claims<'c>, TokenRejection>);

impl<'de> Deserialize<'de> for ParsedClaims<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ClaimsVisitor)
    }
}

struct ClaimsVisitor;

impl<'de> Visitor<'de> for ClaimsVisitor {
    type Value = ParsedClaims<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JWT claims object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ParsedClaims<'de>, A::Error> {
        let mut claims = Claims::default();
        let mut members = Members::default();
        let mut duplicate = false;
        while let Some(Name(name)) = map.next_key()? {
            let slot = match &*name {
                "sub" => Some((0, &mut claims.sub)),
                "jti" => Some((1, &mut claims.jti)),
                "exp" => Some((2, &mut claims.exp)),
                "nbf" => Some((3, &mut claims.nbf)),
                "iat" => Some((4, &mut claims.iat)),
                "iss" => Some((5, &mut claims.iss)),
                "aud" => Some((6, &mut claims.aud)),
                "sid" => Some((7, &mut claims.sid)),
                _ => None,
            };
            match slot {
                Some((bit, slot)) if members.first_known(bit) => *slot = Some(map.next_value()?),
                None if members.first_other(name) => {
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    duplicate = true;
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(ParsedClaims(if duplicate {
            Err(TokenRejection::DuplicateClaim)
        } else {
            Ok(claims)
        }))
    }
}
