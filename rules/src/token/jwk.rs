//! One JWK as written (RFC 7517 §4, RFC 7518 §6), whatever kind of key it is: the members
//! the key sets read, and whether it carries a private one.

use serde::de::IgnoredAny;
use serde::Deserialize;

/// A JWK. Members we do not use (`key_ops`, `x5c`, …) are allowed.
#[derive(Deserialize)]
pub(crate) struct Jwk {
    pub(crate) kid: Option<String>,
    pub(crate) kty: Option<String>,
    pub(crate) alg: Option<String>,
    #[serde(rename = "use")]
    pub(crate) use_: Option<String>,
    pub(crate) crv: Option<String>,
    pub(crate) k: Option<String>,
    pub(crate) x: Option<String>,
    pub(crate) y: Option<String>,
    pub(crate) n: Option<String>,
    pub(crate) e: Option<String>,
    pub(crate) d: Option<String>,
    /// The private members of an RSA key (RFC 7518 §6.3.2), only ever refused.
    p: Option<IgnoredAny>,
    q: Option<IgnoredAny>,
    dp: Option<IgnoredAny>,
    dq: Option<IgnoredAny>,
    qi: Option<IgnoredAny>,
    oth: Option<IgnoredAny>,
}

impl Jwk {
    /// The first private member it has, if any: a secret that has no place where only
    /// public keys belong.
    pub(crate) fn private_member(&self) -> Option<&'static str> {
        [
            ("d", self.d.is_some()),
            ("k", self.k.is_some()),
            ("p", self.p.is_some()),
            ("q", self.q.is_some()),
            ("dp", self.dp.is_some()),
            ("dq", self.dq.is_some()),
            ("qi", self.qi.is_some()),
            ("oth", self.oth.is_some()),
        ]
        .into_iter()
        .find_map(|(member, present)| present.then_some(member))
    }
}
