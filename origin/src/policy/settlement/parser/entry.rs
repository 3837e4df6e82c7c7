//! What the parser says about each row after the header: a [`Row`] to reconcile, or a
//! [`Skipped`] row and its [`SkipReason`].

use std::fmt;

use chrono::NaiveDate;

use super::MAX_ROW_BYTES;

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
    /// with a date ([`super::parse_date`]); a row is never skipped for its date.
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
    /// A line before the header that is not blank: a report's title, the period it
    /// covers.
    BeforeHeader,
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
    /// A workbook's order id stored as a number of 16 digits or more, which Excel keeps
    /// only to 15 significant digits: the digits after the 15th are already lost.
    InexactNumber { field: Field },
    /// A workbook's cell holds a formula's error (`#N/A`, `#REF!`, …) instead of a value.
    CellError { field: Field, error: String },
}

impl SkipReason {
    /// The stable code, for counts and for the API.
    pub fn code(&self) -> &'static str {
        match self {
            SkipReason::BeforeHeader => "BEFORE_HEADER",
            SkipReason::BlankLine => "BLANK_LINE",
            SkipReason::SummaryRow => "SUMMARY_ROW",
            SkipReason::ShortRow { .. } => "SHORT_ROW",
            SkipReason::EmptyOrderId => "EMPTY_ORDER_ID",
            SkipReason::UnparsableAmount { .. } => "UNPARSABLE_AMOUNT",
            SkipReason::Undecodable { .. } => "UNDECODABLE",
            SkipReason::UnterminatedQuote => "UNTERMINATED_QUOTE",
            SkipReason::RowTooLong => "ROW_TOO_LONG",
            SkipReason::InexactNumber { .. } => "INEXACT_NUMBER",
            SkipReason::CellError { .. } => "CELL_ERROR",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::BeforeHeader => f.write_str("before the header"),
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
            SkipReason::InexactNumber { field } => write!(
                f,
                "the {field} is a number of more than 15 digits, already rounded by Excel; \
                 store it as text"
            ),
            SkipReason::CellError { field, error } => write!(f, "the {field} is the error {error}"),
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
