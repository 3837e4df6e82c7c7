//! Excel workbooks, as PGs' consoles export them: `.xlsx` (Office Open XML) and `.xls`
//! (BIFF8), read with calamine and told apart from CSV by their first bytes.
//!
//! A thread of its own reads the workbook — it owns calamine's reader, which borrows
//! the workbook — and hands the rows over one at a time through a short channel, so
//! an `.xlsx` sheet is streamed from its XML and never held whole. The header is
//! looked for sheet by sheet (or only in the sheet asked for), with the same rule as a
//! CSV's; the first sheet that has one is read. Dropping the rows stops the thread at
//! its next row.
//!
//! **Memory is bounded before calamine reads anything.** An `.xlsx` is a ZIP archive:
//! its main part must be `xl/workbook.xml` (where calamine then looks for the parts it
//! holds in memory), and each part is first unpacked into nothing, counting its real
//! size (never trusting the sizes the archive declares): the workbook is refused as
//! `UNREADABLE_WORKBOOK` when a part outside `xl/worksheets/` (shared strings, styles,
//! the workbook) passes [`MAX_PART_BYTES`] or everything together passes
//! [`MAX_UNPACKED_BYTES`]; a sheet's rows past Excel's last (1,048,576) are refused as
//! damaged. An `.xls` is read whole by calamine, every sheet as a dense grid: it may be
//! at most [`MAX_XLS_BYTES`], and its sheets at most `biff::MAX_XLS_CELLS` cells in
//! all (`biff.rs` counts them first). A cell showing a shared string gets a copy of it
//! (calamine's for an `.xls`, ours for an `.xlsx`): the copies may take at most a few
//! times the workbook's bytes (`copies.rs`), counted before they are made.
//!
//! **The reader's end is said, never guessed**: it ends with an explicit last message,
//! a panic inside calamine is caught and reported as a damaged workbook, and a reader
//! gone without a word is an error too — never a short file read as whole.

mod biff;
mod copies;
mod package;
mod records;
mod rows;
mod sst;
#[cfg(test)]
mod tests;

use std::io::{Cursor, Read, Seek, SeekFrom};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use calamine::{Reader, Xls, XlsError, Xlsx, XlsxError};

use super::row::{find_header, Found, Rows};
use super::{HeaderProblem, ParseError};
use copies::Copies;
pub(super) use rows::SheetRow;
use rows::{Gapless, HeldRows, RangeRows, XlsxRows};

/// The most one part of an `.xlsx` that calamine holds in memory may unpack to.
pub const MAX_PART_BYTES: u64 = 64 * 1024 * 1024;

/// The most all the parts of an `.xlsx` together may unpack to.
pub const MAX_UNPACKED_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// The largest `.xls` read.
pub const MAX_XLS_BYTES: u64 = 32 * 1024 * 1024;

/// Rows handed over ahead of the reader.
const ROWS_AHEAD: usize = 256;

/// Which kind of workbook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Xlsx,
    Xls,
}

impl Kind {
    /// By the first bytes: a ZIP archive, or an OLE compound file.
    pub(super) fn sniff(head: &[u8]) -> Option<Kind> {
        const ZIP: &[u8] = b"PK\x03\x04";
        const EMPTY_ZIP: &[u8] = b"PK\x05\x06";
        const COMPOUND_FILE: &[u8] = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";
        if head.starts_with(ZIP) || head.starts_with(EMPTY_ZIP) {
            Some(Kind::Xlsx)
        } else if head.starts_with(COMPOUND_FILE) {
            Some(Kind::Xls)
        } else {
            None
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Xlsx => "XLSX",
            Kind::Xls => "XLS",
        }
    }
}

/// Why a workbook cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkbookProblem {
    #[error("the workbook is encrypted with a password: save it from Excel without one")]
    Encrypted,
    #[error("the workbook is damaged: {0}")]
    Corrupt(String),
    #[error("a ZIP archive, but not an Excel workbook (its main part is not xl/workbook.xml)")]
    NotExcel,
    #[error("the workbook's {part} unpacks to more than {limit} bytes")]
    TooLarge { part: String, limit: u64 },
    #[error("the workbook's cells repeat its shared strings past its size: the cells' copies of them would take more than {limit} bytes")]
    SharedStringCopies { limit: u64 },
}

impl From<WorkbookProblem> for ParseError {
    fn from(reason: WorkbookProblem) -> Self {
        ParseError::UnreadableWorkbook { reason }
    }
}

/// What the reading thread hands over: the header, the rows, then the end or why not.
enum Message {
    Found { found: Found, sheet: String },
    Row(SheetRow),
    End,
    Failed(ParseError),
}

/// The reader went without saying it was done.
fn vanished() -> ParseError {
    WorkbookProblem::Corrupt("the workbook's reader stopped part way".into()).into()
}

/// A workbook's rows, from the thread that reads it.
pub(super) struct ChannelRows {
    rows: Receiver<Message>,
    row: SheetRow,
}

impl Rows for ChannelRows {
    type Row = SheetRow;

    fn advance(&mut self) -> Result<bool, ParseError> {
        match self.rows.recv() {
            Ok(Message::Row(row)) => {
                self.row = row;
                Ok(true)
            }
            Ok(Message::End) => Ok(false),
            Ok(Message::Failed(error)) => Err(error),
            Ok(Message::Found { .. }) | Err(_) => Err(vanished()),
        }
    }

    fn row(&self) -> &SheetRow {
        &self.row
    }
}

/// Opens the workbook and finds its header: in `sheet`, or in the first sheet that
/// has one. Answers the rows after it, the header, and the sheet's name.
pub(super) fn open<R>(
    reader: R,
    kind: Kind,
    sheet: Option<&str>,
) -> Result<(ChannelRows, Found, String), ParseError>
where
    R: Read + Seek + Send + 'static,
{
    let (sender, rows) = sync_channel(ROWS_AHEAD);
    let sheet = sheet.map(str::to_owned);
    std::thread::Builder::new()
        .name("settlement-workbook".into())
        .spawn(move || {
            let read = catch_unwind(AssertUnwindSafe(|| match kind {
                Kind::Xlsx => read_xlsx(reader, sheet, &sender),
                Kind::Xls => read_xls(reader, sheet, &sender),
            }));
            let last = match read {
                Ok(Ok(())) => Message::End,
                Ok(Err(error)) => Message::Failed(error),
                Err(panic) => Message::Failed(
                    WorkbookProblem::Corrupt(format!(
                        "the workbook's reader failed: {}",
                        panic_text(panic.as_ref())
                    ))
                    .into(),
                ),
            };
            // The other side may have gone: then nobody is left to tell.
            let _ = sender.send(last);
        })?;
    match rows.recv() {
        Ok(Message::Found { found, sheet }) => Ok((
            ChannelRows {
                rows,
                row: SheetRow::default(),
            },
            found,
            sheet,
        )),
        Ok(Message::Failed(error)) => Err(error),
        Ok(Message::Row(_) | Message::End) | Err(_) => Err(vanished()),
    }
}

/// What a panic said, when it said it in words.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic")
}

fn read_xlsx<R: Read + Seek>(
    mut reader: R,
    sheet: Option<String>,
    sender: &SyncSender<Message>,
) -> Result<(), ParseError> {
    let unpacked = package::check(&mut reader)?;
    let mut copies = Copies::new(unpacked);
    let mut workbook = Xlsx::new(reader).map_err(xlsx_problem)?;
    let mut first_problem = None;
    for name in chosen_sheets(workbook.sheet_names(), sheet)? {
        let cells = workbook
            .worksheet_cells_reader(&name)
            .map_err(xlsx_problem)?;
        let rows = Gapless::new(XlsxRows::new(cells, &mut copies));
        if offer_sheet(rows, name, sender, &mut first_problem)? {
            return Ok(());
        }
    }
    Err(first_problem.unwrap_or(HeaderProblem::NoHeader).into())
}

fn read_xls<R: Read + Seek>(
    mut reader: R,
    sheet: Option<String>,
    sender: &SyncSender<Message>,
) -> Result<(), ParseError> {
    let length = reader.seek(SeekFrom::End(0))?;
    if length > MAX_XLS_BYTES {
        return Err(WorkbookProblem::TooLarge {
            part: ".xls file".into(),
            limit: MAX_XLS_BYTES,
        }
        .into());
    }
    reader.seek(SeekFrom::Start(0))?;
    let mut file = Vec::new();
    reader.take(MAX_XLS_BYTES).read_to_end(&mut file)?;
    biff::check(&mut file)?;
    let mut workbook = Xls::new(Cursor::new(file)).map_err(xls_problem)?;
    let mut first_problem = None;
    for name in chosen_sheets(workbook.sheet_names(), sheet)? {
        let range = workbook.worksheet_range(&name).map_err(xls_problem)?;
        let rows = Gapless::new(RangeRows::new(range));
        if offer_sheet(rows, name, sender, &mut first_problem)? {
            return Ok(());
        }
    }
    Err(first_problem.unwrap_or(HeaderProblem::NoHeader).into())
}

/// The sheet asked for, or all of them in order.
fn chosen_sheets(sheets: Vec<String>, asked: Option<String>) -> Result<Vec<String>, ParseError> {
    match asked {
        None => Ok(sheets),
        Some(name) if sheets.contains(&name) => Ok(vec![name]),
        Some(name) => Err(ParseError::NoSuchSheet { name, sheets }),
    }
}

/// Looks for the sheet's header: when it has one, hands over the header and every row
/// after it (stopping quietly when the other side has gone) and answers `true`; when it
/// has none, keeps the first such problem and answers `false`.
fn offer_sheet<H: HeldRows>(
    mut rows: Gapless<H>,
    sheet: String,
    sender: &SyncSender<Message>,
    first_problem: &mut Option<HeaderProblem>,
) -> Result<bool, ParseError> {
    let found = match find_header(&mut rows) {
        Ok(found) => found,
        Err(ParseError::NotASettlementFile { reason }) => {
            first_problem.get_or_insert(reason);
            return Ok(false);
        }
        Err(error) => return Err(error),
    };
    if sender.send(Message::Found { found, sheet }).is_err() {
        return Ok(true);
    }
    while rows.advance()? {
        if sender.send(Message::Row(rows.take_row())).is_err() {
            return Ok(true);
        }
    }
    Ok(true)
}

fn xlsx_problem(error: XlsxError) -> ParseError {
    match error {
        XlsxError::Password => WorkbookProblem::Encrypted.into(),
        other => WorkbookProblem::Corrupt(other.to_string()).into(),
    }
}

fn xls_problem(error: XlsError) -> ParseError {
    match error {
        XlsError::Password => WorkbookProblem::Encrypted.into(),
        other => WorkbookProblem::Corrupt(other.to_string()).into(),
    }
}
