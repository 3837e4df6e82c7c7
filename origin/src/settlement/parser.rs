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

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Read};
use std::iter::FusedIterator;

use chrono::NaiveDate;
use encoding_rs::EUC_KR;

#[cfg(test)]
mod tests;

/// The longest row read, in bytes of the file (separators and quotes included). A longer
/// row is skipped as `ROW_TOO_LONG`; this is what bounds memory.
pub const MAX_ROW_BYTES: usize = 64 * 1024;

/// The most blank rows accepted before the header row: past them, the file is not a
/// settlement file (they are held until the header is found, so they are bounded too).
pub const MAX_LEADING_BLANK_ROWS: usize = 1_000;

/// Names of the order id column, normalised (see [`normalize`]): `orderNo`, `order_no`,
/// `Order-ID`, `merchant_uid`, `주문번호`, `주문ID` and so on. Not included: `거래번호`,
/// `tid`, `paymentKey` — those are the PG's own transaction ids, never our order id, and
/// matching them would make every row look unknown to us.
pub const ORDER_ID_HEADERS: &[&str] = &[
    "orderno",
    "orderid",
    "ordernumber",
    "merchantuid",
    "merchantorderid",
    "주문번호",
    "주문id",
    "주문no",
    "가맹점주문번호",
    "상점주문번호",
];

/// Names of the amount column, normalised (see [`normalize`]): `amount`,
/// `settle_amount`, `결제금액`, `정산금액(원)` and so on. Not included: fees (`수수료`),
/// VAT (`부가세`), `totalAmount` (often a running or grand total).
pub const AMOUNT_HEADERS: &[&str] = &[
    "amount",
    "settleamount",
    "settlementamount",
    "approvedamount",
    "approvalamount",
    "paymentamount",
    "금액",
    "결제금액",
    "정산금액",
    "승인금액",
    "거래금액",
];

/// Names of the transaction date column, normalised (see [`normalize`]): `거래일시`,
/// `승인일자`, `approvedAt`, `transaction_date`, `date` and so on. Optional: it tells
/// which days a file covers when the operator does not say. Not included: the settlement
/// date (`정산일`, `settlementDate`) — the day the money moves, often days after the charge.
pub const DATE_HEADERS: &[&str] = &[
    "거래일시",
    "거래일자",
    "거래일",
    "승인일시",
    "승인일자",
    "결제일시",
    "결제일자",
    "결제일",
    "date",
    "transactiondate",
    "transactiontime",
    "transactedat",
    "tradedate",
    "approvedat",
    "approvaldate",
    "approveddate",
    "paidat",
    "paymentdate",
];

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

/// What is wrong with the header row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HeaderProblem {
    #[error(
        "no header row: the file is empty, or its first {MAX_LEADING_BLANK_ROWS} rows are blank"
    )]
    NoHeader,
    #[error("the header row has neither an order id column nor an amount column")]
    NoOrderIdOrAmountColumn,
    #[error("the header row has no order id column")]
    NoOrderIdColumn,
    #[error("the header row has no amount column")]
    NoAmountColumn,
    #[error("the header row opens a quote that is never closed")]
    UnterminatedQuote,
    #[error("the header row is longer than {MAX_ROW_BYTES} bytes")]
    TooLong,
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

/// The header row, and the two columns found in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The physical line (1-based) on which the header starts.
    pub line: u64,
    pub order_id: Column,
    pub amount: Column,
    /// The transaction date column, if the file has one.
    pub date: Option<Column>,
}

/// A column found by its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// 0-based position in the row.
    pub index: usize,
    /// The name as written, trimmed.
    pub name: String,
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

/// A header name or a summary label made comparable: lower case; white space, `_`, `-`
/// and a byte order mark removed; then a trailing `:` and a trailing `(…)` or `[…]` (a
/// unit, a count) dropped. `Settle_Amount (KRW)` becomes `settleamount`, `주문 번호:`
/// becomes `주문번호`.
pub fn normalize(name: &str) -> String {
    let mut name: String = name
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '_' | '-' | '\u{feff}'))
        .flat_map(char::to_lowercase)
        .collect();
    while name.ends_with(':') {
        name.pop();
    }
    for (open, close) in [('(', ')'), ('[', ']')] {
        if name.ends_with(close) {
            if let Some(start) = name.rfind(open).filter(|&start| start > 0) {
                name.truncate(start);
            }
        }
    }
    while name.ends_with(':') {
        name.pop();
    }
    name
}

/// The calendar date a date cell starts with, as written (no time zone is applied), or
/// `None`. After leading white space: `YYYY-MM-DD`, `YYYY/MM/DD` or `YYYY.MM.DD` (one- or
/// two-digit month and day), or `YYYYMMDD`; then the end, or anything that is not a digit
/// (` 03:28:15`, `T03:28:15Z`). An impossible date (`2026-02-30`) is `None`.
pub fn parse_date(text: &str) -> Option<NaiveDate> {
    let text = text.trim_start();
    let (year, rest) = digits(text);
    let (year, month, day, rest) = if year.len() == 8 {
        let (year, month_day) = year.split_at(4);
        let (month, day) = month_day.split_at(2);
        (year, month, day, rest)
    } else {
        let separator = rest
            .chars()
            .next()
            .filter(|c| matches!(c, '-' | '/' | '.'))?;
        let (month, rest) = digits(rest.strip_prefix(separator)?);
        let (day, rest) = digits(rest.strip_prefix(separator)?);
        (year, month, day, rest)
    };
    let valid = year.len() == 4
        && (1..=2).contains(&month.len())
        && (1..=2).contains(&day.len())
        && !rest.starts_with(|c: char| c.is_ascii_digit());
    if !valid {
        return None;
    }
    NaiveDate::from_ymd_opt(year.parse().ok()?, month.parse().ok()?, day.parse().ok()?)
}

/// The leading ASCII digits of `text`, and the rest.
fn digits(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(end)
}

/// A whole number of won, as settlement files write it, or `None`.
///
/// White space anywhere is ignored. Accepted: an optional sign (`+` or `-`: refunds and
/// corrections are negative, and reconciliation decides what they mean), before or after
/// an optional leading `₩`, `￦` or `KRW`; digits, with `,` thousands separators only in
/// groups of three (`1,00` may be a decimal comma, so it is refused); an optional
/// fraction of zeros only (`1000.00` is 1000 — the won has no minor unit, so `1000.5` is
/// refused); an optional trailing `원` or `KRW`. Refused as well: anything else (`$`,
/// `(1,000)`, `1e5`), no digits at all, and a value outside `i64`.
pub fn parse_amount(text: &str) -> Option<i64> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let (mut negative, rest) = take_sign(&compact);
    let rest = strip_currency_prefix(rest);
    let rest = if negative.is_none() {
        let (sign, rest) = take_sign(rest);
        negative = sign;
        rest
    } else {
        rest
    };
    let negative = negative.unwrap_or(false);
    let rest = strip_currency_suffix(rest);
    let integer = match rest.split_once('.') {
        Some((integer, fraction)) => {
            if fraction.is_empty() || fraction.bytes().any(|b| b != b'0') {
                return None;
            }
            integer
        }
        None => rest,
    };
    if !well_grouped(integer) {
        return None;
    }
    let mut value: i64 = 0;
    for digit in integer.bytes().filter(|b| b.is_ascii_digit()) {
        let digit = i64::from(digit - b'0');
        value = value.checked_mul(10)?;
        value = if negative {
            value.checked_sub(digit)?
        } else {
            value.checked_add(digit)?
        };
    }
    Some(value)
}

/// `Some(true)` for a leading `-`, `Some(false)` for `+`, and the rest.
fn take_sign(text: &str) -> (Option<bool>, &str) {
    if let Some(rest) = text.strip_prefix('-') {
        (Some(true), rest)
    } else if let Some(rest) = text.strip_prefix('+') {
        (Some(false), rest)
    } else {
        (None, text)
    }
}

fn strip_currency_prefix(text: &str) -> &str {
    if let Some(rest) = text.strip_prefix(['₩', '￦']) {
        return rest;
    }
    match text.split_at_checked(3) {
        Some((mark, rest)) if mark.eq_ignore_ascii_case("krw") => rest,
        _ => text,
    }
}

fn strip_currency_suffix(text: &str) -> &str {
    if let Some(rest) = text.strip_suffix('원') {
        return rest;
    }
    let split = text
        .len()
        .checked_sub(3)
        .and_then(|cut| text.split_at_checked(cut));
    match split {
        Some((rest, mark)) if mark.eq_ignore_ascii_case("krw") => rest,
        _ => text,
    }
}

/// ASCII digits, at least one; if there are commas, a first group of one to three digits
/// and then groups of exactly three.
fn well_grouped(integer: &str) -> bool {
    let mut groups = integer.split(',');
    let first = groups.next().unwrap_or_default();
    let digits = |group: &str| group.bytes().all(|b| b.is_ascii_digit());
    if first.is_empty() || !digits(first) {
        return false;
    }
    if integer.contains(',') && first.len() > 3 {
        return false;
    }
    groups.all(|group| group.len() == 3 && digits(group))
}

impl Header {
    fn find(record: &Record, encoding: Decided) -> Result<Header, HeaderProblem> {
        let mut order_id = None;
        let mut amount = None;
        let mut date = None;
        for (index, bytes) in record.fields().enumerate() {
            let name = encoding.decode_lossy(bytes);
            let normal = normalize(&name);
            let column = || Column {
                index,
                name: name.trim().to_owned(),
            };
            if order_id.is_none() && ORDER_ID_HEADERS.contains(&normal.as_str()) {
                order_id = Some(column());
            } else if amount.is_none() && AMOUNT_HEADERS.contains(&normal.as_str()) {
                amount = Some(column());
            } else if date.is_none() && DATE_HEADERS.contains(&normal.as_str()) {
                date = Some(column());
            }
        }
        match (order_id, amount) {
            (Some(order_id), Some(amount)) => Ok(Header {
                line: record.line,
                order_id,
                amount,
                date,
            }),
            (None, None) => Err(HeaderProblem::NoOrderIdOrAmountColumn),
            (None, Some(_)) => Err(HeaderProblem::NoOrderIdColumn),
            (Some(_), None) => Err(HeaderProblem::NoAmountColumn),
        }
    }
}

/// The encoding as far as it is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decided {
    /// Everything so far was ASCII.
    Undecided,
    Utf8,
    Utf8WithBom,
    Cp949,
}

impl Decided {
    /// Decides on the first record with a byte outside ASCII.
    fn decide(&mut self, record: &Record) {
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

    fn encoding(self) -> Encoding {
        match self {
            Decided::Undecided | Decided::Utf8 => Encoding::Utf8,
            Decided::Utf8WithBom => Encoding::Utf8WithBom,
            Decided::Cp949 => Encoding::Cp949,
        }
    }

    /// Strictly: `None` when the bytes are not valid in the encoding.
    fn decode(self, bytes: &[u8]) -> Option<Cow<'_, str>> {
        match self {
            Decided::Cp949 => EUC_KR.decode_without_bom_handling_and_without_replacement(bytes),
            _ => std::str::from_utf8(bytes).ok().map(Cow::Borrowed),
        }
    }

    /// Invalid sequences become U+FFFD.
    fn decode_lossy(self, bytes: &[u8]) -> Cow<'_, str> {
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

/// One row's fields, in one buffer; reused from row to row.
#[derive(Debug, Default)]
struct Record {
    /// The physical line on which the row starts.
    line: u64,
    /// The fields' bytes, unquoted, one after the other.
    data: Vec<u8>,
    /// Where each field ends in `data`.
    ends: Vec<usize>,
    /// Bytes of the file read for this row.
    read: usize,
    /// Past [`MAX_ROW_BYTES`]: `data` and `ends` stopped growing.
    too_long: bool,
    /// The input ended inside a quoted field.
    unterminated: bool,
    /// A byte outside ASCII in a field.
    non_ascii: bool,
}

impl Record {
    fn clear(&mut self, line: u64) {
        self.line = line;
        self.data.clear();
        self.ends.clear();
        self.read = 0;
        self.too_long = false;
        self.unterminated = false;
        self.non_ascii = false;
    }

    /// Counts one byte of the file.
    fn consumed(&mut self) {
        self.read += 1;
        if self.read > MAX_ROW_BYTES {
            self.too_long = true;
        }
    }

    fn push(&mut self, byte: u8) {
        self.non_ascii |= !byte.is_ascii();
        if !self.too_long {
            self.data.push(byte);
        }
    }

    fn end_field(&mut self) {
        if !self.too_long {
            self.ends.push(self.data.len());
        }
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn field(&self, index: usize) -> Option<&[u8]> {
        let start = match index.checked_sub(1) {
            Some(previous) => *self.ends.get(previous)?,
            None => 0,
        };
        let end = *self.ends.get(index)?;
        self.data.get(start..end)
    }

    fn fields(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).filter_map(|index| self.field(index))
    }

    fn is_blank(&self) -> bool {
        self.data.iter().all(u8::is_ascii_whitespace)
    }
}

/// Where the reader is inside a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing of the current field read yet.
    FieldStart,
    Unquoted,
    Quoted,
    /// Just after the closing quote of a quoted field.
    AfterQuote,
}

/// RFC 4180 rows from bytes, counting physical lines.
struct CsvReader<R> {
    bytes: ByteReader<R>,
    /// The physical line of the next byte.
    line: u64,
}

impl<R: Read> CsvReader<R> {
    fn new(reader: R) -> Self {
        CsvReader {
            bytes: ByteReader::new(reader),
            line: 1,
        }
    }

    /// Skips a UTF-8 byte order mark at the very start; says whether there was one.
    fn strip_bom(&mut self) -> io::Result<bool> {
        self.bytes.skip_prefix(UTF8_BOM)
    }

    /// Reads the next row into `record`; `false` at the end of the input.
    fn read_record(&mut self, record: &mut Record) -> io::Result<bool> {
        if self.bytes.peek()?.is_none() {
            return Ok(false);
        }
        record.clear(self.line);
        let mut state = State::FieldStart;
        loop {
            let Some(byte) = self.bytes.next()? else {
                record.unterminated = state == State::Quoted;
                record.end_field();
                return Ok(true);
            };
            record.consumed();
            match (state, byte) {
                (State::Quoted, b'"') => {
                    if self.bytes.peek()? == Some(b'"') {
                        self.bytes.next()?;
                        record.consumed();
                        record.push(b'"');
                    } else {
                        state = State::AfterQuote;
                    }
                }
                (State::Quoted, b'\r' | b'\n') => {
                    record.push(byte);
                    if self.line_break(byte, record)? {
                        record.push(b'\n');
                    }
                }
                (State::Quoted, _) => record.push(byte),
                (_, b',') => {
                    record.end_field();
                    state = State::FieldStart;
                }
                (_, b'\r' | b'\n') => {
                    self.line_break(byte, record)?;
                    record.end_field();
                    return Ok(true);
                }
                (State::FieldStart, b'"') => state = State::Quoted,
                (_, _) => {
                    record.push(byte);
                    state = State::Unquoted;
                }
            }
        }
    }

    /// After a CR or LF: takes the LF of a CRLF and counts the line. Says whether it took
    /// an LF.
    fn line_break(&mut self, byte: u8, record: &mut Record) -> io::Result<bool> {
        self.line += 1;
        if byte == b'\r' && self.bytes.peek()? == Some(b'\n') {
            self.bytes.next()?;
            record.consumed();
            return Ok(true);
        }
        Ok(false)
    }
}

/// Bytes from a reader, a chunk at a time, with one byte of look-ahead.
struct ByteReader<R> {
    reader: R,
    buffer: Box<[u8]>,
    start: usize,
    end: usize,
}

impl<R: Read> ByteReader<R> {
    fn new(reader: R) -> Self {
        ByteReader {
            reader,
            buffer: vec![0; READ_CHUNK].into_boxed_slice(),
            start: 0,
            end: 0,
        }
    }

    /// Reads more after the bytes already held; `false` at the end of the input.
    fn fill(&mut self) -> io::Result<bool> {
        self.buffer.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        loop {
            let free = self.buffer.get_mut(self.end..).unwrap_or_default();
            match self.reader.read(free) {
                Ok(0) => return Ok(false),
                Ok(read) => {
                    self.end = (self.end + read).min(self.buffer.len());
                    return Ok(true);
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
    }

    fn peek(&mut self) -> io::Result<Option<u8>> {
        if self.start == self.end && !self.fill()? {
            return Ok(None);
        }
        Ok(self.buffer.get(self.start).copied())
    }

    fn next(&mut self) -> io::Result<Option<u8>> {
        let byte = self.peek()?;
        if byte.is_some() {
            self.start += 1;
        }
        Ok(byte)
    }

    /// At the start of the input only: skips `prefix` if the input begins with it.
    fn skip_prefix(&mut self, prefix: &[u8]) -> io::Result<bool> {
        while self.end - self.start < prefix.len() && self.fill()? {}
        let held = self.buffer.get(self.start..self.end).unwrap_or_default();
        if held.starts_with(prefix) {
            self.start += prefix.len();
            return Ok(true);
        }
        Ok(false)
    }
}
