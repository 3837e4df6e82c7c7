//! Stripe's webhook signature — pure: the secret, the header, the raw body and the time
//! in, accepted or refused out. `Stripe-Signature: t=<unix s>,v1=<hex>[,v1=<hex>…]`, each
//! `v1` the HMAC-SHA256 of `"{t}.{raw body}"` keyed with the whole `whsec_…` string. Any
//! `v1` may match (a secret being rotated signs with both); each is compared in constant
//! time. A signed event more than five minutes from now, either way, is refused: a
//! replayed old one must not be taken again, and stripe-node refuses at the same age.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::gateway::WebhookRefusal;

/// How far a signature's time may be from ours, either way (stripe-node's tolerance).
pub const TOLERANCE_MS: i64 = 300_000;

/// More `v1` values than rotation needs are refused before any is computed: each costs a
/// pass over the body.
const MAX_SIGNATURES: usize = 8;

/// The header, parsed: its time and the signatures it offers.
struct Header<'a> {
    /// `t` as sent: what Stripe signed.
    signed_at: &'a str,
    signed_at_ms: i64,
    signatures: Vec<Vec<u8>>,
}

impl<'a> Header<'a> {
    /// `None` for a header that is not one: not text, an item without `=`, no time, two,
    /// or one past any clock, a `v1` that is not hex, too many `v1`s. Other schemes
    /// (`v0`) are ignored.
    fn parse(raw: &'a [u8]) -> Option<Self> {
        let mut signed_at = None;
        let mut signatures = Vec::new();
        for item in std::str::from_utf8(raw).ok()?.split(',') {
            let (key, value) = item.trim().split_once('=')?;
            match key {
                "t" if signed_at.is_some() => return None,
                "t" => signed_at = Some(value),
                "v1" => signatures.push(hex::decode(value).ok()?),
                _ => {}
            }
        }
        let signed_at = signed_at?;
        let signed_at_ms = signed_at.parse::<i64>().ok()?.checked_mul(1000)?;
        (signatures.len() <= MAX_SIGNATURES).then_some(Self {
            signed_at,
            signed_at_ms,
            signatures,
        })
    }
}

/// Whether `body` came from Stripe, signed with `secret` within [`TOLERANCE_MS`] of
/// `now_ms`.
pub fn verify(
    secret: Option<&str>,
    header: Option<&[u8]>,
    body: &[u8],
    now_ms: i64,
) -> Result<(), WebhookRefusal> {
    let refuse = |why| Err(WebhookRefusal::Signature(why));
    let Some(secret) = secret else {
        return refuse("GATEWAY_WEBHOOK_SECRET is not set");
    };
    let Some(header) = header else {
        return refuse("no Stripe-Signature header");
    };
    let Some(header) = Header::parse(header) else {
        return refuse("the Stripe-Signature header is malformed");
    };
    if header.signatures.is_empty() {
        return refuse("the Stripe-Signature header has no v1 signature");
    }
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
        return refuse("the webhook secret is not an HMAC key");
    };
    mac.update(header.signed_at.as_bytes());
    mac.update(b".");
    mac.update(body);
    let matched = header
        .signatures
        .iter()
        .any(|signature| mac.clone().verify_slice(signature).is_ok());
    if !matched {
        return refuse("no v1 signature matches");
    }
    if now_ms.saturating_sub(header.signed_at_ms) > TOLERANCE_MS {
        return refuse("signed more than 300 s ago");
    }
    if header.signed_at_ms.saturating_sub(now_ms) > TOLERANCE_MS {
        return refuse("signed more than 300 s ahead of our clock");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
