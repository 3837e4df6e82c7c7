//! The file's encoding, decided on the first row with a byte outside ASCII: UTF-8 or
//! CP949 (see the parser's documentation).

use std::borrow::Cow;
use std::fmt;

use encoding_rs::EUC_KR;

use super::csv::Record;

/// The encoding as far as it is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Decided {
    /// Everything so far was ASCII.
    Undecided,
    Utf8,
    Utf8WithBom,
    Cp949,
}

impl Decided {
    /// Decides on the first record with a byte outside ASCII.
    pub(super) fn decide(&mut self, record: &Record) {
        if *self == Decided::Undecided && record.non_ascii {
            *self = if record
                .fields()
                .all(|field| plausible_utf8(field, record.too_long))
            {
                Decided::Utf8
            } else {
                Decided::Cp949
            };
        }
    }

    pub(super) fn encoding(self) -> Encoding {
        match self {
            Decided::Undecided | Decided::Utf8 => Encoding::Utf8,
            Decided::Utf8WithBom => Encoding::Utf8WithBom,
            Decided::Cp949 => Encoding::Cp949,
        }
    }

    /// Strictly: `None` when the bytes are not valid in the encoding.
    pub(super) fn decode(self, bytes: &[u8]) -> Option<Cow<'_, str>> {
        match self {
            Decided::Cp949 => EUC_KR.decode_without_bom_handling_and_without_replacement(bytes),
            _ => std::str::from_utf8(bytes).ok().map(Cow::Borrowed),
        }
    }

    /// Invalid sequences become U+FFFD.
    pub(super) fn decode_lossy(self, bytes: &[u8]) -> Cow<'_, str> {
        match self {
            Decided::Cp949 => EUC_KR.decode_without_bom_handling(bytes).0,
            _ => String::from_utf8_lossy(bytes),
        }
    }
}

/// Valid UTF-8; when the record was cut short, a sequence cut at the end counts as valid.
fn plausible_utf8(bytes: &[u8], cut: bool) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(error) => cut && error.error_len().is_none(),
    }
}

/// The file's encoding, as detected (see the parser's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf8WithBom,
    Cp949,
}

impl Encoding {
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Utf8 => "UTF-8",
            Encoding::Utf8WithBom => "UTF-8 with BOM",
            Encoding::Cp949 => "CP949",
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
