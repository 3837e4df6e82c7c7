//! Workbooks that cannot be read — damaged, encrypted, a ZIP bomb, a row past Excel's
//! last — refused before calamine holds them; a row reaching far to the right; and the
//! reading thread's end, said or not.

use std::io::{Cursor, Write as _};

use rust_xlsxwriter::{Format as CellFormat, Workbook};

use super::Value::{Number, Text};
use super::{entries_of, export, skip, unreadable, workbook, write, Sheet};
use crate::policy::settlement::parser::workbook::{WorkbookProblem, MAX_PART_BYTES};
use crate::policy::settlement::parser::{Entry, ParseError, Row, SkipReason};

/// The package's relationships, naming `main` the workbook's main part.
fn rels(main: &str) -> Vec<u8> {
    format!(
        "<?xml version=\"1.0\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
         <Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"{main}\"/>\
         </Relationships>"
    )
    .into_bytes()
}

/// A ZIP archive of `parts`.
fn zip_of(parts: &[(&str, &[u8])]) -> Vec<u8> {
    let mut archive = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in parts {
        archive.start_file(*name, options).expect("a part");
        archive.write_all(bytes).expect("written");
    }
    archive.finish().expect("an archive").into_inner()
}

#[test]
fn damaged_workbooks_are_unreadable() {
    let mut truncated = workbook(&[("Sheet1", &export().0)]);
    truncated.truncate(truncated.len() / 2);
    assert!(matches!(unreadable(truncated), WorkbookProblem::Corrupt(_)));
    assert!(matches!(
        unreadable(b"PK\x03\x04 not really an archive".to_vec()),
        WorkbookProblem::Corrupt(_)
    ));
    assert!(matches!(
        unreadable(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1 not a compound file".to_vec()),
        WorkbookProblem::Corrupt(_)
    ));
    assert_eq!(
        unreadable(zip_of(&[("notes.txt", b"hello")])),
        WorkbookProblem::NotExcel
    );
    // The parts a workbook needs are there, but not as a workbook writes them.
    assert!(matches!(
        unreadable(zip_of(&[
            ("[Content_Types].xml", b"<Types/>"),
            ("_rels/.rels", &rels("xl/workbook.xml")),
            ("xl/workbook.xml", b"<workbook"),
        ])),
        WorkbookProblem::Corrupt(_)
    ));
}

#[test]
fn an_encrypted_workbook_is_unreadable() {
    // What Excel writes for "Encrypt with password": a compound file holding the
    // encrypted package.
    let mut file = cfb::CompoundFile::create(Cursor::new(Vec::new())).expect("a compound file");
    // (The description of the encryption is small, so the file has a mini stream.)
    for (stream, bytes) in [("EncryptionInfo", 256), ("EncryptedPackage", 8192)] {
        let mut stream = file.create_stream(stream).expect("a stream");
        stream.write_all(&vec![7; bytes]).expect("written");
    }
    file.flush().expect("flushed");
    let bytes = file.into_inner().into_inner();
    assert_eq!(unreadable(bytes), WorkbookProblem::Encrypted);
}

#[test]
fn a_zip_bomb_is_refused_before_it_is_unpacked_into_memory() {
    // 1 MiB past the limit of spaces compresses to about 65 KiB.
    let strings = vec![b' '; (MAX_PART_BYTES + (1 << 20)) as usize];
    let bomb = |main: &str, strings_at: &str, strings: &[u8]| {
        zip_of(&[
            ("[Content_Types].xml", b"<Types/>"),
            ("_rels/.rels", &rels(main)),
            ("xl/workbook.xml", b"<workbook/>"),
            (strings_at, strings),
        ])
    };
    let plain = bomb("xl/workbook.xml", "xl/sharedStrings.xml", &strings);
    assert!(plain.len() < 1 << 20, "{} bytes", plain.len());
    assert_eq!(
        unreadable(plain),
        WorkbookProblem::TooLarge {
            part: "xl/sharedStrings.xml".into(),
            limit: MAX_PART_BYTES
        }
    );
    // calamine would look for the shared strings beside the main part: a main part
    // among the sheets, whose parts are streamed and not held to the limit, is refused
    // (before anything is unpacked).
    for main in ["xl/worksheets/workbook.xml", "/XL/Worksheets/workbook.xml"] {
        assert_eq!(
            unreadable(bomb(main, "xl/worksheets/sharedStrings.xml", b"<sst/>")),
            WorkbookProblem::NotExcel,
            "{main}"
        );
    }
}

#[test]
fn shared_strings_that_claim_more_than_their_part_can_hold_are_refused_unread() {
    // calamine reserves room for `uniqueCount` strings before it reads one: a trillion
    // would abort the process (calamine#684).
    for sst in ["sst", "x:sst"] {
        let tiny = zip_of(&[
            ("[Content_Types].xml", b"<Types/>"),
            ("_rels/.rels", &rels("xl/workbook.xml")),
            ("xl/workbook.xml", b"<workbook/>"),
            (
                "xl/sharedStrings.xml",
                format!(
                    r#"<{sst} count="1" uniqueCount="1000000000000"><si><t>a</t></si></{sst}>"#
                )
                .as_bytes(),
            ),
        ]);
        assert!(tiny.len() < 1024, "{} bytes", tiny.len());
        let problem = unreadable(tiny);
        assert!(
            matches!(&problem, WorkbookProblem::Corrupt(why) if why.contains("claims 1000000000000 strings")),
            "{sst}: {problem:?}"
        );
    }
    // An honest count, or none, reads as before.
    let rows = export().0;
    let read = |bytes: Vec<u8>| {
        entries_of(bytes, None)
            .ok()
            .map(|(entries, _)| entries.len())
    };
    let honest = read(with_part_xml(&rows, "xl/sharedStrings.xml", |xml| xml));
    assert!(honest.is_some_and(|n| n > 0), "{honest:?}");
    let uncounted = with_part_xml(&rows, "xl/sharedStrings.xml", |xml| {
        xml.replacen("uniqueCount=", "data-count=", 1)
    });
    assert_eq!(read(uncounted), honest);
}

/// The workbook of `rows` with its first sheet's XML changed by `edit`, re-packed.
fn with_sheet_xml(rows: &Sheet, edit: impl Fn(String) -> String) -> Vec<u8> {
    with_part_xml(rows, "xl/worksheets/sheet1.xml", edit)
}

/// The workbook of `rows` with the XML of its part `changed` changed by `edit`, re-packed.
pub(super) fn with_part_xml(
    rows: &Sheet,
    changed: &str,
    edit: impl Fn(String) -> String,
) -> Vec<u8> {
    use std::io::Read as _;
    let mut archive =
        zip::ZipArchive::new(Cursor::new(workbook(&[("Sheet1", rows)]))).expect("an archive");
    let mut parts = Vec::new();
    for index in 0..archive.len() {
        let mut part = archive.by_index(index).expect("a part");
        let name = part.name().expect("a name").into_owned();
        let mut text = String::new();
        part.read_to_string(&mut text).expect("XML");
        let text = if name == changed { edit(text) } else { text };
        parts.push((name, text.into_bytes()));
    }
    let parts: Vec<(&str, &[u8])> = parts
        .iter()
        .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
        .collect();
    zip_of(&parts)
}

#[test]
fn a_row_past_excels_last_is_a_damaged_sheet() {
    let rows = [
        (0, vec![Text("orderNo"), Text("amount")]),
        (1, vec![Text("A"), Number(1.0)]),
    ];
    let bytes = with_sheet_xml(&rows, |xml| {
        xml.replace("r=\"A2\"", "r=\"A4000000\"")
            .replace("r=\"B2\"", "r=\"B4000000\"")
            .replace("<row r=\"2\"", "<row r=\"4000000\"")
    });
    assert!(
        matches!(unreadable(bytes), WorkbookProblem::Corrupt(message) if message.contains("4000000"))
    );
}

#[test]
fn an_empty_styled_cell_far_right_costs_nothing_and_a_written_one_is_a_long_row() {
    let styled = CellFormat::new().set_bold();
    let mut workbook = Workbook::new();
    let sheet = workbook.add_worksheet();
    write(
        sheet,
        &[
            (0, vec![Text("orderNo"), Text("amount")]),
            (1, vec![Text("A"), Number(1.0)]),
            (2, vec![Text("B"), Number(2.0)]),
        ],
    );
    sheet
        .write_blank(0, 16_000, &styled)
        .expect("a styled blank");
    sheet
        .write_blank(1, 16_000, &styled)
        .expect("a styled blank");
    sheet.write_string(2, 16_000, "far").expect("a far cell");
    let bytes = workbook.save_to_buffer().expect("a workbook");
    let (entries, _) = entries_of(bytes, None).expect("read");
    assert_eq!(
        entries,
        vec![
            Entry::Row(Row {
                line: 2,
                order_id: "A".into(),
                amount: 1,
                date: None
            }),
            skip(3, SkipReason::RowTooLong),
        ]
    );
}

#[test]
fn a_reader_gone_without_its_end_is_an_error_never_a_short_file() {
    use crate::policy::settlement::parser::row::Rows as _;
    use crate::policy::settlement::parser::workbook::{ChannelRows, Message, SheetRow};
    let (sender, rows) = std::sync::mpsc::sync_channel(2);
    let mut rows = ChannelRows {
        rows,
        row: SheetRow::default(),
    };
    sender
        .send(Message::Row(SheetRow::default()))
        .expect("sent");
    sender.send(Message::End).expect("sent");
    assert!(matches!(rows.advance(), Ok(true)));
    assert!(matches!(rows.advance(), Ok(false)), "the end, said");
    let (sender, receiver) = std::sync::mpsc::sync_channel(2);
    rows.rows = receiver;
    sender
        .send(Message::Row(SheetRow::default()))
        .expect("sent");
    drop(sender); // as a thread that died part way
    assert!(matches!(rows.advance(), Ok(true)));
    assert!(matches!(
        rows.advance(),
        Err(ParseError::UnreadableWorkbook {
            reason: WorkbookProblem::Corrupt(_)
        })
    ));
}

#[test]
fn a_panic_is_told_in_its_words() {
    let said = std::panic::catch_unwind(|| panic!("bad record {}", 7)).expect_err("a panic");
    assert_eq!(
        crate::policy::settlement::parser::workbook::panic_text(said.as_ref()),
        "bad record 7"
    );
    let said = std::panic::catch_unwind(|| std::panic::panic_any(7)).expect_err("a panic");
    assert_eq!(
        crate::policy::settlement::parser::workbook::panic_text(said.as_ref()),
        "a panic"
    );
}
