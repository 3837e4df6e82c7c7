//! Workbooks built in the test (rust_xlsxwriter; `.xls` by hand in `xls.rs`), read as
//! their CSV twins are, and workbooks that cannot be read.

mod copies;
mod refused;
mod xls;

use std::io::Cursor;

use rust_xlsxwriter::{ExcelDateTime, Format as CellFormat, Formula, Workbook, Worksheet};

use super::super::{open, Entry, Format, ParseError, Row, SkipReason, Skipped};
use super::{Kind, WorkbookProblem};
use crate::policy::settlement::parser::{Field, HeaderProblem};

/// A cell as it is written into the workbook.
enum Value {
    Text(&'static str),
    Number(f64),
    /// A number shown as accounting shows it: a negative in parentheses.
    Accounting(f64),
    Date(u16, u8, u8),
    /// A formula and the result Excel computed for it.
    Formula(&'static str, &'static str),
}

use Value::{Accounting, Date, Number, Text};

/// A sheet's rows: each at its 0-based row index, with its cells from column A on.
type Sheet = [(u32, Vec<Value>)];

/// A PG console's export, the workbook's way and (second) the CSV's way, row for row:
/// a title, the period, a blank row, the header, then rows stored every way Excel
/// stores them. Row 10 is not in the workbook at all.
fn export() -> (Vec<(u32, Vec<Value>)>, &'static str) {
    let rows = vec![
        (0, vec![Text("정산내역 조회")]),
        (1, vec![Text("조회기간: 2026-11-01 ~ 2026-11-30")]),
        (
            3,
            vec![
                Text("주문번호"),
                Text("결제금액"),
                Text("거래일시"),
                Text("비고"),
            ],
        ),
        (
            4,
            vec![Text("A-1"), Number(1000.0), Date(2026, 11, 2), Text("memo")],
        ),
        (
            5,
            vec![Text("A-2"), Text("1,000"), Text("2026-11-02 10:00:00")],
        ),
        (6, vec![Text("A-3"), Text("(1,250,000)"), Date(2026, 11, 3)]),
        (
            7,
            vec![Text("A-4"), Accounting(-1_250_000.0), Date(2026, 11, 3)],
        ),
        (
            8,
            vec![Number(123_456_789_012.0), Number(5000.0), Date(2026, 11, 4)],
        ),
        (
            10,
            vec![
                Text("A-6"),
                Value::Formula("=1000*1.1", "1100.0000000000002"),
                Date(2026, 11, 4),
            ],
        ),
        (11, vec![Text("A-7"), Number(12.5), Date(2026, 11, 4)]),
        (12, vec![Text("합계"), Number(999.0)]),
    ];
    let csv = "정산내역 조회\n조회기간: 2026-11-01 ~ 2026-11-30\n\n\
               주문번호,결제금액,거래일시,비고\n\
               A-1,1000,2026-11-02,memo\n\
               A-2,\"1,000\",2026-11-02 10:00:00,\n\
               A-3,\"(1,250,000)\",2026-11-03,\n\
               A-4,\"(1,250,000)\",2026-11-03,\n\
               123456789012,5000,2026-11-04,\n\
               \n\
               A-6,1100,2026-11-04,\n\
               A-7,12.5,2026-11-04,\n\
               합계,999,,\n";
    (rows, csv)
}

fn write(sheet: &mut Worksheet, rows: &Sheet) {
    let accounting = CellFormat::new().set_num_format("#,##0;(#,##0)");
    let date = CellFormat::new().set_num_format("yyyy-mm-dd");
    for (row, cells) in rows {
        for (column, value) in (0u16..).zip(cells) {
            let written = match value {
                Text(text) => sheet.write_string(*row, column, *text),
                Number(number) => sheet.write_number(*row, column, *number),
                Accounting(number) => {
                    sheet.write_number_with_format(*row, column, *number, &accounting)
                }
                Date(year, month, day) => {
                    let day = ExcelDateTime::from_ymd(*year, *month, *day).expect("a date");
                    sheet.write_datetime_with_format(*row, column, &day, &date)
                }
                Value::Formula(formula, result) => {
                    sheet.write_formula(*row, column, Formula::new(*formula).set_result(*result))
                }
            };
            written.expect("a cell written");
        }
    }
}

/// A workbook of named sheets.
fn workbook(sheets: &[(&str, &Sheet)]) -> Vec<u8> {
    let mut workbook = Workbook::new();
    for (name, rows) in sheets {
        let sheet = workbook.add_worksheet();
        sheet.set_name(*name).expect("a sheet name");
        write(sheet, rows);
    }
    workbook.save_to_buffer().expect("a workbook")
}

fn entries_of(bytes: Vec<u8>, sheet: Option<&str>) -> Result<(Vec<Entry>, Format), ParseError> {
    let mut entries = open(Cursor::new(bytes), sheet)?;
    let read = entries.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok((read, entries.summary().format))
}

fn refusal(bytes: Vec<u8>) -> ParseError {
    entries_of(bytes, None).expect_err("refused")
}

fn skip(line: u64, reason: SkipReason) -> Entry {
    Entry::Skipped(Skipped { line, reason })
}

#[test]
fn a_workbook_reads_as_its_csv_twin_row_for_row() {
    let (rows, csv) = export();
    let (from_workbook, format) =
        entries_of(workbook(&[("정산", &rows)]), None).expect("a settlement workbook");
    let (from_csv, _) = entries_of(csv.as_bytes().to_vec(), None).expect("a settlement file");
    assert_eq!(from_workbook, from_csv);
    assert_eq!(
        format,
        Format::Workbook {
            kind: Kind::Xlsx,
            sheet: "정산".into()
        }
    );
    let day = |text: &str| text.parse().ok();
    let row = |line, order_id: &str, amount, date| {
        Entry::Row(Row {
            line,
            order_id: order_id.into(),
            amount,
            date: day(date),
        })
    };
    // Row numbers as Excel shows them; the refund both ways is −1,250,000; the long id
    // stored as a number is written out in full; the formula's float error is gone.
    assert_eq!(
        from_workbook,
        vec![
            skip(1, SkipReason::BeforeHeader),
            skip(2, SkipReason::BeforeHeader),
            skip(3, SkipReason::BlankLine),
            row(5, "A-1", 1000, "2026-11-02"),
            row(6, "A-2", 1000, "2026-11-02"),
            row(7, "A-3", -1_250_000, "2026-11-03"),
            row(8, "A-4", -1_250_000, "2026-11-03"),
            row(9, "123456789012", 5000, "2026-11-04"),
            skip(10, SkipReason::BlankLine),
            row(11, "A-6", 1100, "2026-11-04"),
            skip(
                12,
                SkipReason::UnparsableAmount {
                    value: "12.5".into()
                }
            ),
            skip(13, SkipReason::SummaryRow),
        ]
    );
}

#[test]
fn cells_only_a_workbook_has() {
    let rows = [
        (0, vec![Text("orderNo"), Text("amount")]),
        (1, vec![Number(1_234_567_890_123_456.0), Number(1.0)]),
        (2, vec![Text("E-1"), Value::Formula("=NA()", "#N/A")]),
        (3, vec![Value::Formula("=1/0", "#DIV/0!"), Number(1.0)]),
        (4, vec![Text("E-3")]),
        (5, vec![Text("E-4"), Date(2026, 11, 2)]),
        (6, vec![Text("E-5"), Number(1e16)]),
    ];
    let (entries, _) = entries_of(workbook(&[("Sheet1", &rows)]), None).expect("read");
    assert_eq!(
        entries,
        vec![
            skip(
                2,
                SkipReason::InexactNumber {
                    field: Field::OrderId
                }
            ),
            skip(
                3,
                SkipReason::CellError {
                    field: Field::Amount,
                    error: "#N/A".into()
                }
            ),
            skip(
                4,
                SkipReason::CellError {
                    field: Field::OrderId,
                    error: "#DIV/0!".into()
                }
            ),
            // A cell not written is empty, never a short row.
            skip(5, SkipReason::UnparsableAmount { value: "".into() }),
            skip(
                6,
                SkipReason::UnparsableAmount {
                    value: "2026-11-02 00:00:00".into()
                }
            ),
            skip(
                7,
                SkipReason::UnparsableAmount {
                    value: "10000000000000000".into()
                }
            ),
        ]
    );
}

#[test]
fn the_first_sheet_with_a_header_or_the_one_named() {
    let notes = [(0, vec![Text("Read me first")])];
    let (rows, _) = export();
    let other = [
        (0, vec![Text("orderNo"), Text("amount")]),
        (1, vec![Text("Z-1"), Number(7.0)]),
    ];
    let bytes = workbook(&[("Notes", &notes), ("정산", &rows), ("Other", &other)]);
    let (_, format) = entries_of(bytes.clone(), None).expect("read");
    assert_eq!(format.sheet(), Some("정산"));
    let (entries, format) = entries_of(bytes.clone(), Some("Other")).expect("read");
    assert_eq!(format.sheet(), Some("Other"));
    assert_eq!(entries.len(), 1);
    match entries_of(bytes.clone(), Some("Missing")) {
        Err(ParseError::NoSuchSheet { name, sheets }) => {
            assert_eq!(name, "Missing");
            assert_eq!(sheets, ["Notes", "정산", "Other"]);
        }
        other => panic!("expected NoSuchSheet: {other:?}"),
    }
    assert!(matches!(
        entries_of(bytes, Some("Notes")),
        Err(ParseError::NotASettlementFile {
            reason: HeaderProblem::NoOrderIdOrAmountColumn
        })
    ));
    // A CSV has no sheets to name.
    assert!(matches!(
        entries_of(b"orderNo,amount\n".to_vec(), Some("Sheet1")),
        Err(ParseError::NoSuchSheet { sheets, .. }) if sheets.is_empty()
    ));
}

#[test]
fn a_workbook_with_no_sheet_that_has_a_header() {
    let rows = [(0, vec![Text("orderNo"), Text("fee")])];
    let notes = [(0, vec![Text("Notes")])];
    assert!(matches!(
        refusal(workbook(&[("Notes", &notes), ("Fees", &rows)])),
        ParseError::NotASettlementFile {
            reason: HeaderProblem::NoOrderIdOrAmountColumn
        }
    ));
}

fn unreadable(bytes: Vec<u8>) -> WorkbookProblem {
    match refusal(bytes) {
        ParseError::UnreadableWorkbook { reason } => reason,
        other => panic!("expected an unreadable workbook: {other:?}"),
    }
}
