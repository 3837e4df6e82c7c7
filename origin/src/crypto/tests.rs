//! Envelope encryption: round trips, tampering, binding to the row, rotation, key
//! configuration, and AES-256-GCM against Wycheproof's known answers.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine as _;
use proptest::prelude::*;
use serde_json::Value as Json;

use super::envelope::{encrypt, open_part};
use super::*;

const PAYMENT_KEY: Context = Context {
    table: "payments",
    column: "payment_key",
    row_id: "order-1",
};

/// A payment key of 32 bytes, the size the origin stores.
const VALUE: &[u8] = b"tgen_20240101abcdefghijklmnopqrs";

/// Keys whose `vN` is 32 bytes of N (or of `same` for every version), current `current`.
fn keys_with(current: u32, versions: &[u32], same: Option<u8>) -> LocalKeys {
    let listed = versions
        .iter()
        .map(|&v| {
            let byte = same.unwrap_or(u8::try_from(v).expect("a small version"));
            format!("v{v}:{}", STANDARD.encode([byte; 32]))
        })
        .collect::<Vec<_>>()
        .join(",");
    LocalKeys::from_env(|name| match name {
        "ENCRYPTION_KEKS" => Some(listed.clone()),
        "ENCRYPTION_CURRENT_KEK" => Some(format!("v{current}")),
        _ => None,
    })
    .expect("valid test keys")
}

fn keys(current: u32, versions: &[u32]) -> LocalKeys {
    keys_with(current, versions, None)
}

/// `stored` as its version label and its two decoded parts.
fn split(stored: &str) -> (String, Vec<u8>, Vec<u8>) {
    let parts: Vec<&str> = stored.split(':').collect();
    assert_eq!(parts.len(), 4, "{stored}");
    let decode = |part| STANDARD.decode(part).expect("base64");
    (parts[1].to_owned(), decode(parts[2]), decode(parts[3]))
}

fn join(version: &str, wrapped: &[u8], data: &[u8]) -> String {
    format!(
        "env:{version}:{}:{}",
        STANDARD.encode(wrapped),
        STANDARD.encode(data)
    )
}

fn is_authentication(result: Result<impl Sized, CryptoError>) -> bool {
    matches!(result, Err(CryptoError::Authentication))
}

#[test]
fn sealed_values_open_to_what_was_sealed() {
    let keys = keys(1, &[1]);
    for value in [&b""[..], VALUE, "결제 키".as_bytes(), &[0u8; 4096]] {
        let stored = seal(&keys, &PAYMENT_KEY, value).expect("seal");
        assert!(stored.starts_with("env:v1:"), "{stored}");
        let (_, wrapped, data) = split(&stored);
        assert_eq!(wrapped.len(), 12 + 32 + 16);
        assert_eq!(data.len(), 12 + value.len() + 16);
        let opened = open(&keys, &PAYMENT_KEY, &stored).expect("open");
        assert_eq!(opened.as_slice(), value);
    }
}

#[test]
fn two_seals_of_one_value_share_nothing() {
    let keys = keys(1, &[1]);
    let (_, wrapped_a, data_a) = split(&seal(&keys, &PAYMENT_KEY, VALUE).expect("seal"));
    let (_, wrapped_b, data_b) = split(&seal(&keys, &PAYMENT_KEY, VALUE).expect("seal"));
    assert_ne!(wrapped_a, wrapped_b);
    assert_ne!(data_a, data_b);
    // Fresh nonces, and fresh data keys: the ciphertexts differ past the nonce too.
    assert_ne!(wrapped_a[12..], wrapped_b[12..]);
    assert_ne!(data_a[12..], data_b[12..]);
}

#[test]
fn any_flipped_bit_in_either_part_fails_authentication() {
    let keys = keys(1, &[1]);
    let stored = seal(&keys, &PAYMENT_KEY, VALUE).expect("seal");
    let (version, wrapped, data) = split(&stored);
    // Every byte of nonce, ciphertext and tag, in the wrapped DEK and in the data.
    for i in 0..wrapped.len() {
        let mut bad = wrapped.clone();
        bad[i] ^= 0x01;
        let tampered = join(&version, &bad, &data);
        assert!(
            is_authentication(open(&keys, &PAYMENT_KEY, &tampered)),
            "wrapped DEK byte {i}"
        );
    }
    for i in 0..data.len() {
        let mut bad = data.clone();
        bad[i] ^= 0x80;
        let tampered = join(&version, &wrapped, &bad);
        assert!(
            is_authentication(open(&keys, &PAYMENT_KEY, &tampered)),
            "data byte {i}"
        );
    }
}

#[test]
fn another_version_prefix_fails_and_says_why() {
    let stored = seal(&keys(1, &[1]), &PAYMENT_KEY, VALUE).expect("seal");
    let relabel = |label: &str| stored.replacen("env:v1:", &format!("env:{label}:"), 1);

    // Another configured version: another key, and another version in the AAD.
    let both = keys(2, &[1, 2]);
    assert!(is_authentication(open(&both, &PAYMENT_KEY, &relabel("v2"))));
    // Even when both versions hold the same key, the AAD binds the version.
    let same = keys_with(1, &[1, 2], Some(7));
    let stored_same = seal(&same, &PAYMENT_KEY, VALUE).expect("seal");
    let relabelled = stored_same.replacen("env:v1:", "env:v2:", 1);
    assert!(open(&same, &PAYMENT_KEY, &stored_same).is_ok());
    assert!(is_authentication(open(&same, &PAYMENT_KEY, &relabelled)));

    let unknown = open(&both, &PAYMENT_KEY, &relabel("v9")).expect_err("no v9");
    assert!(
        matches!(unknown, CryptoError::UnknownVersion(9)),
        "{unknown}"
    );
    assert!(unknown.to_string().contains("v9"), "{unknown}");

    // One label per version: no aliases such as `v01`.
    for label in ["v01", "v0", "v", "v+1", "V1", "1", "v1 ", "v4294967296"] {
        let result = open(&both, &PAYMENT_KEY, &relabel(label));
        assert!(
            matches!(
                result,
                Err(CryptoError::Malformed {
                    part: Part::Version,
                    ..
                })
            ),
            "{label}: {result:?}"
        );
    }
}

#[test]
fn a_value_without_its_key_version_is_an_unknown_version() {
    let stored = seal(&keys(1, &[1]), &PAYMENT_KEY, VALUE).expect("seal");
    let error = open(&keys(2, &[2]), &PAYMENT_KEY, &stored).expect_err("v1 is gone");
    assert!(matches!(error, CryptoError::UnknownVersion(1)), "{error}");
    assert_eq!(
        error.to_string(),
        "no key-encryption key for version v1: a version must stay configured until every \
         value on it is rewrapped"
    );
}

#[test]
fn every_truncation_fails() {
    let keys = keys(1, &[1]);
    let stored = seal(&keys, &PAYMENT_KEY, VALUE).expect("seal");
    for end in 0..stored.len() {
        assert!(open(&keys, &PAYMENT_KEY, &stored[..end]).is_err(), "{end}");
    }
    let (version, wrapped, data) = split(&stored);
    for cut in 1..=data.len() {
        let shorter = join(&version, &wrapped, &data[..data.len() - cut]);
        assert!(
            open(&keys, &PAYMENT_KEY, &shorter).is_err(),
            "data less {cut}"
        );
    }
    for cut in 1..=wrapped.len() {
        let shorter = join(&version, &wrapped[..wrapped.len() - cut], &data);
        let result = open(&keys, &PAYMENT_KEY, &shorter);
        assert!(
            matches!(
                result,
                Err(CryptoError::Malformed {
                    part: Part::WrappedDek,
                    ..
                })
            ),
            "wrapped DEK less {cut}: {result:?}"
        );
    }
}

#[test]
fn a_value_opens_only_in_its_own_row_column_and_table() {
    let keys = keys(1, &[1]);
    let stored = seal(&keys, &PAYMENT_KEY, VALUE).expect("seal");
    let elsewhere = [
        Context {
            row_id: "order-2",
            ..PAYMENT_KEY
        },
        Context {
            column: "account_number",
            ..PAYMENT_KEY
        },
        Context {
            table: "refunds",
            ..PAYMENT_KEY
        },
        // Same bytes run together, split differently: the lengths tell them apart.
        Context {
            table: "paymentspayment_",
            column: "key",
            row_id: "order-1",
        },
    ];
    for ctx in elsewhere {
        assert!(
            is_authentication(open(&keys, &ctx, &stored)),
            "opened in {ctx:?}"
        );
    }

    // Swapping values between two rows, or between two columns of one row.
    let other_row = Context {
        row_id: "order-2",
        ..PAYMENT_KEY
    };
    let other_column = Context {
        column: "account_number",
        ..PAYMENT_KEY
    };
    let in_other_row = seal(&keys, &other_row, b"another payment key").expect("seal");
    let in_other_column = seal(&keys, &other_column, b"110-123-456789").expect("seal");
    assert!(is_authentication(open(&keys, &PAYMENT_KEY, &in_other_row)));
    assert!(is_authentication(open(
        &keys,
        &PAYMENT_KEY,
        &in_other_column
    )));
    assert!(is_authentication(open(&keys, &other_row, &stored)));
    assert!(is_authentication(open(&keys, &other_column, &stored)));

    // Splicing the data of one row onto the wrapped DEK of another.
    let (version, wrapped, _) = split(&stored);
    let (_, _, other_data) = split(&in_other_row);
    let spliced = join(&version, &wrapped, &other_data);
    assert!(is_authentication(open(&keys, &PAYMENT_KEY, &spliced)));
}

/// The documented format, built by hand from a known data key: `open` reads it. The data
/// part binds its row too: the same data key wrapped for another row, as a faulty
/// rotation might do, still does not open the data there.
#[test]
fn the_documented_format_opens_and_the_data_binds_its_row_too() {
    let keys = keys(1, &[1]);
    let (kek, dek) = ([1u8; 32], [5u8; 32]);
    let lp = |field: &str| [&(field.len() as u64).to_be_bytes()[..], field.as_bytes()].concat();
    let row = |id| [lp("payments"), lp("payment_key"), lp(id)].concat();
    let data_aad = [lp("env:data"), row("order-1")].concat();
    let dek_aad = |id| [lp("env:dek"), row(id), 1u32.to_be_bytes().to_vec()].concat();
    let wrapped = |id| encrypt(&kek, &[3; 12], &dek_aad(id), &dek).expect("encrypt");
    let data = encrypt(&dek, &[2; 12], &data_aad, VALUE).expect("encrypt");

    let stored = join("v1", &wrapped("order-1"), &data);
    let opened = open(&keys, &PAYMENT_KEY, &stored).expect("open");
    assert_eq!(opened.as_slice(), VALUE);

    let other_row = Context {
        row_id: "order-2",
        ..PAYMENT_KEY
    };
    let moved = join("v1", &wrapped("order-2"), &data);
    assert!(is_authentication(open(&keys, &other_row, &moved)));
}

#[test]
fn rewrap_changes_only_the_wrapped_dek() {
    let stored = seal(&keys(1, &[1]), &PAYMENT_KEY, VALUE).expect("seal");
    let rotated = keys(2, &[1, 2]);
    let Rewrap::Rewrapped(rewrapped) = rewrap(&rotated, &PAYMENT_KEY, &stored).expect("rewrap")
    else {
        panic!("a v1 value is rewrapped when v2 is current");
    };
    assert!(rewrapped.starts_with("env:v2:"), "{rewrapped}");
    assert_eq!(version_of(&rewrapped).expect("version"), 2);
    let data_part = |s: &str| s.rsplit(':').next().expect("a data part").to_owned();
    assert_eq!(data_part(&rewrapped), data_part(&stored));
    let (_, old_wrapped, _) = split(&stored);
    let (_, new_wrapped, _) = split(&rewrapped);
    assert_ne!(old_wrapped, new_wrapped);

    // It opens without v1 at all, and is left as it is from now on.
    let only_v2 = keys(2, &[2]);
    let opened = open(&only_v2, &PAYMENT_KEY, &rewrapped).expect("open");
    assert_eq!(opened.as_slice(), VALUE);
    assert_eq!(
        rewrap(&only_v2, &PAYMENT_KEY, &rewrapped).expect("rewrap"),
        Rewrap::Unchanged
    );
    // Still bound to its row.
    let other_row = Context {
        row_id: "order-2",
        ..PAYMENT_KEY
    };
    assert!(is_authentication(open(&only_v2, &other_row, &rewrapped)));
}

#[test]
fn rewrap_refuses_what_would_not_open() {
    let keys = keys(2, &[1, 2]);
    let old = seal(&keys_with(1, &[1], Some(1)), &PAYMENT_KEY, VALUE).expect("seal");
    let other_row = Context {
        row_id: "order-2",
        ..PAYMENT_KEY
    };
    assert!(is_authentication(rewrap(&keys, &other_row, &old)));
    // A damaged data part is reported, not carried onto the new version.
    let (version, wrapped, mut data) = split(&old);
    data[20] ^= 1;
    let damaged = join(&version, &wrapped, &data);
    assert!(is_authentication(rewrap(&keys, &PAYMENT_KEY, &damaged)));
    assert!(matches!(
        rewrap(&keys, &PAYMENT_KEY, "env:v1:x"),
        Err(CryptoError::Malformed { .. })
    ));
}

#[test]
fn malformed_values_name_the_part() {
    let keys = keys(1, &[1]);
    let stored = seal(&keys, &PAYMENT_KEY, VALUE).expect("seal");
    let (_, wrapped, data) = split(&stored);
    let (w, d) = (STANDARD.encode(&wrapped), STANDARD.encode(&data));
    let cases = [
        (String::new(), Part::Prefix),
        (VALUE.escape_ascii().to_string(), Part::Prefix),
        ("ENV:v1:a:b".to_owned(), Part::Prefix),
        ("env:".to_owned(), Part::Version),
        ("env:v1".to_owned(), Part::WrappedDek),
        (format!("env:v1:{w}"), Part::Data),
        (format!("env:v1:{}:{d}", &w[1..]), Part::WrappedDek),
        (format!("env:v1:{w}=:{d}"), Part::WrappedDek),
        (
            format!("env:v1:{}:{d}", STANDARD_NO_PAD.encode([0u8; 61])),
            Part::WrappedDek,
        ),
        (format!("env:v1:{w}:{d}:"), Part::Data),
        (format!("env:v1:{w}:{d}\n"), Part::Data),
        (format!("env:v1:{w}:"), Part::Data),
        (format!("env:v1:{w}:AAAA"), Part::Data),
        (
            format!("env:v1:{}:{d}", STANDARD.encode([0u8; 61])),
            Part::WrappedDek,
        ),
    ];
    for (input, expected) in cases {
        let error = open(&keys, &PAYMENT_KEY, &input).expect_err(&input);
        assert!(
            matches!(error, CryptoError::Malformed { part, .. } if part == expected),
            "{input:?}: {error:?}"
        );
        assert!(version_of(&input).is_err(), "{input:?}");
    }
    assert_eq!(version_of(&stored).expect("version"), 1);
}

#[test]
fn sealing_needs_the_current_key() {
    struct Empty;
    impl KeyProvider for Empty {
        fn current(&self) -> u32 {
            3
        }
        fn key(&self, _: u32) -> Option<&Kek> {
            None
        }
    }
    let result = seal(&Empty, &PAYMENT_KEY, VALUE);
    assert!(
        matches!(result, Err(CryptoError::UnknownVersion(3))),
        "{result:?}"
    );
}

/// A key that must never appear in an error or in `Debug`.
const SECRET_B64: &str = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I=";

fn from_env(keks: Option<&str>, current: Option<&str>) -> Result<LocalKeys, KeyConfigError> {
    LocalKeys::from_env(|name| match name {
        KEKS_VAR => keks.map(str::to_owned),
        CURRENT_VAR => current.map(str::to_owned),
        _ => None,
    })
}

#[test]
fn key_configuration_errors_name_the_variable_and_the_problem() {
    use EntryProblem::*;
    use KeyConfigError::*;
    let good = format!("v1:{SECRET_B64}");
    let short = STANDARD.encode([1u8; 16]);
    let bad_entry = |entry, problem| BadEntry { entry, problem };
    let cases: Vec<(Option<String>, Option<&str>, KeyConfigError)> = vec![
        (None, None, Missing("ENCRYPTION_KEKS")),
        (None, Some("v1"), Missing("ENCRYPTION_KEKS")),
        (Some(good.clone()), None, Missing("ENCRYPTION_CURRENT_KEK")),
        (Some(" ".into()), Some("v1"), Empty("ENCRYPTION_KEKS")),
        (
            Some(good.clone()),
            Some(""),
            Empty("ENCRYPTION_CURRENT_KEK"),
        ),
        (Some(SECRET_B64.into()), Some("v1"), bad_entry(1, Syntax)),
        (Some(format!("{good},")), Some("v1"), bad_entry(2, Syntax)),
        (
            Some(format!("1:{SECRET_B64}")),
            Some("v1"),
            bad_entry(1, Version),
        ),
        (
            Some(format!("v0:{SECRET_B64}")),
            Some("v1"),
            bad_entry(1, Version),
        ),
        (
            Some(format!("v01:{SECRET_B64}")),
            Some("v1"),
            bad_entry(1, Version),
        ),
        (
            Some(format!("vx:{SECRET_B64}")),
            Some("v1"),
            bad_entry(1, Version),
        ),
        (
            Some(format!("{good},v2:{}!", &SECRET_B64[1..])),
            Some("v1"),
            bad_entry(2, Base64(2)),
        ),
        (
            Some(format!("v3:{}", SECRET_B64.trim_end_matches('='))),
            Some("v3"),
            bad_entry(1, Base64(3)),
        ),
        (
            Some(format!("v1:{short}")),
            Some("v1"),
            bad_entry(1, Length(1, 16)),
        ),
        (
            Some(format!("{good}, {good}")),
            Some("v1"),
            DuplicateVersion(1),
        ),
        (Some(good.clone()), Some("1"), BadCurrent),
        (Some(good.clone()), Some("v0"), BadCurrent),
        (Some(good.clone()), Some("v1,v2"), BadCurrent),
        (
            Some(good.clone()),
            Some("v2"),
            CurrentNotListed {
                current: 2,
                listed: "v1".into(),
            },
        ),
    ];
    for (keks, current, expected) in cases {
        let error = from_env(keks.as_deref(), current).expect_err("a bad configuration");
        let message = error.to_string();
        assert_eq!(error, expected, "{keks:?} {current:?}: {message}");
        let named = if matches!(error, Missing(v) | Empty(v) if v == CURRENT_VAR)
            || matches!(error, BadCurrent | CurrentNotListed { .. })
        {
            "ENCRYPTION_CURRENT_KEK"
        } else {
            "ENCRYPTION_KEKS"
        };
        assert!(message.contains(named), "{message}");
        assert!(!message.contains(&SECRET_B64[..8]), "{message}");
    }
}

#[test]
fn key_configuration_tolerates_whitespace_and_never_shows_keys() {
    let keks = format!(" v2:{SECRET_B64} ,\tv10:{}\n", STANDARD.encode([9u8; 32]));
    let keys = from_env(Some(&keks), Some(" v10\n")).expect("valid");
    assert_eq!(keys.current(), 10);
    assert!(keys.key(2).is_some() && keys.key(10).is_some() && keys.key(1).is_none());
    assert_eq!(
        format!("{keys:?}"),
        "LocalKeys { current: 10, keys: {2: Kek(<redacted>), 10: Kek(<redacted>)} }"
    );
}

proptest! {
    #[test]
    fn open_never_panics_on_any_string(stored in any::<String>()) {
        prop_assert!(open(&keys(1, &[1]), &PAYMENT_KEY, &stored).is_err());
    }

    #[test]
    fn open_never_panics_on_envelope_shaped_strings(
        stored in "env:v[0-9]{0,11}:[A-Za-z0-9+/=:]{0,90}:[A-Za-z0-9+/=:]{0,90}"
    ) {
        let keys = keys(1, &[1]);
        prop_assert!(open(&keys, &PAYMENT_KEY, &stored).is_err());
        let _ = rewrap(&keys, &PAYMENT_KEY, &stored);
        let _ = version_of(&stored);
    }

    #[test]
    fn any_value_round_trips_in_any_context_and_only_there(
        value in proptest::collection::vec(any::<u8>(), 0..200),
        table in ".{0,12}",
        column in ".{0,12}",
        row_id in ".{0,12}",
    ) {
        let keys = keys(1, &[1]);
        let ctx = Context { table: &table, column: &column, row_id: &row_id };
        let stored = seal(&keys, &ctx, &value).expect("seal");
        let opened = open(&keys, &ctx, &stored).expect("open");
        prop_assert_eq!(opened.as_slice(), &value[..]);
        let moved = format!("{row_id}x");
        let elsewhere = Context { row_id: &moved, ..ctx };
        prop_assert!(is_authentication(open(&keys, &elsewhere, &stored)));
    }
}

const WYCHEPROOF_AES_GCM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../testdata/wycheproof/aes_gcm_test.json"
);

fn hex_of(test: &Json, member: &str) -> Vec<u8> {
    let text = test[member]
        .as_str()
        .unwrap_or_else(|| panic!("`{member}` missing in {test}"));
    hex::decode(text).unwrap_or_else(|err| panic!("`{member}` is not hex ({err}) in {test}"))
}

/// Our AES-256-GCM layer (nonce ‖ ciphertext ‖ tag) against every Wycheproof vector of
/// our profile: 256-bit keys, 96-bit nonces, 128-bit tags.
#[test]
fn aes_256_gcm_matches_wycheproof() {
    let text = std::fs::read_to_string(WYCHEPROOF_AES_GCM).unwrap_or_else(|err| {
        panic!("Wycheproof vectors not found at {WYCHEPROOF_AES_GCM} ({err})")
    });
    let file: Json = serde_json::from_str(&text).expect("the vectors are JSON");
    let (mut valid, mut invalid) = (0, 0);
    let mut wrong = Vec::new();
    let groups = file["testGroups"].as_array().expect("testGroups");
    for group in groups {
        if group["keySize"] != 256 || group["ivSize"] != 96 || group["tagSize"] != 128 {
            continue;
        }
        for test in group["tests"].as_array().expect("tests") {
            let id = &test["tcId"];
            let key: [u8; 32] = hex_of(test, "key").try_into().expect("a 256-bit key");
            let nonce: [u8; 12] = hex_of(test, "iv").try_into().expect("a 96-bit nonce");
            let (aad, msg) = (hex_of(test, "aad"), hex_of(test, "msg"));
            let sealed = [&nonce[..], &hex_of(test, "ct"), &hex_of(test, "tag")].concat();
            let opened = open_part(&key, &aad, &sealed);
            match test["result"].as_str() {
                Some("valid") => {
                    valid += 1;
                    if encrypt(&key, &nonce, &aad, &msg).ok() != Some(sealed) {
                        wrong.push(format!("tcId {id}: encrypts differently"));
                    }
                    if opened.ok().as_deref() != Some(&msg) {
                        wrong.push(format!("tcId {id}: does not decrypt to msg"));
                    }
                }
                Some("invalid") => {
                    invalid += 1;
                    if opened.is_ok() {
                        wrong.push(format!("tcId {id}: an invalid vector decrypts"));
                    }
                }
                other => panic!("tcId {id}: unexpected result {other:?}"),
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(valid > 0 && invalid > 0, "valid {valid}, invalid {invalid}");
    eprintln!("Wycheproof AES-256-GCM: {valid} valid and {invalid} invalid vectors checked");
}
