//! An Excel 97–2003 workbook built record by record (no Rust crate writes BIFF8), for the
//! parser's own tests (`parser/workbook/tests/xls.rs`, by path) and the origin's
//! (`hostile_workbooks.rs`).

use std::io::{Cursor, Write as _};

/// A BIFF8 record.
pub fn record(kind: u16, data: &[u8]) -> Vec<u8> {
    let length = u16::try_from(data.len()).expect("a short record");
    [&kind.to_le_bytes()[..], &length.to_le_bytes(), data].concat()
}

/// Text as BIFF8 writes it: UTF-16LE, its length in a `u8` (a sheet's name) or `u16`.
pub fn biff_text(text: &str, long: bool) -> Vec<u8> {
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

/// A BOF: of the globals (`0x0005`) or of a sheet (`0x0010`).
pub fn bof(kind: u16) -> Vec<u8> {
    record(
        0x0809,
        &[&0x0600u16.to_le_bytes()[..], &kind.to_le_bytes(), &[0; 12]].concat(),
    )
}

pub fn eof() -> Vec<u8> {
    record(0x000A, &[])
}

/// A BOUNDSHEET: a sheet named `name` that starts at `at`.
pub fn named_sheet(name: &str, at: u32) -> Vec<u8> {
    record(
        0x0085,
        &[&at.to_le_bytes()[..], &[0, 0], &biff_text(name, false)].concat(),
    )
}

/// A BOUNDSHEET of a sheet named "S".
pub fn bound_sheet(at: u32) -> Vec<u8> {
    named_sheet("S", at)
}

/// The globals listing one sheet, then that sheet: `sheet` between its BOF and EOF.
pub fn one_sheet(sheet: &[Vec<u8>]) -> Vec<u8> {
    let globals = bof(0x0005).len() + bound_sheet(0).len() + eof().len();
    let mut stream = [bof(0x0005), bound_sheet(globals as u32), eof(), bof(0x0010)].concat();
    stream.extend(sheet.concat());
    stream.extend(eof());
    stream
}

/// The most data a BIFF8 record holds.
const MAX_RECORD: usize = 8_224;

/// A shared strings table (SST) of `strings`, in UTF-16, continued as Excel continues it:
/// a CONTINUE record where one is full, a string's characters going on after a flag byte.
pub fn sst(strings: &[&str]) -> Vec<u8> {
    let count = u32::try_from(strings.len()).expect("few").to_le_bytes();
    let mut pieces = vec![[count, count].concat()];
    for text in strings {
        let units: Vec<u16> = text.encode_utf16().collect();
        if pieces.last().expect("a piece").len() + 3 > MAX_RECORD {
            pieces.push(Vec::new());
        }
        let piece = pieces.last_mut().expect("a piece");
        piece.extend(u16::try_from(units.len()).expect("short").to_le_bytes());
        piece.push(1);
        for unit in units {
            if pieces.last().expect("a piece").len() + 2 > MAX_RECORD {
                pieces.push(vec![1]);
            }
            pieces
                .last_mut()
                .expect("a piece")
                .extend(unit.to_le_bytes());
        }
    }
    let mut records = record(0x00FC, &pieces[0]);
    for piece in &pieces[1..] {
        records.extend(record(0x003C, piece));
    }
    records
}

/// A LABELSST: the cell shows the SST's string `index`.
pub fn label_sst(row: u16, column: u16, index: u32) -> Vec<u8> {
    let data = [
        &row.to_le_bytes()[..],
        &column.to_le_bytes(),
        &[0, 0],
        &index.to_le_bytes(),
    ]
    .concat();
    record(0x00FD, &data)
}

/// A compound file whose Workbook stream is `stream`, as Excel writes it: version 3
/// (calamine reads a version 4 file only when its stream is under 4 KiB).
pub fn compound(stream: &[u8]) -> Vec<u8> {
    let mut file =
        cfb::CompoundFile::create_with_version(cfb::Version::V3, Cursor::new(Vec::new()))
            .expect("a compound file");
    file.create_stream("Workbook")
        .expect("a stream")
        .write_all(stream)
        .expect("written");
    file.flush().expect("flushed");
    file.into_inner().into_inner()
}
