//! What calamine will hold for an `.xls`, found before it reads one. calamine reads every
//! sheet when it opens the workbook and builds each as a dense grid, so two cells far
//! apart in a file of a few kilobytes ask for billions of cells, and a DIMENSIONS record
//! can ask as much by itself. This walks the BIFF records the way calamine does — each
//! sheet the workbook lists (BOUNDSHEET), from where it says the sheet starts — and adds
//! up what the grids would take; and it tells an encrypted workbook by its parts.
//!
//! What calamine would do with the file is bounded as well as what it would hold: the
//! sheets listed are capped at [`MAX_SHEETS`], and the walks together may cover at most
//! [`WALK_FACTOR`] times the stream (sheets that overlap, repeat or run on without an
//! EOF would otherwise cost the square of the file). calamine walks a sheet again for
//! every entry that lists it, so every entry is charged its sheet's walk; the walk
//! itself is done here once per distinct offset. A DIMENSIONS record is read exactly as calamine reads it, and
//! one whose range runs backwards — which calamine would take for some 4·10^9 rows — is
//! refused. calamine gives every LABELSST cell a copy of its shared string, so the
//! strings' lengths are read from the SST (`sst.rs`) and the copies bounded (`copies.rs`).

use std::collections::HashMap;
use std::io::{Cursor, Read, Seek, SeekFrom, Write};

use super::copies::Copies;
use super::records::{records, u16_at, u32_at, Layout};
use super::{sst, WorkbookProblem, MAX_XLS_BYTES};
use crate::policy::settlement::parser::ParseError;

/// The most cells calamine may lay out over all of an `.xls`'s sheets: a full BIFF8
/// sheet of 65,536 rows is 30 columns of it (calamine keeps about 32 bytes a cell).
pub const MAX_XLS_CELLS: u64 = 2_000_000;

/// The most sheets an `.xls` may list (BOUNDSHEET records): far past any settlement
/// export, and what keeps calamine's walk of the sheets linear.
pub const MAX_SHEETS: usize = 1_000;

/// The sheets' walks together may cover at most this many times the stream's bytes.
const WALK_FACTOR: u64 = 4;

/// The most bytes calamine's copy of one shared string character takes: Excel's UTF-16
/// decoded into UTF-8.
const COPY_BYTES_PER_CHARACTER: u64 = 3;

/// BIFF record types.
const BOF: u16 = 0x0809;
const EOF: u16 = 0x000A;
const FILE_PASS: u16 = 0x002F;
const BOUND_SHEET: u16 = 0x0085;
const DIMENSIONS: u16 = 0x0200;
const MUL_RK: u16 = 0x00BD;
const LABEL_SST: u16 = 0x00FD;
/// Records that start with the row and column of one cell: FORMULA, NUMBER, LABEL,
/// RSTRING, BOOLERR, RK, LABELSST.
const CELLS: [u16; 7] = [0x0006, 0x0203, 0x0204, 0x00D6, 0x0205, 0x027E, LABEL_SST];

/// Refuses the `.xls` when it is encrypted, or its sheets would take more than
/// [`MAX_XLS_CELLS`], copy its shared strings past their bound (`copies.rs`) or cost
/// more than the bounds above; and empties its formulas'
/// expressions (`records.rs` says why), values kept, before calamine reads `workbook`.
pub(super) fn check(workbook: &mut Vec<u8>) -> Result<(), ParseError> {
    let corrupt = |error: std::io::Error| WorkbookProblem::Corrupt(error.to_string());
    let mut file = cfb::CompoundFile::open(Cursor::new(&mut *workbook)).map_err(corrupt)?;
    // What Excel writes for "Encrypt with password", for .xlsx and .xls alike.
    if file.exists("/EncryptedPackage") {
        return Err(WorkbookProblem::Encrypted.into());
    }
    let name = ["/Workbook", "/Book"]
        .into_iter()
        .find(|name| file.is_stream(name))
        .ok_or_else(|| WorkbookProblem::Corrupt("no Workbook stream".into()))?;
    let mut stream = Vec::new();
    file.open_stream(name)
        .map_err(corrupt)?
        .take(MAX_XLS_BYTES)
        .read_to_end(&mut stream)
        .map_err(corrupt)?;
    let layout = Layout::of(&stream).map_err(WorkbookProblem::Corrupt)?;
    let strings = sst::string_lengths(&stream);
    let mut copies = Copies::new(stream.len() as u64);
    let mut cells: u64 = 0;
    let mut walks: HashMap<usize, Walk> = HashMap::new();
    let mut sheets = 0usize;
    let mut budget = (stream.len() as u64).saturating_mul(WALK_FACTOR);
    for (kind, data) in records(&stream) {
        match kind {
            FILE_PASS if u16_at(data, 0).is_some_and(|scheme| scheme != 0) => {
                return Err(WorkbookProblem::Encrypted.into())
            }
            BOUND_SHEET => {
                sheets += 1;
                if sheets > MAX_SHEETS {
                    return Err(WorkbookProblem::Corrupt(format!(
                        "it lists more than {MAX_SHEETS} sheets"
                    ))
                    .into());
                }
                let start = u32_at(data, 0).unwrap_or_default() as usize;
                // calamine slices the stream there, and panics past its end.
                let Some(sheet) = stream.get(start..) else {
                    return Err(WorkbookProblem::Corrupt(format!(
                        "a sheet starts at byte {start}, past the workbook's {}",
                        stream.len()
                    ))
                    .into());
                };
                if !layout.starts_at(start) {
                    return Err(WorkbookProblem::Corrupt(format!(
                        "a sheet starts at byte {start}, inside a record"
                    ))
                    .into());
                }
                let walk = match walks.get(&start) {
                    Some(walk) => *walk,
                    None => {
                        let walk = walk_sheet(sheet, &strings, budget)?;
                        walks.insert(start, walk);
                        walk
                    }
                };
                // calamine walks the sheet again for this entry, whatever came before.
                budget = budget.checked_sub(walk.bytes).ok_or_else(walked_too_far)?;
                copies.charge(walk.copied)?;
                cells = cells.saturating_add(walk.cells);
                if cells > MAX_XLS_CELLS {
                    return Err(WorkbookProblem::TooLarge {
                        part: "sheets' cells".into(),
                        limit: MAX_XLS_CELLS,
                    }
                    .into());
                }
            }
            _ => {}
        }
    }
    if !layout.formulas.is_empty() {
        // A formula's value stays; its expression, `cce` bytes long, becomes empty.
        let mut writer = file.open_stream(name).map_err(corrupt)?;
        for at in layout.formulas {
            writer.seek(SeekFrom::Start(at as u64)).map_err(corrupt)?;
            writer.write_all(&[0, 0]).map_err(corrupt)?;
        }
        writer.flush().map_err(corrupt)?;
    }
    Ok(())
}

/// What calamine's walk of one sheet meets: the cells the sheet asks for, the bytes
/// walked to its EOF (or the stream's end), and the bytes its cells' copies of shared
/// strings take at most.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Walk {
    cells: u64,
    bytes: u64,
    copied: u64,
}

fn walked_too_far() -> WorkbookProblem {
    WorkbookProblem::Corrupt(format!(
        "its sheets overlap or repeat: reading them would walk more than {WALK_FACTOR} times the file"
    ))
}

/// Walks a sheet as calamine does, up to `budget` bytes. Its cells are the grid spanning
/// them, or what its DIMENSIONS reserves, whichever is more; cells of nested substreams
/// (charts) count too, which can only overstate it; so do their LABELSSTs' copies of
/// `strings` (each string's characters).
fn walk_sheet(sheet: &[u8], strings: &[u16], budget: u64) -> Result<Walk, WorkbookProblem> {
    let mut span = Span::default();
    let mut reserved: u64 = 0;
    let mut copied: u64 = 0;
    let mut depth = 0usize;
    let mut bytes: u64 = 0;
    for (kind, data) in records(sheet) {
        bytes += 4 + data.len() as u64;
        if bytes > budget {
            return Err(walked_too_far());
        }
        match kind {
            BOF => depth += 1,
            EOF => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            DIMENSIONS => reserved = reserved.max(dimensions(data)?),
            MUL_RK => {
                if let (Some(row), Some(first), Some(last)) = (
                    u16_at(data, 0),
                    u16_at(data, 2),
                    data.len().checked_sub(2).and_then(|at| u16_at(data, at)),
                ) {
                    span.add(row, first);
                    span.add(row, last);
                }
            }
            kind if CELLS.contains(&kind) => {
                if let (Some(row), Some(column)) = (u16_at(data, 0), u16_at(data, 2)) {
                    span.add(row, column);
                }
                // calamine copies the string whose index is at bytes 6–9, when it has one.
                let string = u32_at(data, 6).and_then(|at| strings.get(at as usize));
                if let Some(characters) = string.filter(|_| kind == LABEL_SST) {
                    copied =
                        copied.saturating_add(u64::from(*characters) * COPY_BYTES_PER_CHARACTER);
                }
            }
            _ => {}
        }
    }
    Ok(Walk {
        cells: span.cells().max(reserved),
        bytes,
        copied,
    })
}

/// The cells a DIMENSIONS record makes calamine reserve (BIFF5's 16-bit rows or BIFF8's
/// 32-bit ones), computed as calamine computes them (`parse_dimensions`, then `end -
/// start + 1` in `u32`); a range that runs backwards, which a release build of calamine
/// would wrap into some 4·10^9 rows, is refused. A record of another length calamine
/// refuses itself: nothing reserved.
fn dimensions(data: &[u8]) -> Result<u64, WorkbookProblem> {
    let read = |at: usize| u16_at(data, at).map(u32::from);
    let (first_row, last_row, first_column, last_column) = match data.len() {
        10 => (read(0), read(2), read(4), read(6)),
        14 | 16 => (u32_at(data, 0), u32_at(data, 4), read(8), read(10)),
        _ => return Ok(0),
    };
    let (Some(first_row), Some(last_row), Some(first_column), Some(last_column)) =
        (first_row, last_row, first_column, last_column)
    else {
        return Ok(0);
    };
    // calamine starts the columns at 0 when the first is out of range.
    let first_column = if first_column > 0xFF || last_column < first_column {
        0
    } else {
        first_column
    };
    let start = (first_row, first_column);
    let end = if last_row >= 1 && last_column >= 1 {
        (last_row - 1, last_column - 1)
    } else {
        start
    };
    let span = |first: u32, last: u32| last.checked_sub(first)?.checked_add(1);
    match (span(start.0, end.0), span(start.1, end.1)) {
        (Some(rows), Some(columns)) => Ok(u64::from(rows) * u64::from(columns)),
        _ => Err(WorkbookProblem::Corrupt(format!(
            "a sheet's DIMENSIONS runs backwards (rows {}–{}, columns {}–{})",
            start.0, end.0, start.1, end.1
        ))),
    }
}

/// The rows and columns a sheet's cells span.
#[derive(Debug, Default)]
struct Span {
    rows: Option<(u16, u16)>,
    columns: Option<(u16, u16)>,
}

impl Span {
    fn add(&mut self, row: u16, column: u16) {
        let widen = |span: Option<(u16, u16)>, at: u16| match span {
            Some((low, high)) => Some((low.min(at), high.max(at))),
            None => Some((at, at)),
        };
        self.rows = widen(self.rows, row);
        self.columns = widen(self.columns, column);
    }

    fn cells(&self) -> u64 {
        match (self.rows, self.columns) {
            (Some((top, bottom)), Some((left, right))) => {
                (u64::from(bottom - top) + 1) * (u64::from(right - left) + 1)
            }
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u16, data: &[u8]) -> Vec<u8> {
        let mut bytes = kind.to_le_bytes().to_vec();
        bytes.extend((data.len() as u16).to_le_bytes());
        bytes.extend(data);
        bytes
    }

    fn number(row: u16, column: u16) -> Vec<u8> {
        let mut data = row.to_le_bytes().to_vec();
        data.extend(column.to_le_bytes());
        data.extend([0; 10]);
        record(0x0203, &data)
    }

    #[test]
    fn a_sheet_asks_for_the_grid_its_cells_span_or_what_it_reserves() {
        let sheet = [
            record(BOF, &[0; 16]),
            number(2, 1),
            number(9, 4),
            record(EOF, &[]),
            number(60_000, 200),
        ]
        .concat();
        assert_eq!(
            walk_sheet(&sheet, &[], u64::MAX).map(|walk| walk.cells),
            Ok(8 * 4),
            "rows 2–9, columns 1–4; after EOF nothing"
        );
        let mut dimensions = 0u32.to_le_bytes().to_vec();
        dimensions.extend(4_000_000_000u32.to_le_bytes());
        dimensions.extend([0, 0, 0, 1, 0, 0]);
        let reserving = [
            record(BOF, &[0; 16]),
            record(DIMENSIONS, &dimensions),
            record(EOF, &[]),
        ]
        .concat();
        // Rows 0–3,999,999,999 and columns 0–255, as calamine counts them.
        assert_eq!(
            walk_sheet(&reserving, &[], u64::MAX).map(|walk| walk.cells),
            Ok(4_000_000_000 * 256)
        );
    }
}
