//! The little JSON reading that the header and the claims share.
//!
//! Both are JSON objects read in one pass, member by member, so that every problem can
//! be named (`MissingClaim("exp")` rather than a parser message) and nothing is parsed
//! twice. Strings are borrowed from the decoded bytes unless they hold escapes. Member
//! names are checked for duplicates — all of them, not only the ones we read — because
//! RFC 7515 §4 and RFC 7519 §4 let a parser that does not refuse them pick either
//! value, and two parsers picking differently is how a token means two things.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A member name, borrowed from the input unless it was written with escapes.
pub(super) struct Name<'de>(pub(super) Cow<'de, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl<'de> Visitor<'de> for NameVisitor {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, name: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(name)))
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(name.to_owned())))
            }
        }
        deserializer.deserialize_str(NameVisitor)
    }
}

/// The member names of one object seen so far. Names the reader knows are bits, so an
/// object of known names only — every token we mint — allocates nothing here.
#[derive(Default)]
pub(super) struct Members<'de> {
    known: u32,
    others: Vec<Cow<'de, str>>,
}

impl<'de> Members<'de> {
    /// Records the known member number `bit` (< 32); false when it was seen before.
    pub(super) fn first_known(&mut self, bit: u32) -> bool {
        let mask = 1 << bit;
        let first = self.known & mask == 0;
        self.known |= mask;
        first
    }

    /// Records a member the reader does not know; false when it was seen before.
    pub(super) fn first_other(&mut self, name: Cow<'de, str>) -> bool {
        if self.others.contains(&name) {
            return false;
        }
        self.others.push(name);
        true
    }
}

/// A member value, reduced to the shapes the token rules ask about.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Value<'de> {
    Str(Cow<'de, str>),
    /// A JSON integer that fits `i64`; `1.0`, `1e3` and `2^63` are not.
    Int(i64),
    /// An array whose elements are all strings.
    Strs(Vec<Cow<'de, str>>),
    /// Anything else: null, a boolean, a float, an object, an array of other things.
    Other,
}

impl<'de> Value<'de> {
    pub(super) fn into_str(self) -> Option<Cow<'de, str>> {
        match self {
            Value::Str(text) => Some(text),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Value<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Value<'de>, E> {
        Ok(Value::Str(Cow::Borrowed(text)))
    }
    fn visit_str<E: de::Error>(self, text: &str) -> Result<Value<'de>, E> {
        Ok(Value::Str(Cow::Owned(text.to_owned())))
    }
    fn visit_i64<E: de::Error>(self, number: i64) -> Result<Value<'de>, E> {
        Ok(Value::Int(number))
    }
    fn visit_u64<E: de::Error>(self, number: u64) -> Result<Value<'de>, E> {
        Ok(i64::try_from(number).map_or(Value::Other, Value::Int))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Value<'de>, E> {
        Ok(Value::Other)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Value<'de>, E> {
        Ok(Value::Other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value<'de>, E> {
        Ok(Value::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value<'de>, A::Error> {
        let mut strings = Some(Vec::new());
        while let Some(element) = seq.next_element::<Value<'de>>()? {
            match (&mut strings, element) {
                (Some(list), Value::Str(text)) => list.push(text),
                _ => strings = None,
            }
        }
        Ok(strings.map_or(Value::Other, Value::Strs))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Value::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str, expected: Value<'_>) {
        let value: Value<'_> = serde_json::from_str(json).unwrap();
        assert_eq!(value, expected, "{json}");
    }

    #[test]
    fn integers_are_only_json_integers_that_fit_i64() {
        check("1800000000", Value::Int(1_800_000_000));
        check("-5", Value::Int(-5));
        check("9223372036854775807", Value::Int(i64::MAX));
        check("9223372036854775808", Value::Other);
        check("1800000000.0", Value::Other);
        check("1.8e9", Value::Other);
        check("-1e300", Value::Other);
        check("\"1800000000\"", Value::Str("1800000000".into()));
    }

    #[test]
    fn arrays_are_lists_of_strings_or_nothing() {
        check(r#"["a","b"]"#, Value::Strs(vec!["a".into(), "b".into()]));
        check("[]", Value::Strs(Vec::new()));
        check(r#"["a",1]"#, Value::Other);
        check(r#"[["a"]]"#, Value::Other);
        check(r#"{"a":"b"}"#, Value::Other);
        check("null", Value::Other);
    }

    #[test]
    fn strings_are_borrowed_unless_escaped() {
        let plain: Value<'_> = serde_json::from_str(r#""abc""#).unwrap();
        assert!(matches!(plain, Value::Str(Cow::Borrowed("abc"))));
        let escaped: Value<'_> = serde_json::from_str(r#""a\u0062c""#).unwrap();
        assert!(matches!(escaped, Value::Str(Cow::Owned(ref s)) if s == "abc"));
    }

    #[test]
    fn a_member_seen_before_is_reported() {
        let mut members = Members::default();
        assert!(members.first_known(3));
        assert!(!members.first_known(3));
        assert!(members.first_other("x-custom".into()));
        assert!(!members.first_other(Cow::Owned("x-custom".to_owned())));
    }
}
