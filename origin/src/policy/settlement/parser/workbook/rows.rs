//! A sheet's rows as the rules read them: every row number from 1 on, the ones the
//! workbook does not hold as blank rows, each cell's value as Excel stores it.

use std::borrow::Cow;

use calamine::{Cell as SheetCell, Data, DataRef, Range, XlsxCellReader, XlsxError};

use super::super::row::{Cell, RowView, Rows};
use super::super::{ParseError, SkipReason, MAX_ROW_BYTES};
use super::copies::Copies;
use super::WorkbookProblem;

/// Excel's last row, 1,048,576: a row numbered past it is a damaged sheet.
const MAX_ROWS: u64 = 1_048_576;

/// What a cell of a row costs to hold, written or not, counted against
/// [`MAX_ROW_BYTES`]: a row reaching far to the right is long however empty.
const CELL_BYTES: usize = std::mem::size_of::<Data>();

/// One row of a sheet.
#[derive(Debug, Default, Clone, PartialEq)]
pub(in super::super) struct SheetRow {
    /// The row number as Excel shows it.
    pub(super) line: u64,
    /// The cells from column A on; a cell not written is [`Data::Empty`].
    pub(super) cells: Vec<Data>,
    /// Past [`MAX_ROW_BYTES`] (its cells and their text): no more were kept.
    pub(super) too_long: bool,
    /// Bytes held for the row: its cells and their text.
    held_bytes: usize,
}

impl SheetRow {
    fn clear(&mut self, line: u64) {
        self.line = line;
        self.cells.clear();
        self.too_long = false;
        self.held_bytes = 0;
    }

    /// Puts a written cell in its column; an empty one (a style without a value) is
    /// what every cell not written is already.
    fn put(&mut self, column: usize, value: Data) {
        if value == Data::Empty || self.too_long {
            return;
        }
        let text = match &value {
            Data::String(text) | Data::DateTimeIso(text) | Data::DurationIso(text) => text.len(),
            _ => 0,
        };
        let new_cells = (column + 1).saturating_sub(self.cells.len());
        self.held_bytes = self
            .held_bytes
            .saturating_add(text)
            .saturating_add(new_cells.saturating_mul(CELL_BYTES));
        if self.held_bytes > MAX_ROW_BYTES {
            self.too_long = true;
            self.cells.clear();
            return;
        }
        if new_cells > 0 {
            self.cells.resize(column + 1, Data::Empty);
        }
        if let Some(cell) = self.cells.get_mut(column) {
            *cell = value;
        }
    }
}

impl RowView for SheetRow {
    fn line(&self) -> u64 {
        self.line
    }

    fn width(&self) -> usize {
        self.cells.len()
    }

    fn damage(&self) -> Option<SkipReason> {
        self.too_long.then_some(SkipReason::RowTooLong)
    }

    /// As a CSV's: every cell empty or ASCII white space.
    fn is_blank(&self) -> bool {
        self.cells.iter().all(|cell| match cell {
            Data::Empty => true,
            Data::String(text) => text.bytes().all(|byte| byte.is_ascii_whitespace()),
            _ => false,
        })
    }

    /// A cell the row does not reach is empty, as a spreadsheet shows it: a workbook's
    /// row is never short.
    fn cell(&self, index: usize) -> Option<Cell<'_>> {
        let Some(data) = self.cells.get(index) else {
            return Some(Cell::Text(Cow::Borrowed("")));
        };
        Some(match data {
            Data::Empty => Cell::Text(Cow::Borrowed("")),
            Data::String(text) | Data::DateTimeIso(text) | Data::DurationIso(text) => {
                Cell::Text(Cow::Borrowed(text))
            }
            Data::Int(value) => Cell::Integer(*value),
            Data::Float(value) => Cell::Number(*value),
            Data::Bool(value) => Cell::Bool(*value),
            Data::DateTime(date) => match date.as_datetime().filter(|_| date.is_datetime()) {
                Some(date) => Cell::Date(date),
                None => Cell::Number(date.as_f64()),
            },
            Data::Error(error) => Cell::Error(error.to_string()),
        })
    }

    fn text(&self, index: usize) -> Option<Cow<'_, str>> {
        Some(match self.cells.get(index)? {
            Data::String(text) => Cow::Borrowed(text.as_str()),
            other => Cow::Owned(other.to_string()),
        })
    }
}

/// The rows a sheet holds, in order; [`Gapless`] fills in the others.
pub(super) trait HeldRows {
    /// The next row the sheet holds, into `row`; `false` at the end.
    fn next_held(&mut self, row: &mut SheetRow) -> Result<bool, ParseError>;
}

/// An `.xlsx` sheet, streamed cell by cell from its XML; its cells' copies of shared
/// strings counted against the workbook's bound.
pub(super) struct XlsxRows<'a, 'c, R: std::io::Read + std::io::Seek> {
    cells: XlsxCellReader<'a, R>,
    copies: &'c mut Copies,
    /// A cell of the next row, read ahead.
    ahead: Option<SheetCell<DataRef<'a>>>,
    /// The sheet's last cell was read (calamine must not be asked again).
    ended: bool,
}

impl<'a, 'c, R: std::io::Read + std::io::Seek> XlsxRows<'a, 'c, R> {
    pub(super) fn new(cells: XlsxCellReader<'a, R>, copies: &'c mut Copies) -> Self {
        XlsxRows {
            cells,
            copies,
            ahead: None,
            ended: false,
        }
    }

    fn next_cell(&mut self) -> Result<Option<SheetCell<DataRef<'a>>>, ParseError> {
        if let Some(cell) = self.ahead.take() {
            return Ok(Some(cell));
        }
        if self.ended {
            return Ok(None);
        }
        let cell = self.cells.next_cell().map_err(corrupt)?;
        self.ended = cell.is_none();
        Ok(cell)
    }
}

impl<R: std::io::Read + std::io::Seek> HeldRows for XlsxRows<'_, '_, R> {
    fn next_held(&mut self, row: &mut SheetRow) -> Result<bool, ParseError> {
        let Some(first) = self.next_cell()? else {
            return Ok(false);
        };
        let (index, _) = first.get_position();
        let line = u64::from(index) + 1;
        if line > MAX_ROWS {
            return Err(WorkbookProblem::Corrupt(format!(
                "a row numbered {line}, past Excel's last ({MAX_ROWS})"
            ))
            .into());
        }
        row.clear(line);
        let mut cell = first;
        loop {
            let (_, column) = cell.get_position();
            let value = cell.get_value();
            if let DataRef::SharedString(text) = value {
                // calamine lends the string; the row's value is a copy of it.
                self.copies.charge(text.len() as u64)?;
            }
            row.put(column as usize, Data::from(value.clone()));
            match self.next_cell()? {
                Some(next) if next.get_position().0 == index => cell = next,
                next => {
                    self.ahead = next;
                    return Ok(true);
                }
            }
        }
    }
}

fn corrupt(error: XlsxError) -> ParseError {
    WorkbookProblem::Corrupt(error.to_string()).into()
}

/// An `.xls` sheet, read whole by calamine (a BIFF sheet holds at most 65,536 rows).
pub(super) struct RangeRows {
    range: Range<Data>,
    /// The next row of the range, from 0.
    next: usize,
}

impl RangeRows {
    pub(super) fn new(range: Range<Data>) -> Self {
        RangeRows { range, next: 0 }
    }
}

impl HeldRows for RangeRows {
    fn next_held(&mut self, row: &mut SheetRow) -> Result<bool, ParseError> {
        let Some((first_row, first_column)) = self.range.start() else {
            return Ok(false);
        };
        if self.next >= self.range.height() {
            return Ok(false);
        }
        row.clear(u64::from(first_row) + self.next as u64 + 1);
        for offset in 0..self.range.width() {
            if let Some(value) = self.range.get((self.next, offset)) {
                row.put(first_column as usize + offset, value.clone());
            }
        }
        self.next += 1;
        Ok(true)
    }
}

/// Every row number from 1 on: the rows the sheet holds, and a blank row for each
/// number it skips (as a CSV has a blank line), so rows are numbered and reported as
/// Excel shows them.
pub(super) struct Gapless<H> {
    held: H,
    row: SheetRow,
    ahead: SheetRow,
    has_ahead: bool,
    next_line: u64,
}

impl<H: HeldRows> Gapless<H> {
    pub(super) fn new(held: H) -> Self {
        Gapless {
            held,
            row: SheetRow::default(),
            ahead: SheetRow::default(),
            has_ahead: false,
            next_line: 1,
        }
    }

    /// The row read last, taken out.
    pub(super) fn take_row(&mut self) -> SheetRow {
        std::mem::take(&mut self.row)
    }
}

impl<H: HeldRows> Rows for Gapless<H> {
    type Row = SheetRow;

    fn row(&self) -> &SheetRow {
        &self.row
    }

    fn advance(&mut self) -> Result<bool, ParseError> {
        if !self.has_ahead {
            self.has_ahead = self.held.next_held(&mut self.ahead)?;
            if !self.has_ahead {
                return Ok(false);
            }
        }
        if self.ahead.line > self.next_line {
            self.row.clear(self.next_line);
        } else {
            std::mem::swap(&mut self.row, &mut self.ahead);
            self.has_ahead = false;
        }
        self.next_line = self.row.line + 1;
        Ok(true)
    }
}
