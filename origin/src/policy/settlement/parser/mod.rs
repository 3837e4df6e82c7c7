//! The PG's settlement file, read as a stream: the header row, then one [`Entry`] per
//! row — a [`Row`] to reconcile, or a [`Skipped`] row and its reason — and at the end a
//! [`Summary`]. Lenient about the file's shape, honest about what it left out: every row
//! is either accepted or skipped with its line number, the rows before the header too.
//! A CSV file ([`parse`]) or, told apart by its first bytes, an Excel workbook
//! ([`open`]; see [`workbook`] for how it is read, and **Workbooks** below for its cells).
//!
//! ```text
//! let mut entries = open(file, None)?;       // reads up to the header, or a ParseError
//! for entry in entries.by_ref() {
//!     match entry? {                         // a ParseError: nothing follows
//!         Entry::Row(row) => …,
//!         Entry::Skipped(skipped) => …,
//!     }
//! }
//! let summary = entries.summary();           // final once the iterator has returned None
//! ```
//!
//! **Streaming.** A CSV is read 8 KiB at a time and one row is held at a time, at most
//! [`MAX_ROW_BYTES`] of it, so memory does not grow with the file. (A workbook's
//! bounds are [`workbook`]'s: its rows are handed over a few hundred ahead, each at most
//! [`MAX_ROW_BYTES`] of cells.) A longer row is
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
//! **Header.** The first row that names an order id column and an amount column. Each
//! name is normalised by [`normalize`]:
//! lower case; white space, `_` and `-` removed; a trailing `:` and a trailing
//! parenthesised or bracketed unit dropped (`결제금액(원)`, `Amount [KRW]`). The order id is
//! the first column whose name is in [`ORDER_ID_HEADERS`], the amount the first in
//! [`AMOUNT_HEADERS`], and the transaction date — optional — the first in
//! [`DATE_HEADERS`]; other columns are ignored, in any order. The rows before the header —
//! a report's title, the period it covers (`조회기간: … ~ …`), blank lines — are skipped
//! and reported like any other (`BEFORE_HEADER`, `BLANK_LINE`), up to [`MAX_LEADING_ROWS`]
//! of them. Without a header, [`ParseError::NotASettlementFile`], with what the row that
//! was meant to be it lacks (the first that names either column, or else the first that
//! is not blank); a quote never closed, or a row too long, before the header refuses the
//! file as well.
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
//! (A workbook's cells add `INEXACT_NUMBER` and `CELL_ERROR`, below.)
//!
//! An accepted row carries its date when the date cell starts with one ([`parse_date`]);
//! the date is read leniently and never a reason to skip.
//!
//! **Workbooks.** The rows of one sheet — the one named, or the first that has a header
//! — numbered as Excel shows them; a row number the sheet does not hold is a blank row,
//! as a CSV's empty line. Each cell by the value Excel stores:
//! - **text** (numbers stored as text too) by the same rules as a CSV's field;
//! - **numbers** as Excel shows them in the General format — rounded to 15 significant
//!   digits, so a formula's `1100.0000000000002` is 1100. An amount must then be whole;
//!   an order id is written in digits without exponent (an id Excel shows as
//!   `1.23457E+11` is `123456789012`, exact below 10^15); an order id of 10^15 or more
//!   is skipped as `INEXACT_NUMBER`, because Excel has already rounded away its digits
//!   after the 15th (store long ids as text);
//! - **dates** give the date column its day; as an amount, a date is unparsable;
//! - a formula's **error** (`#N/A`) in the order id or the amount is `CELL_ERROR`;
//! - a cell not written is empty: a workbook's row is never `SHORT_ROW`.
//!
//! Nothing else is judged here: duplicates, negative amounts (refunds) and order ids we do
//! not know are for reconciliation to decide.

mod cells;
mod csv;
mod encoding;
mod entry;
mod header;
mod row;
#[cfg(test)]
mod tests;
pub mod workbook;

use std::collections::VecDeque;
use std::io::{self, Read, Seek, SeekFrom};
use std::iter::FusedIterator;

pub use cells::{normalize, parse_amount, parse_date};
use csv::CsvRows;
pub use encoding::Encoding;
pub use entry::{Entry, Field, Row, SkipReason, Skipped};
pub use header::{Column, Header, HeaderProblem, AMOUNT_HEADERS, DATE_HEADERS, ORDER_ID_HEADERS};
use row::{classify, find_header, Found, Rows};
use workbook::{ChannelRows, Kind, WorkbookProblem};

/// The longest row read, in bytes of the file (separators and quotes included). A longer
/// row is skipped as `ROW_TOO_LONG`; this is what bounds memory.
pub const MAX_ROW_BYTES: usize = 64 * 1024;

/// The most rows accepted before the header row: past them, the file is not a
/// settlement file (they are held until the header is found, so they are bounded too).
pub const MAX_LEADING_ROWS: usize = 1_000;

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

/// Reads a CSV file's header row and returns the rows after it, one at a time.
///
/// Fails with [`ParseError::NotASettlementFile`] when no row names an order id column
/// and an amount column, and with [`ParseError::Io`] when the reader does.
pub fn parse<R: Read>(reader: R) -> Result<Entries<R>, ParseError> {
    let mut rows = CsvRows::new(reader)?;
    let Found { header, before } = find_header(&mut rows)?;
    Ok(Entries::new(Source::Csv(rows), header, before))
}

/// Reads a settlement file of any kind — a CSV, or an Excel workbook told by its first
/// bytes — up to its header, and returns the rows after it. `sheet` names a workbook's
/// sheet; without it, the first sheet that has a header is read.
///
/// Fails as [`parse`] does, and with [`ParseError::UnreadableWorkbook`] for a workbook
/// that cannot be read, or [`ParseError::NoSuchSheet`].
pub fn open<R>(mut reader: R, sheet: Option<&str>) -> Result<Entries<R>, ParseError>
where
    R: Read + Seek + Send + 'static,
{
    let mut head = [0; 8];
    let held = read_head(&mut reader, &mut head)?;
    reader.seek(SeekFrom::Start(0))?;
    match Kind::sniff(head.get(..held).unwrap_or_default()) {
        Some(kind) => {
            let (rows, Found { header, before }, sheet) = workbook::open(reader, kind, sheet)?;
            Ok(Entries::new(
                Source::Workbook { rows, kind, sheet },
                header,
                before,
            ))
        }
        None => match sheet {
            Some(name) => Err(ParseError::NoSuchSheet {
                name: name.to_owned(),
                sheets: Vec::new(),
            }),
            None => parse(reader),
        },
    }
}

/// Fills `head` as far as the input goes; how much was read.
fn read_head(reader: &mut impl Read, head: &mut [u8]) -> io::Result<usize> {
    let mut held = 0;
    while let Some(free) = head.get_mut(held..).filter(|free| !free.is_empty()) {
        match reader.read(free) {
            Ok(0) => break,
            Ok(read) => held += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(held)
}

/// Why a file is refused as a whole, or (a workbook, or the reader, failing part way)
/// why its rows end.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// No row names an order id column and an amount column.
    #[error("not a settlement file: {reason}")]
    NotASettlementFile { reason: HeaderProblem },
    /// A workbook that cannot be read: encrypted, damaged, too large unpacked.
    #[error("unreadable workbook: {reason}")]
    UnreadableWorkbook { reason: WorkbookProblem },
    /// The sheet asked for is not in the workbook (`sheets`: those it has; none for a
    /// CSV file).
    #[error("{}", no_such_sheet(name, sheets))]
    NoSuchSheet { name: String, sheets: Vec<String> },
    #[error("reading the settlement file: {0}")]
    Io(#[from] io::Error),
}

fn no_such_sheet(name: &str, sheets: &[String]) -> String {
    if sheets.is_empty() {
        format!("no sheet {name:?}: the file is a CSV file, which has no sheets")
    } else {
        format!("no sheet {name:?}: the workbook's sheets are {sheets:?}")
    }
}

impl From<HeaderProblem> for ParseError {
    fn from(reason: HeaderProblem) -> Self {
        ParseError::NotASettlementFile { reason }
    }
}

/// What kind of file, and how it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    Csv(Encoding),
    Workbook { kind: Kind, sheet: String },
}

impl Format {
    /// `CSV`, `XLSX` or `XLS`.
    pub fn name(&self) -> &'static str {
        match self {
            Format::Csv(_) => "CSV",
            Format::Workbook { kind, .. } => kind.as_str(),
        }
    }

    /// A CSV file's encoding.
    pub fn encoding(&self) -> Option<Encoding> {
        match self {
            Format::Csv(encoding) => Some(*encoding),
            Format::Workbook { .. } => None,
        }
    }

    /// The workbook's sheet that was read.
    pub fn sheet(&self) -> Option<&str> {
        match self {
            Format::Csv(_) => None,
            Format::Workbook { sheet, .. } => Some(sheet),
        }
    }
}

/// The counts of a whole file (or, while it is being read, of the entries so far).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Accepted rows.
    pub rows: u64,
    /// Skipped rows, blank ones and those before the header included.
    pub skipped: u64,
    pub format: Format,
}

/// Where the rows come from.
enum Source<R> {
    Csv(CsvRows<R>),
    Workbook {
        rows: ChannelRows,
        kind: Kind,
        sheet: String,
    },
}

/// The rows of a file, the ones before the header first, in file order. Each item is
/// an [`Entry`], or an error after which the iterator ends. [`Entries::summary`] counts
/// what was yielded.
pub struct Entries<R> {
    source: Source<R>,
    header: Header,
    before: VecDeque<Skipped>,
    rows: u64,
    skipped: u64,
    done: bool,
}

impl<R> Entries<R> {
    fn new(source: Source<R>, header: Header, before: VecDeque<Skipped>) -> Self {
        Entries {
            source,
            header,
            before,
            rows: 0,
            skipped: 0,
            done: false,
        }
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Rows and skipped rows yielded so far, and the format: the whole file's once the
    /// iterator has returned `None`. (Until a CSV's first row outside ASCII, its encoding
    /// reads UTF-8, and may still become CP949.)
    pub fn summary(&self) -> Summary {
        Summary {
            rows: self.rows,
            skipped: self.skipped,
            format: match &self.source {
                Source::Csv(rows) => Format::Csv(rows.encoding().encoding()),
                Source::Workbook { kind, sheet, .. } => Format::Workbook {
                    kind: *kind,
                    sheet: sheet.clone(),
                },
            },
        }
    }

    fn count(&mut self, entry: Entry) -> Entry {
        match entry {
            Entry::Row(_) => self.rows += 1,
            Entry::Skipped(_) => self.skipped += 1,
        }
        entry
    }
}

impl<R: Read> Entries<R> {
    /// The next row after the header, classified; `None` at the end.
    fn next_row(&mut self) -> Result<Option<Entry>, ParseError> {
        Ok(match &mut self.source {
            Source::Csv(rows) => rows.advance()?.then(|| classify(rows.row(), &self.header)),
            Source::Workbook { rows, .. } => {
                rows.advance()?.then(|| classify(rows.row(), &self.header))
            }
        })
    }
}

impl<R: Read> Iterator for Entries<R> {
    type Item = Result<Entry, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(skipped) = self.before.pop_front() {
            return Some(Ok(self.count(Entry::Skipped(skipped))));
        }
        if self.done {
            return None;
        }
        match self.next_row() {
            Ok(Some(entry)) => Some(Ok(self.count(entry))),
            Ok(None) => {
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

#[cfg(test)]
impl<R> Entries<R> {
    /// A CSV's buffers for the row read last: (bytes, field ends).
    fn held_capacity(&self) -> (usize, usize) {
        match &self.source {
            Source::Csv(rows) => rows.held_capacity(),
            Source::Workbook { .. } => (0, 0),
        }
    }
}
