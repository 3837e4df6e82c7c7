//! Cells that show one shared string many times: each gets a copy of it, so the copies
//! are bounded by the workbook's size (`copies.rs`), and a workbook that repeats a short
//! string on every row, as settlement exports do, reads as before.

use super::refused::with_part_xml;
use super::xls::biff_file::{bof, compound, eof, label_sst, named_sheet, record, sst};
use super::Value::{Number, Text};
use super::{entries_of, unreadable};
use crate::policy::settlement::parser::workbook::WorkbookProblem;
use crate::policy::settlement::parser::{Entry, ParseError};

/// The copies' bound for a workbook this small (its floor, 64 MiB).
const FLOOR: u64 = 64 * 1024 * 1024;

/// An `.xls` of one sheet whose cells show `strings` (LABELSST): `(row, column, index)`.
fn xls_of_strings(strings: &[&str], cells: &[(u16, u16, u32)]) -> Vec<u8> {
    xls_with(strings, cells, &[])
}

/// An `.xls` of one sheet whose cells show `strings`, then has the records `more`.
fn xls_with(strings: &[&str], cells: &[(u16, u16, u32)], more: &[Vec<u8>]) -> Vec<u8> {
    let table = sst(strings);
    let globals = bof(0x0005).len() + table.len() + named_sheet("S", 0).len() + eof().len();
    let at = u32::try_from(globals).expect("short");
    let mut stream = [bof(0x0005), table, named_sheet("S", at), eof(), bof(0x0010)].concat();
    for (row, column, index) in cells {
        stream.extend(label_sst(*row, *column, *index));
    }
    stream.extend(more.concat());
    stream.extend(eof());
    compound(&stream)
}

#[test]
fn an_xls_whose_cells_copy_a_long_string_past_the_bound_is_refused() {
    // One string of 65,535 characters, up to 3 bytes each once calamine decodes it:
    // 341 cells copy just under 64 MiB of it, 342 just over, in a file of some 140 KB
    // (2·10^6 such cells fit under 32 MiB, and would ask for some 390 GB).
    let long = "가".repeat(65_535);
    let cells = |n: u16| -> Vec<(u16, u16, u32)> { (0..n).map(|row| (row, 0, 0)).collect() };
    let under = xls_of_strings(&[&long], &cells(341));
    assert!(
        matches!(
            entries_of(under, None),
            Err(ParseError::NotASettlementFile { .. })
        ),
        "341 copies are read (no header among them)"
    );
    let over = xls_of_strings(&[&long], &cells(342));
    assert!(over.len() < 160_000, "{} bytes", over.len());
    assert_eq!(
        unreadable(over),
        WorkbookProblem::SharedStringCopies { limit: FLOOR }
    );
}

#[test]
fn an_xls_that_repeats_its_status_on_every_row_reads() {
    let ids: Vec<String> = (1..=20_000).map(|n| format!("A-{n}")).collect();
    let mut strings = vec!["orderNo", "amount", "status", "DONE"];
    strings.extend(ids.iter().map(String::as_str));
    let header = [(0, 0, 0), (0, 1, 1), (0, 2, 2)];
    let mut stream = Vec::new();
    for row in 1..=20_000u16 {
        stream.push(label_sst(row, 0, u32::from(row) + 3));
        let amount = [
            &row.to_le_bytes()[..],
            &1u16.to_le_bytes(),
            &[0, 0],
            &1000f64.to_le_bytes(),
        ]
        .concat();
        stream.push(record(0x0203, &amount));
        stream.push(label_sst(row, 2, 3));
    }
    let (entries, _) = entries_of(xls_with(&strings, &header, &stream), None).expect("read");
    assert_eq!(entries.len(), 20_000);
    assert!(entries
        .iter()
        .all(|entry| matches!(entry, Entry::Row(row) if row.amount == 1000)));
}

/// A settlement workbook of `rows` rows whose third column shows one shared string of
/// 1 MiB: the origin copies it for every cell, calamine only lends it.
fn xlsx_with_long_note(rows: u32) -> Vec<u8> {
    let mut sheet = vec![(0, vec![Text("orderNo"), Text("amount"), Text("note")])];
    for row in 1..=rows {
        let id: &'static str = Box::leak(format!("A-{row}").into_boxed_str());
        sheet.push((row, vec![Text(id), Number(1000.0), Text("x")]));
    }
    with_part_xml(&sheet, "xl/sharedStrings.xml", |xml| {
        xml.replacen(
            "<t>x</t>",
            &format!("<t>{}</t>", "a".repeat(1024 * 1024)),
            1,
        )
    })
}

#[test]
fn an_xlsx_whose_cells_copy_a_long_string_past_the_bound_is_refused() {
    // 63 copies of 1 MiB and the short strings are under 64 MiB: read, each row's note
    // too long to hold; 64 are over it.
    let (entries, _) = entries_of(xlsx_with_long_note(63), None).expect("read");
    assert_eq!(entries.len(), 63);
    assert_eq!(
        unreadable(xlsx_with_long_note(64)),
        WorkbookProblem::SharedStringCopies { limit: FLOOR }
    );
}
