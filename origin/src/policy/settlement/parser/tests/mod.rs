//! One test (or one table line) per quirk, by topic, then properties over arbitrary
//! input; the helpers they share are here.

mod csv;
mod encodings;
mod headers;
mod properties;
mod refusals;
mod rows;
mod streaming;

use std::io;

use chrono::NaiveDate;
use encoding_rs::EUC_KR;
use proptest::prelude::*;

use super::*;

/// Everything the parser says about a file, when it is a settlement file.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    header: Header,
    entries: Vec<Entry>,
    summary: Summary,
}

fn outcome_of<R: Read>(reader: R) -> Result<Outcome, HeaderProblem> {
    let mut parsed = match parse(reader) {
        Ok(parsed) => parsed,
        Err(ParseError::NotASettlementFile { reason }) => return Err(reason),
        Err(error) => panic!("a CSV in memory: {error}"),
    };
    let entries = parsed
        .by_ref()
        .collect::<Result<Vec<_>, ParseError>>()
        .expect("reading from memory");
    Ok(Outcome {
        header: parsed.header().clone(),
        entries,
        summary: parsed.summary(),
    })
}

fn outcome(bytes: &[u8]) -> Result<Outcome, HeaderProblem> {
    outcome_of(bytes)
}

fn read(bytes: &[u8]) -> Outcome {
    outcome(bytes).expect("a settlement file")
}

fn entries(bytes: &[u8]) -> Vec<Entry> {
    read(bytes).entries
}

fn refusal(bytes: &[u8]) -> HeaderProblem {
    outcome(bytes).expect_err("not a settlement file")
}

fn row(line: u64, order_id: &str, amount: i64) -> Entry {
    Entry::Row(Row {
        line,
        order_id: order_id.to_owned(),
        amount,
        date: None,
    })
}

/// A row of a file with a date column.
fn dated(line: u64, order_id: &str, amount: i64, date: &str) -> Entry {
    Entry::Row(Row {
        line,
        order_id: order_id.to_owned(),
        amount,
        date: Some(date.parse().expect("a date")),
    })
}

fn skip(line: u64, reason: SkipReason) -> Entry {
    Entry::Skipped(Skipped { line, reason })
}

fn cp949(text: &str) -> Vec<u8> {
    let (bytes, _, unmappable) = EUC_KR.encode(text);
    assert!(!unmappable, "{text:?} is not all CP949");
    assert!(
        std::str::from_utf8(&bytes).is_err(),
        "{text:?} must not be UTF-8"
    );
    bytes.into_owned()
}

/// Physical lines, as the parser counts them: LF, CRLF and a lone CR end a line.
fn count_lines(bytes: &[u8]) -> u64 {
    let mut lines = 0;
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        if byte == b'\n' || byte == b'\r' {
            lines += 1;
            if byte == b'\r' && bytes.get(index + 1) == Some(&b'\n') {
                index += 1;
            }
        }
        index += 1;
    }
    let ends_with_break = matches!(bytes.last(), None | Some(b'\n' | b'\r'));
    lines + u64::from(!ends_with_break)
}

/// Hands out the bytes in reads of the given sizes, in turn; every other call is
/// interrupted first when `interrupt` is set.
struct Chunked<'a> {
    bytes: &'a [u8],
    sizes: Vec<usize>,
    turn: usize,
    interrupt: bool,
    interrupted: bool,
}

impl<'a> Chunked<'a> {
    fn new(bytes: &'a [u8], sizes: Vec<usize>) -> Self {
        Chunked {
            bytes,
            sizes,
            turn: 0,
            interrupt: false,
            interrupted: false,
        }
    }
}

impl Read for Chunked<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if self.interrupt && !self.interrupted {
            self.interrupted = true;
            return Err(io::ErrorKind::Interrupted.into());
        }
        self.interrupted = false;
        let size = self.sizes[self.turn % self.sizes.len()].max(1);
        self.turn += 1;
        let size = size.min(buffer.len()).min(self.bytes.len());
        let (now, later) = self.bytes.split_at(size);
        buffer[..size].copy_from_slice(now);
        self.bytes = later;
        Ok(size)
    }
}

/// A file with most quirks at once, for the streaming tests.
fn quirky_file() -> Vec<u8> {
    let mut bytes = b"\xEF\xBB\xBF\r\n".to_vec();
    bytes.extend_from_slice(
        "거래일시,\"Order No\",memo,결제금액(원)\r\n\
         2024-01-01,A-1,\"multi\r\nline, \"\"quoted\"\"\",\"1,000\"\r\n\
         2024-01-01,A-2,x,\"₩2,500\"\n\
         \n\
         2024-01-01,,x,3000\r\
         2024-01-01,A-4\r\n\
         2024-01-01,A-5,x,12.5\r\n\
         합계,,,\"6,500\"\r\n\
         2024-01-01,\"A-6\",\"unterminated"
            .as_bytes(),
    );
    bytes
}

fn quirky_entries() -> Vec<Entry> {
    vec![
        skip(1, SkipReason::BlankLine),
        dated(3, "A-1", 1000, "2024-01-01"),
        dated(5, "A-2", 2500, "2024-01-01"),
        skip(6, SkipReason::BlankLine),
        skip(7, SkipReason::EmptyOrderId),
        skip(
            8,
            SkipReason::ShortRow {
                fields: 2,
                needed: 4,
            },
        ),
        skip(
            9,
            SkipReason::UnparsableAmount {
                value: "12.5".to_owned(),
            },
        ),
        skip(10, SkipReason::SummaryRow),
        skip(11, SkipReason::UnterminatedQuote),
    ]
}
