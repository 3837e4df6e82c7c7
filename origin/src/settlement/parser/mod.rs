//! The PG's settlement file, read as a stream: the header row, then one [`Entry`] per
//! row — a [`Row`] to reconcile, or a [`Skipped`] row and its reason — and at the end a
//! [`Summary`]. Lenient about the file's shape, honest about what it left out: every row
//! after the header is either accepted or skipped with its line number.
//!
//! ```text
//! let mut entries = parse(file)?;            // reads up to the header, or NotASettlementFile
//! for entry in entries.by_ref() {
//!     match entry? {                         // io::Error: the reader failed; nothing follows
//!         Entry::Row(row) => …,
//!         Entry::Skipped(skipped) => …,
//!     }
//! }
//! let summary = entries.summary();           // final once the iterator has returned None
//! ```
//!
//! **Streaming.** The input is read 8 KiB at a time and one row is held at a time, at
//! most [`MAX_ROW_BYTES`] of it, so memory does not grow with the file. A longer row is
//! skipped (`ROW_TOO_LONG`) and still read to its end, so the rows after it are found and
//! numbered. The result does not depend on how the reader splits the bytes.
//!
//! **Line numbers** are physical and 1-based: the line on which a row starts. LF, CRLF and
//! a lone CR each end a line, mixed freely; line breaks inside a quoted field count too.
//!
//! **CSV** (RFC 4180, read leniently). Fields are separated by commas; a field that starts
//! with `"` is quoted, may hold commas and line breaks, and writes `"` as `""`. After a
//! closing quote, anything up to the next comma is kept as written (`"ab"c` is `abc`); a
//! `"` inside an unquoted field is an ordinary character. A final line break ends the last
//! row and does not start an empty one. A quote still open at the end of the input makes
//! its row `UNTERMINATED_QUOTE`.
//!
//! **Encoding.** A UTF-8 byte order mark is stripped, and the file is UTF-8. Otherwise
//! the encoding is decided by the first row that holds a byte outside ASCII (until then
//! UTF-8 and CP949 read the same): UTF-8 if that row is valid UTF-8, else CP949 — Excel's
//! Korean, read as WHATWG's `EUC-KR`, which is CP949. A file that is ASCII throughout is
//! reported as UTF-8. Fields are split on the raw bytes, which is exact for both: no CP949
//! byte pair contains a comma, a quote or a line break. Only the order id and the amount
//! are decoded, strictly: a row whose order id or amount is not valid in the file's
//! encoding (a UTF-8 file that turns invalid later) is `UNDECODABLE`; bytes in the other
//! columns are never looked at. The header's names are decoded leniently (an undecodable
//! name matches nothing).
//!
//! **Header.** The first row that is not blank. Each name is normalised by [`normalize`]:
//! lower case; white space, `_` and `-` removed; a trailing `:` and a trailing
//! parenthesised or bracketed unit dropped (`결제금액(원)`, `Amount [KRW]`). The order id is
//! the first column whose name is in [`ORDER_ID_HEADERS`], the amount the first in
//! [`AMOUNT_HEADERS`], and the transaction date — optional — the first in
//! [`DATE_HEADERS`]; other columns are ignored, in any order. Without either of the first two,
//! [`ParseError::NotASettlementFile`]. Blank rows before the header are skipped like any
//! other, up to [`MAX_LEADING_BLANK_ROWS`].
//!
//! **Rows.** Each row after the header is checked in this order; the first check that
//! fails is its [`SkipReason`]:
//! 1. a quote left open at the end of the input — `UNTERMINATED_QUOTE`;
//! 2. longer than [`MAX_ROW_BYTES`] — `ROW_TOO_LONG`;
//! 3. blank: every field empty or white space (an empty line, or Excel's `,,,`) —
//!    `BLANK_LINE`, each one reported with its line, as any other skipped row;
//! 4. a summary row: the first field, or the order id field, is one of [`SUMMARY_LABELS`]
//!    after normalising (so `Grand Total:` and `합계(3건)` count) — `SUMMARY_ROW`;
//! 5. too few fields to reach both the order id and the amount — `SHORT_ROW`;
//! 6. the order id or the amount not decodable — `UNDECODABLE`;
//! 7. the order id empty after trimming white space — `EMPTY_ORDER_ID`;
//! 8. the amount not a whole number of won ([`parse_amount`]) — `UNPARSABLE_AMOUNT`.
//!
//! An accepted row carries its date when the date cell starts with one ([`parse_date`]);
//! the date is read leniently and never a reason to skip.
//!
//! Nothing else is judged here: duplicates, negative amounts (refunds) and order ids we do
//! not know are for reconciliation to decide.

mod cells;
mod csv;
mod encoding;
mod header;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Read};
use std::iter::FusedIterator;

use chrono::NaiveDate;

pub use cells::{normalize, parse_amount, parse_date};
use csv::{CsvReader, Record};
use encoding::Decided;
pub use header::{Column, Header, HeaderProblem, AMOUNT_HEADERS, DATE_HEADERS, ORDER_ID_HEADERS};

/// The longest row read, in bytes of the file (separators and quotes included). A longer
/// row is skipped as `ROW_TOO_LONG`; this is what bounds memory.
pub const MAX_ROW_BYTES: usize = 64 * 1024;

/// The most blank rows accepted before the header row: past them, the file is not a
/// settlement file (they are held until the header is found, so they are bounded too).
pub const MAX_LEADING_BLANK_ROWS: usize = 1_000;

/// What marks a summary row, normalised (see [`normalize`]): `합계`, `총 합계`, `총계`,
/// `소계`, `Total`, `TOTALS`, `Subtotal`, `Sub-total`, `Grand total`.
pub const SUMMARY_LABELS: &[&str] = &[
    "합계",
    "총합계",
    "총계",
    "소계",
    "total",
    "totals",
    "subtotal",
    "grandtotal",
];

/// The longest amount, in characters, repeated in an `UNPARSABLE_AMOUNT` reason.
const SHOWN_AMOUNT_CHARS: usize = 32;

/// How much is asked of the reader at a time.
const READ_CHUNK: usize = 8 * 1024;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads the header row and returns the rows after it, one at a time.
///
/// Fails with [`ParseError::NotASettlementFile`] when the header has no order id or no
/// amount column (or there is no header at all), and with [`ParseError::Io`] when the
/// reader does.
pub fn parse<R: Read>(reader: R) -> Result<Entries<R>, ParseError> {
    let mut csv = CsvReader::new(reader);
    let mut encoding = if csv.strip_bom()? {
        Decided::Utf8WithBom
    } else {
        Decided::Undecided
    };
    let mut record = Record::default();
    let mut leading_blanks = VecDeque::new();
    loop {
        if !csv.read_record(&mut record)? {
            return Err(HeaderProblem::NoHeader.into());
        }
        encoding.decide(&record);
        if record.unterminated {
            return Err(HeaderProblem::UnterminatedQuote.into());
        }
        if record.too_long {
            return Err(HeaderProblem::TooLong.into());
        }
        if !record.is_blank() {
            break;
        }
        if leading_blanks.len() == MAX_LEADING_BLANK_ROWS {
            return Err(HeaderProblem::NoHeader.into());
        }
        leading_blanks.push_back(record.line);
    }
    let header = Header::find(&record, encoding)?;
    Ok(Entries {
        csv,
        record,
        header,
        encoding,
        leading_blanks,
        rows: 0,
        skipped: 0,
        done: false,
    })
}

/// Why a file is refused as a whole.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// The header row is missing, or lacks the order id or the amount column.
    #[error("not a settlement file: {reason}")]
    NotASettlementFile { reason: HeaderProblem },
    #[error("reading the settlement file: {0}")]
    Io(#[from] io::Error),
}

impl From<HeaderProblem> for ParseError {
    fn from(reason: HeaderProblem) -> Self {
        ParseError::NotASettlementFile { reason }
    }
}

/// One row after the header: accepted or skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Row(Row),
    Skipped(Skipped),
}

/// An accepted row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The physical line (1-based) on which the row starts.
    pub line: u64,
    /// The order id, trimmed of white space; never empty.
    pub order_id: String,
    /// Whole won; negative for a refund or a correction, as the file says.
    pub amount: i64,
    /// The transaction date, when the file has a date column and the row's cell starts
    /// with a date ([`parse_date`]); a row is never skipped for its date.
    pub date: Option<NaiveDate>,
}

/// A skipped row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The physical line (1-based) on which the row starts.
    pub line: u64,
    pub reason: SkipReason,
}

/// Why a row was skipped. [`SkipReason::code`] is stable; the text is for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// Every field empty or white space.
    BlankLine,
    /// `합계`, `Total` and the like in the first field or the order id field.
    SummaryRow,
    /// Fewer fields than it takes to reach both the order id and the amount.
    ShortRow { fields: usize, needed: usize },
    /// The order id is empty.
    EmptyOrderId,
    /// The amount is not a whole number of won; `value` is its first characters.
    UnparsableAmount { value: String },
    /// The order id or the amount is not valid in the file's encoding.
    Undecodable { field: Field },
    /// A quote opened in this row is still open at the end of the input.
    UnterminatedQuote,
    /// Longer than [`MAX_ROW_BYTES`].
    RowTooLong,
}

impl SkipReason {
    /// The stable code, for counts and for the API.
    pub fn code(&self) -> &'static str {
        match self {
            SkipReason::BlankLine => "BLANK_LINE",
            SkipReason::SummaryRow => "SUMMARY_ROW",
            SkipReason::ShortRow { .. } => "SHORT_ROW",
            SkipReason::EmptyOrderId => "EMPTY_ORDER_ID",
            SkipReason::UnparsableAmount { .. } => "UNPARSABLE_AMOUNT",
            SkipReason::Undecodable { .. } => "UNDECODABLE",
            SkipReason::UnterminatedQuote => "UNTERMINATED_QUOTE",
            SkipReason::RowTooLong => "ROW_TOO_LONG",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::BlankLine => f.write_str("blank line"),
            SkipReason::SummaryRow => f.write_str("summary row"),
            SkipReason::ShortRow { fields, needed } => {
                write!(f, "short row: {fields} fields, {needed} needed")
            }
            SkipReason::EmptyOrderId => f.write_str("empty order id"),
            SkipReason::UnparsableAmount { value } => write!(f, "unparsable amount {value:?}"),
            SkipReason::Undecodable { field } => {
                write!(f, "the {field} is not valid in the file's encoding")
            }
            SkipReason::UnterminatedQuote => f.write_str("a quote is never closed"),
            SkipReason::RowTooLong => write!(f, "row longer than {MAX_ROW_BYTES} bytes"),
        }
    }
}

/// One of the two columns read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    OrderId,
    Amount,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Field::OrderId => "order id",
            Field::Amount => "amount",
        })
    }
}

/// The file's encoding, as detected (see the module documentation).
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

/// The counts of a whole file (or, while it is being read, of the entries so far).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Accepted rows.
    pub rows: u64,
    /// Skipped rows, blank ones included.
    pub skipped: u64,
    pub encoding: Encoding,
}

/// The rows after the header, in file order. Each item is an [`Entry`], or the reader's
/// error, after which the iterator ends. [`Entries::summary`] counts what was yielded.
pub struct Entries<R> {
    csv: CsvReader<R>,
    record: Record,
    header: Header,
    encoding: Decided,
    leading_blanks: VecDeque<u64>,
    rows: u64,
    skipped: u64,
    done: bool,
}

impl<R> Entries<R> {
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Rows and skipped rows yielded so far, and the encoding: the whole file's once the
    /// iterator has returned `None`. (Until the first row outside ASCII, the encoding
    /// reads UTF-8, and may still become CP949.)
    pub fn summary(&self) -> Summary {
        Summary {
            rows: self.rows,
            skipped: self.skipped,
            encoding: self.encoding.encoding(),
        }
    }

    fn count(&mut self, entry: Entry) -> Entry {
        match entry {
            Entry::Row(_) => self.rows += 1,
            Entry::Skipped(_) => self.skipped += 1,
        }
        entry
    }

    fn classify(&self) -> Entry {
        let record = &self.record;
        match self.read_row() {
            Ok((order_id, amount)) => Entry::Row(Row {
                line: record.line,
                order_id,
                amount,
                date: self.read_date(),
            }),
            Err(reason) => Entry::Skipped(Skipped {
                line: record.line,
                reason,
            }),
        }
    }

    fn read_date(&self) -> Option<NaiveDate> {
        let column = self.header.date.as_ref()?;
        let bytes = self.record.field(column.index)?;
        parse_date(&self.encoding.decode_lossy(bytes))
    }

    fn read_row(&self) -> Result<(String, i64), SkipReason> {
        let record = &self.record;
        if record.unterminated {
            return Err(SkipReason::UnterminatedQuote);
        }
        if record.too_long {
            return Err(SkipReason::RowTooLong);
        }
        if record.is_blank() {
            return Err(SkipReason::BlankLine);
        }
        let order_index = self.header.order_id.index;
        let amount_index = self.header.amount.index;
        let is_label = |index| {
            record.field(index).is_some_and(|bytes| {
                SUMMARY_LABELS.contains(&normalize(&self.encoding.decode_lossy(bytes)).as_str())
            })
        };
        if is_label(0) || is_label(order_index) {
            return Err(SkipReason::SummaryRow);
        }
        let (Some(order_bytes), Some(amount_bytes)) =
            (record.field(order_index), record.field(amount_index))
        else {
            return Err(SkipReason::ShortRow {
                fields: record.len(),
                needed: order_index.max(amount_index) + 1,
            });
        };
        let decode = |bytes, field| {
            self.encoding
                .decode(bytes)
                .ok_or(SkipReason::Undecodable { field })
        };
        let order_text = decode(order_bytes, Field::OrderId)?;
        let amount_text = decode(amount_bytes, Field::Amount)?;
        let order_id = order_text.trim();
        if order_id.is_empty() {
            return Err(SkipReason::EmptyOrderId);
        }
        let amount = parse_amount(&amount_text).ok_or_else(|| SkipReason::UnparsableAmount {
            value: amount_text
                .trim()
                .chars()
                .take(SHOWN_AMOUNT_CHARS)
                .collect(),
        })?;
        Ok((order_id.to_owned(), amount))
    }
}

impl<R: Read> Iterator for Entries<R> {
    type Item = io::Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(line) = self.leading_blanks.pop_front() {
            let entry = Entry::Skipped(Skipped {
                line,
                reason: SkipReason::BlankLine,
            });
            return Some(Ok(self.count(entry)));
        }
        if self.done {
            return None;
        }
        match self.csv.read_record(&mut self.record) {
            Ok(true) => {
                self.encoding.decide(&self.record);
                let entry = self.classify();
                Some(Ok(self.count(entry)))
            }
            Ok(false) => {
                self.done = true;
                None
            }
            Err(error) => {
                self.done = true;
                Some(Err(error))
            }
        }
    }
}

impl<R: Read> FusedIterator for Entries<R> {}
