//! Standard Webhooks v1 (standardwebhooks.com): a message is signed with HMAC-SHA256,
//! keyed by the secret's bytes, over `{webhook-id}.{webhook-timestamp}.{body}`, and the
//! signature sent as `v1,<base64>` in `webhook-signature`. The secret is `whsec_`
//! followed by its bytes in base64; during a rotation several are configured and the
//! message carries one signature for each, space-separated, so a receiver holding either
//! secret verifies it.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The fewest bytes a secret may have.
pub const MIN_SECRET_BYTES: usize = 24;
const PREFIX: &str = "whsec_";

/// The signing secrets, the current one first.
#[derive(Clone)]
pub struct Secrets(Vec<Vec<u8>>);

impl Secrets {
    /// Secrets as configured: `whsec_…`, several separated by spaces or commas.
    pub fn parse(value: &str) -> Result<Self, String> {
        let secrets = value
            .split([' ', ','])
            .filter(|part| !part.is_empty())
            .map(|part| {
                let encoded = part
                    .strip_prefix(PREFIX)
                    .ok_or_else(|| format!("each secret must begin with `{PREFIX}`"))?;
                let bytes = STANDARD
                    .decode(encoded)
                    .map_err(|_| format!("the part after `{PREFIX}` must be base64"))?;
                if bytes.len() < MIN_SECRET_BYTES {
                    return Err(format!(
                        "a secret must hold at least {MIN_SECRET_BYTES} bytes (it holds {})",
                        bytes.len()
                    ));
                }
                Ok(bytes)
            })
            .collect::<Result<Vec<_>, _>>()?;
        if secrets.is_empty() {
            return Err(format!("is empty (expected `{PREFIX}` and base64)"));
        }
        Ok(Self(secrets))
    }

    /// The `webhook-signature` header of message `id` sent at `timestamp` (unix seconds)
    /// with `body`: `v1,<base64>` for each secret.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        self.0
            .iter()
            .map(|secret| {
                let mut mac =
                    Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
                mac.update(format!("{id}.{timestamp}.").as_bytes());
                mac.update(body);
                format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_the_specifications_example() {
        // The example of the Standard Webhooks specification (its README and libraries'
        // tests): this secret, id, timestamp and body give this signature.
        let secrets = Secrets::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").expect("a secret");
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            secrets.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn during_a_rotation_each_secret_signs() {
        let one = format!("whsec_{}", STANDARD.encode([1u8; 24]));
        let two = format!("whsec_{}", STANDARD.encode([2u8; 32]));
        let both = Secrets::parse(&format!("{one} {two}")).expect("two secrets");
        let first = Secrets::parse(&one).expect("one").sign("msg_1", 5, b"{}");
        let second = Secrets::parse(&two).expect("one").sign("msg_1", 5, b"{}");
        assert_eq!(both.sign("msg_1", 5, b"{}"), format!("{first} {second}"));
    }

    #[test]
    fn a_bad_secret_is_refused_saying_why() {
        let short = format!("whsec_{}", STANDARD.encode([1u8; 23]));
        for (value, says) in [
            ("", "empty"),
            ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_"),
            ("whsec_not base64!", "base64"),
            (short.as_str(), "24 bytes"),
        ] {
            let refused = Secrets::parse(value).err().unwrap_or_default();
            assert!(refused.contains(says), "{value}: {refused}");
        }
    }
}
