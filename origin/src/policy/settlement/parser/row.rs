//! One row as the rules see it, whatever it was read from — a CSV record or a
//! workbook's row — and the rules themselves: where the header is, and what each row
//! after it is.

use std::borrow::Cow;
use std::collections::VecDeque;

use chrono::{NaiveDate, NaiveDateTime};

use super::cells::{excel_number, ExcelNumber};
use super::entry::{Entry, Field, Row, SkipReason, Skipped};
use super::header::{Header, HeaderProblem};
use super::{normalize, parse_amount, parse_date, ParseError, SUMMARY_LABELS};
use super::{MAX_LEADING_ROWS, SHOWN_AMOUNT_CHARS};

/// A cell's value, read strictly.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Cell<'a> {
    /// Text: a CSV field in the file's encoding, a workbook's string (or an empty cell).
    Text(Cow<'a, str>),
    /// A CSV field that is not valid in the file's encoding.
    Undecodable,
    /// A workbook's whole number.
    Integer(i64),
    /// A workbook's number.
    Number(f64),
    /// A workbook's date (and time).
    Date(NaiveDateTime),
    /// A workbook's `TRUE` or `FALSE`.
    Bool(bool),
    /// A workbook's formula error, as Excel shows it (`#N/A`).
    Error(String),
}

/// The row read last: its cells, where it starts, and what is wrong with it as a whole.
pub(super) trait RowView {
    /// The line (CSV) or row (workbook) on which it starts, 1-based.
    fn line(&self) -> u64;
    /// How many cells it has, up to its last one.
    fn width(&self) -> usize;
    /// Unreadable as a whole: a quote never closed, or too long.
    fn damage(&self) -> Option<SkipReason>;
    /// Every cell empty or white space.
    fn is_blank(&self) -> bool;
    /// The cell at `index` (0-based), strictly.
    fn cell(&self, index: usize) -> Option<Cell<'_>>;
    /// The cell at `index` as text, leniently: for header names and summary labels.
    fn text(&self, index: usize) -> Option<Cow<'_, str>>;
}

/// Rows one after the other.
pub(super) trait Rows {
    type Row: RowView;
    /// Reads the next row; `false` at the end.
    fn advance(&mut self) -> Result<bool, ParseError>;
    /// The row read last.
    fn row(&self) -> &Self::Row;
}

/// The header, and the rows before it, each as it is reported: blank lines as
/// `BLANK_LINE`, anything else as `BEFORE_HEADER`.
#[derive(Debug)]
pub(super) struct Found {
    pub(super) header: Header,
    pub(super) before: VecDeque<Skipped>,
}

/// Reads rows until the header: the first row that names an order id column and an
/// amount column. At most [`MAX_LEADING_ROWS`] rows may come before it. When there is
/// none, the file is refused with the problem of the first row that names either column
/// (the header it was meant to be), or else of the first row that is not blank; a quote
/// never closed or a row too long before the header refuses the file as well.
pub(super) fn find_header(rows: &mut impl Rows) -> Result<Found, ParseError> {
    let mut before = VecDeque::new();
    let mut nearest: Option<HeaderProblem> = None;
    loop {
        if !rows.advance()? {
            return Err(nearest.unwrap_or(HeaderProblem::NoHeader).into());
        }
        let row = rows.row();
        match row.damage() {
            Some(SkipReason::UnterminatedQuote) => {
                return Err(HeaderProblem::UnterminatedQuote.into())
            }
            Some(_) => return Err(HeaderProblem::TooLong.into()),
            None => {}
        }
        let reason = if row.is_blank() {
            SkipReason::BlankLine
        } else {
            match Header::find(row) {
                Ok(header) => return Ok(Found { header, before }),
                Err(problem) => {
                    let names_one = problem != HeaderProblem::NoOrderIdOrAmountColumn;
                    if nearest.is_none()
                        || (names_one && nearest == Some(HeaderProblem::NoOrderIdOrAmountColumn))
                    {
                        nearest = Some(problem);
                    }
                    SkipReason::BeforeHeader
                }
            }
        };
        if before.len() == MAX_LEADING_ROWS {
            return Err(nearest.unwrap_or(HeaderProblem::NoHeader).into());
        }
        before.push_back(Skipped {
            line: row.line(),
            reason,
        });
    }
}

/// What a row after the header is.
pub(super) fn classify(row: &impl RowView, header: &Header) -> Entry {
    match read_row(row, header) {
        Ok((order_id, amount)) => Entry::Row(Row {
            line: row.line(),
            order_id,
            amount,
            date: header
                .date
                .as_ref()
                .and_then(|column| read_date(row, column.index)),
        }),
        Err(reason) => Entry::Skipped(Skipped {
            line: row.line(),
            reason,
        }),
    }
}

/// The checks of the parser's documentation, in its order.
fn read_row(row: &impl RowView, header: &Header) -> Result<(String, i64), SkipReason> {
    if let Some(damage) = row.damage() {
        return Err(damage);
    }
    if row.is_blank() {
        return Err(SkipReason::BlankLine);
    }
    let order_index = header.order_id.index;
    let amount_index = header.amount.index;
    let is_label = |index| {
        row.text(index)
            .is_some_and(|text| SUMMARY_LABELS.contains(&normalize(&text).as_str()))
    };
    if is_label(0) || is_label(order_index) {
        return Err(SkipReason::SummaryRow);
    }
    let (Some(order_cell), Some(amount_cell)) = (row.cell(order_index), row.cell(amount_index))
    else {
        return Err(SkipReason::ShortRow {
            fields: row.width(),
            needed: order_index.max(amount_index) + 1,
        });
    };
    let undecodable = |cell: &Cell, field| {
        if *cell == Cell::Undecodable {
            Err(SkipReason::Undecodable { field })
        } else {
            Ok(())
        }
    };
    undecodable(&order_cell, Field::OrderId)?;
    undecodable(&amount_cell, Field::Amount)?;
    let order_id = order_id(order_cell)?;
    let amount = amount(amount_cell)?;
    Ok((order_id, amount))
}

/// The order id a cell holds, trimmed. A number is written as Excel shows it in the
/// General format, without exponent: whole numbers below 10^15 exactly; from 10^15 on,
/// Excel has already rounded away the digits after the 15th, so the row is skipped.
fn order_id(cell: Cell) -> Result<String, SkipReason> {
    let text = match cell {
        Cell::Text(text) => text.trim().to_owned(),
        Cell::Integer(value) => value.to_string(),
        Cell::Number(value) => match excel_number(value) {
            ExcelNumber::Whole(value) => value.to_string(),
            ExcelNumber::Fraction(value) => value.to_string(),
            ExcelNumber::Inexact => {
                return Err(SkipReason::InexactNumber {
                    field: Field::OrderId,
                })
            }
        },
        Cell::Date(date) => date.to_string(),
        Cell::Bool(value) => if value { "TRUE" } else { "FALSE" }.to_owned(),
        Cell::Error(error) => {
            return Err(SkipReason::CellError {
                field: Field::OrderId,
                error,
            })
        }
        Cell::Undecodable => {
            return Err(SkipReason::Undecodable {
                field: Field::OrderId,
            })
        }
    };
    if text.is_empty() {
        return Err(SkipReason::EmptyOrderId);
    }
    Ok(text)
}

/// Whole won: text by [`parse_amount`]; a number as Excel shows it (15 significant
/// digits), when that is whole and exact; nothing else.
fn amount(cell: Cell) -> Result<i64, SkipReason> {
    let unparsable = |value: &str| SkipReason::UnparsableAmount {
        value: value.trim().chars().take(SHOWN_AMOUNT_CHARS).collect(),
    };
    match cell {
        Cell::Text(text) => parse_amount(&text).ok_or_else(|| unparsable(&text)),
        Cell::Integer(value) => Ok(value),
        Cell::Number(value) => match excel_number(value) {
            ExcelNumber::Whole(whole) => Ok(whole),
            ExcelNumber::Fraction(_) | ExcelNumber::Inexact => Err(unparsable(&value.to_string())),
        },
        Cell::Date(date) => Err(unparsable(&date.to_string())),
        Cell::Bool(value) => Err(unparsable(if value { "TRUE" } else { "FALSE" })),
        Cell::Error(error) => Err(SkipReason::CellError {
            field: Field::Amount,
            error,
        }),
        Cell::Undecodable => Err(SkipReason::Undecodable {
            field: Field::Amount,
        }),
    }
}

/// A date cell's day; text by [`parse_date`]; anything else is no date.
fn read_date(row: &impl RowView, index: usize) -> Option<NaiveDate> {
    match row.cell(index)? {
        Cell::Date(date) => Some(date.date()),
        Cell::Text(text) => parse_date(&text),
        Cell::Undecodable => row.text(index).and_then(|text| parse_date(&text)),
        _ => None,
    }
}
