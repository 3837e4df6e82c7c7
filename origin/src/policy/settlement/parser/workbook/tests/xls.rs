//! An Excel 97–2003 workbook built in the test, record by record (no Rust crate writes
//! BIFF8): read as its CSV twin is, and refused when its sheets would span too much.

use std::io::{Cursor, Write as _};

use super::Value::{self, Number, Text};
use super::{entries_of, skip, unreadable};
use crate::policy::settlement::parser::workbook::{biff, Kind, WorkbookProblem};
use crate::policy::settlement::parser::{Entry, Format, Row, SkipReason};

/// A BIFF8 record.
fn record(kind: u16, data: &[u8]) -> Vec<u8> {
    let mut bytes = kind.to_le_bytes().to_vec();
    bytes.extend(
        u16::try_from(data.len())
            .expect("a short record")
            .to_le_bytes(),
    );
    bytes.extend(data);
    bytes
}

/// Text as BIFF8 writes it: UTF-16LE, its length in a `u8` (a sheet's name) or `u16`.
fn biff_text(text: &str, long: bool) -> Vec<u8> {
    let units: Vec<u16> = text.encode_utf16().collect();
    let mut bytes = if long {
        u16::try_from(units.len())
            .expect("short")
            .to_le_bytes()
            .to_vec()
    } else {
        vec![u8::try_from(units.len()).expect("short")]
    };
    bytes.push(1); // UTF-16, not compressed
    bytes.extend(units.iter().flat_map(|unit| unit.to_le_bytes()));
    bytes
}

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
    let bof = |kind: u16| {
        record(
            0x0809,
            &[&0x0600u16.to_le_bytes()[..], &kind.to_le_bytes(), &[0; 12]].concat(),
        )
    };
    let eof = record(0x000A, &[]);
    let bound_sheet = |at: u32| {
        record(
            0x0085,
            &[&at.to_le_bytes()[..], &[0, 0], &biff_text(name, false)].concat(),
        )
    };
    let globals_length = bof(0x0005).len() + bound_sheet(0).len() + eof.len();
    let mut stream = [
        bof(0x0005),
        bound_sheet(globals_length as u32),
        eof.clone(),
        bof(0x0010),
    ]
    .concat();
    for (row, column, value) in cells {
        stream.extend(biff_cell(*row, *column, value));
    }
    stream.extend(eof);
    let mut file = cfb::CompoundFile::create(Cursor::new(Vec::new())).expect("a compound file");
    file.create_stream("Workbook")
        .expect("a stream")
        .write_all(&stream)
        .expect("written");
    file.flush().expect("flushed");
    file.into_inner().into_inner()
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
