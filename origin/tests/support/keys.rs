//! Key-encryption keys for tests and benchmarks: two versions of fixed bytes, for
//! nothing but test data.

use origin::crypto::FieldCipher;

/// `ENCRYPTION_KEKS` with v1 and v2.
pub const KEKS: &str = "v1:ERERERERERERERERERERERERERERERERERERERERERE=,\
                        v2:IiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiI=";

/// The cipher of [`KEKS`] with `current` (`v1` or `v2`) as `ENCRYPTION_CURRENT_KEK`.
pub fn cipher(current: &str) -> FieldCipher {
    FieldCipher::from_env(|name| match name {
        "ENCRYPTION_KEKS" => Some(KEKS.to_owned()),
        "ENCRYPTION_CURRENT_KEK" => Some(current.to_owned()),
        _ => None,
    })
    .expect("the test keys")
}
