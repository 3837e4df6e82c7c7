//! An Excel 97–2003 workbook built in the test, record by record (no Rust crate writes
//! BIFF8): read as its CSV twin is, and refused when its sheets would span too much.

#[path = "../../../../../../tests/support/biff.rs"]
pub(super) mod biff_file;

use biff_file::{biff_text, bof, bound_sheet, compound, eof, named_sheet, one_sheet, record};

use calamine::Reader as _;

use super::Value::{self, Number, Text};
use super::{entries_of, skip, unreadable};
use crate::policy::settlement::parser::workbook::{biff, Kind, WorkbookProblem};
use crate::policy::settlement::parser::{Entry, Format, Row, SkipReason};

/// A cell's record: LABEL for text, NUMBER for a number.
fn biff_cell(row: u16, column: u16, value: &Value) -> Vec<u8> {
    let mut data = [row.to_le_bytes(), column.to_le_bytes(), [0, 0]].concat();
    match value {
        Text(text) => {
            data.extend(biff_text(text, true));
            record(0x0204, &data)
        }
        Number(number) => {
            data.extend(number.to_le_bytes());
            record(0x0203, &data)
        }
        _ => panic!("only text and numbers in this test's .xls"),
    }
}

/// An Excel 97–2003 workbook of one sheet: the compound file, its Workbook stream of
/// BIFF8 records — the globals (BOF, BOUNDSHEET, EOF), then the sheet's substream.
fn xls(name: &str, cells: &[(u16, u16, Value)]) -> Vec<u8> {
    let globals_length = bof(0x0005).len() + named_sheet(name, 0).len() + eof().len();
    let mut stream = [
        bof(0x0005),
        named_sheet(name, globals_length as u32),
        eof(),
        bof(0x0010),
    ]
    .concat();
    for (row, column, value) in cells {
        stream.extend(biff_cell(*row, *column, value));
    }
    stream.extend(eof());
    compound(&stream)
}

#[test]
fn an_xls_reads_as_its_csv_twin_row_for_row() {
    // From column B and row 2 on, with a title above the header.
    let cells = [
        (1, 1, Text("정산내역")),
        (3, 1, Text("주문번호")),
        (3, 2, Text("결제금액")),
        (4, 1, Text("A-1")),
        (4, 2, Number(1000.0)),
        (5, 1, Number(123_456_789_012.0)),
        (5, 2, Text("(1,250,000)")),
        (7, 1, Text("합계")),
        (7, 2, Number(-1_249_000.0)),
    ];
    let (from_xls, format) = entries_of(xls("정산", &cells), None).expect("a settlement .xls");
    let csv = "\n,정산내역\n\n,주문번호,결제금액\n,A-1,1000\n,123456789012,\"(1,250,000)\"\n\n,합계,-1249000\n";
    let (from_csv, _) = entries_of(csv.as_bytes().to_vec(), None).expect("a settlement file");
    assert_eq!(from_xls, from_csv);
    assert_eq!(
        format,
        Format::Workbook {
            kind: Kind::Xls,
            sheet: "정산".into()
        }
    );
    let row = |line, order_id: &str, amount| {
        Entry::Row(Row {
            line,
            order_id: order_id.into(),
            amount,
            date: None,
        })
    };
    assert_eq!(
        from_xls,
        vec![
            skip(1, SkipReason::BlankLine),
            skip(2, SkipReason::BeforeHeader),
            skip(3, SkipReason::BlankLine),
            row(5, "A-1", 1000),
            row(6, "123456789012", -1_250_000),
            skip(7, SkipReason::BlankLine),
            skip(8, SkipReason::SummaryRow),
        ]
    );
}

#[test]
fn an_xls_whose_cells_span_too_much_is_refused_before_calamine_lays_it_out() {
    // Two cells of a few bytes each, far apart: a 65,536 × 256 grid.
    let cells = [(0, 0, Text("orderNo")), (65_535, 255, Text("amount"))];
    assert_eq!(
        unreadable(xls("Sheet1", &cells)),
        WorkbookProblem::TooLarge {
            part: "sheets' cells".into(),
            limit: biff::MAX_XLS_CELLS
        }
    );
}

#[test]
fn a_dimensions_record_that_runs_backwards_is_refused_not_wrapped() {
    // BIFF8's DIMENSIONS: first row, last row + 1 (u32), first column, last column + 1.
    let dimensions = |first_row: u32, last_row: u32, first: u16, last: u16| {
        let data = [
            &first_row.to_le_bytes()[..],
            &last_row.to_le_bytes(),
            &first.to_le_bytes(),
            &last.to_le_bytes(),
            &[0, 0],
        ]
        .concat();
        record(0x0200, &data)
    };
    let header = [
        biff_cell(0, 0, &Text("orderNo")),
        biff_cell(0, 1, &Text("amount")),
    ];
    // calamine reads rows 10 to 4: `4 - 10 + 1` in u32, some 4·10^9 rows in a release
    // build, an overflow in a debug one.
    let backwards = one_sheet(&[
        dimensions(10, 5, 0, 2),
        header[0].clone(),
        header[1].clone(),
    ]);
    let problem = unreadable(compound(&backwards));
    assert!(
        matches!(&problem, WorkbookProblem::Corrupt(why) if why.contains("DIMENSIONS runs backwards")),
        "{problem:?}"
    );
    // The columns too: first and last the same, so calamine's last (`last - 1`) is
    // before its first.
    let narrow = one_sheet(&[dimensions(0, 1, 5, 5), header[0].clone(), header[1].clone()]);
    assert!(matches!(
        unreadable(compound(&narrow)),
        WorkbookProblem::Corrupt(_)
    ));
    // An empty sheet's DIMENSIONS (all zero) is one cell to calamine, and reads.
    let empty = one_sheet(&[dimensions(0, 0, 0, 0), header[0].clone(), header[1].clone()]);
    assert!(entries_of(compound(&empty), None).is_ok());
}

#[test]
fn sheets_listed_past_the_cap_or_walked_past_the_bound_are_refused() {
    // A million BOUNDSHEETs at offset 0, the globals themselves: each would make
    // calamine walk the whole stream again, a million times over; the fifth is refused.
    let many = [bof(0x0005), bound_sheet(0).repeat(1_000_000), eof()].concat();
    let problem = unreadable(compound(&many));
    assert!(
        matches!(&problem, WorkbookProblem::Corrupt(why) if why.contains("repeat")),
        "{problem:?}"
    );
    // 1,001 entries at the globals' EOF, each a walk of one record: past the cap.
    let at_eof = (bof(0x0005).len() + 1_001 * bound_sheet(0).len()) as u32;
    let listed = [bof(0x0005), bound_sheet(at_eof).repeat(1_001), eof()].concat();
    let problem = unreadable(compound(&listed));
    assert!(
        matches!(&problem, WorkbookProblem::Corrupt(why) if why.contains("more than 1000 sheets")),
        "{problem:?}"
    );
    // 900 sheets (under the cap), each starting one record later and none ending: the
    // walks would cover 450 times the stream.
    let (first, entry) = (bof(0x0005).len() as u32, bound_sheet(0).len() as u32);
    let overlapping: Vec<u8> = [bof(0x0005)]
        .into_iter()
        .chain((0..900).map(|n| bound_sheet(first + n * entry)))
        .collect::<Vec<_>>()
        .concat();
    let problem = unreadable(compound(&overlapping));
    assert!(
        matches!(&problem, WorkbookProblem::Corrupt(why) if why.contains("overlap")),
        "{problem:?}"
    );
    // 1,000 entries (under the cap) at one sheet that runs on without an EOF: walked
    // once here, but calamine walks it again for each entry, 1,000 times the stream.
    let entries = 1_000;
    let globals = bof(0x0005).len() + entries * bound_sheet(0).len() + eof().len();
    let repeated = [
        bof(0x0005),
        bound_sheet(globals as u32).repeat(entries),
        eof(),
        bof(0x0010),
        biff_cell(0, 0, &Number(1.0)).repeat(10_000),
    ]
    .concat();
    let problem = unreadable(compound(&repeated));
    assert!(
        matches!(&problem, WorkbookProblem::Corrupt(why) if why.contains("repeat")),
        "{problem:?}"
    );
    // A sheet starting inside a record, where calamine would frame the records apart.
    let inside = [bof(0x0005), bound_sheet(1), eof()].concat();
    let problem = unreadable(compound(&inside));
    assert!(
        matches!(&problem, WorkbookProblem::Corrupt(why) if why.contains("inside a record")),
        "{problem:?}"
    );
    // A record continued 10,000 times, which calamine would unpick quadratically.
    let continued = [
        one_sheet(&[]),
        record(0x00FC, &[0; 8]),
        record(0x003C, &[]).repeat(10_000),
    ]
    .concat();
    let problem = unreadable(compound(&continued));
    assert!(
        matches!(&problem, WorkbookProblem::Corrupt(why) if why.contains("continued")),
        "{problem:?}"
    );
    // A sheet past the stream's end, where calamine would slice and panic.
    let past = [bof(0x0005), bound_sheet(1 << 20), eof()].concat();
    let problem = unreadable(compound(&past));
    assert!(
        matches!(&problem, WorkbookProblem::Corrupt(why) if why.contains("past the workbook")),
        "{problem:?}"
    );
    // Two entries for one sheet walk it once, and it reads.
    let globals = bof(0x0005).len() + 2 * bound_sheet(0).len() + eof().len();
    let twice = [
        bof(0x0005),
        bound_sheet(globals as u32),
        bound_sheet(globals as u32),
        eof(),
        bof(0x0010),
        biff_cell(0, 0, &Text("orderNo")),
        biff_cell(0, 1, &Text("amount")),
        biff_cell(1, 0, &Text("A-1")),
        biff_cell(1, 1, &Number(1000.0)),
        eof(),
    ]
    .concat();
    assert!(entries_of(compound(&twice), None).is_ok());
}

#[test]
fn a_formula_keeps_its_value_and_loses_its_expression() {
    // A FORMULA in B2: row, column, format, the value Excel computed (1000), flags and
    // chn, then the expression: an integer, then 100 PtgAttrSpace of 255 spaces each,
    // which calamine would write out by inserting at the front of the text.
    let mut expression = vec![0x1E, 1, 0];
    for _ in 0..100 {
        expression.extend([0x19, 0x40, 0x00, 0xFF]);
    }
    let mut formula = [1u16.to_le_bytes(), 1u16.to_le_bytes(), [0, 0]].concat();
    formula.extend(1000f64.to_le_bytes());
    formula.extend([0; 6]);
    formula.extend(
        u16::try_from(expression.len())
            .expect("short")
            .to_le_bytes(),
    );
    formula.extend(expression);
    let mut file = compound(&one_sheet(&[record(0x0006, &formula)]));
    biff::check(&mut file).expect("checked");
    let mut book = calamine::Xls::new(std::io::Cursor::new(file)).expect("a workbook");
    let values = book.worksheet_range("S").expect("a sheet");
    assert_eq!(
        values.get_value((1, 1)),
        Some(&calamine::Data::Float(1000.0))
    );
    let texts = book.worksheet_formula("S").expect("a sheet");
    let text = texts.get_value((1, 1)).expect("a formula's text");
    assert!(text.len() < 255, "{} characters", text.len());
}
