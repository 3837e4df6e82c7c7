//! One test (or one table line) per quirk, then properties over arbitrary input.

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

// ---- headers ----

#[test]
fn an_english_header_and_lf_lines() {
    let outcome = read(b"orderNo,amount\nA-1,1000\nA-2,2500\n");
    assert_eq!(
        outcome.entries,
        vec![row(2, "A-1", 1000), row(3, "A-2", 2500)]
    );
    assert_eq!(
        outcome.summary,
        Summary {
            rows: 2,
            skipped: 0,
            format: Format::Csv(Encoding::Utf8)
        }
    );
    assert_eq!(outcome.header.line, 1);
}

#[test]
fn a_korean_header_in_utf8_the_seeds_example() {
    let outcome = read(
        "주문번호,결제금액,승인번호\n01KWW05F,10000,A001\n01KWW05G,\"9,000\",A002\n\
         ORDER-GHOST-999,5000,A003\n"
            .as_bytes(),
    );
    assert_eq!(
        outcome.entries,
        vec![
            row(2, "01KWW05F", 10_000),
            row(3, "01KWW05G", 9_000),
            row(4, "ORDER-GHOST-999", 5_000),
        ]
    );
    assert_eq!(outcome.summary.format, Format::Csv(Encoding::Utf8));
    assert_eq!(outcome.header.order_id.name, "주문번호");
    assert_eq!(outcome.header.amount.name, "결제금액");
}

#[test]
fn header_names_and_their_synonyms() {
    // (header row, order id column, amount column)
    let cases: &[(&str, usize, usize)] = &[
        ("orderNo,amount", 0, 1),
        ("order_no,settle_amount", 0, 1),
        ("Order No,Settle Amount", 0, 1),
        ("ORDER-ID,AMOUNT", 0, 1),
        ("order_number,settlement_amount", 0, 1),
        ("merchant_uid,approved_amount", 0, 1),
        ("merchantOrderId,paymentAmount", 0, 1),
        ("주문ID,승인금액", 0, 1),
        ("주문 번호,정산금액(원)", 0, 1),
        ("가맹점주문번호,거래금액", 0, 1),
        ("상점주문번호,금액", 0, 1),
        ("주문No:,approval_amount", 0, 1),
        ("\"Order Number\",\"Amount [KRW]\"", 0, 1),
        (" orderNo , amount ", 0, 1),
        ("amount,orderNo", 1, 0),
        ("거래일시,주문번호,수수료,결제금액", 1, 3),
    ];
    for &(header, order_id, amount) in cases {
        let file = format!("{header}\nA-1,1\n");
        let outcome = outcome(file.as_bytes()).unwrap_or_else(|e| panic!("{header}: {e}"));
        assert_eq!(outcome.header.order_id.index, order_id, "{header}");
        assert_eq!(outcome.header.amount.index, amount, "{header}");
    }
}

#[test]
fn the_transaction_date_column_and_its_synonyms() {
    // (header row, date column)
    let cases: &[(&str, Option<usize>)] = &[
        ("거래일시,주문번호,결제금액", Some(0)),
        ("주문번호,결제금액,승인일자", Some(2)),
        ("orderNo,amount,Transaction Date", Some(2)),
        ("approved_at,orderNo,amount", Some(0)),
        ("orderNo,amount,date,approvedAt", Some(2)),
        ("orderNo,amount,정산일,settlement_date", None),
        ("orderNo,amount", None),
    ];
    for &(header, date) in cases {
        let file = format!("{header}\nA-1,1\n");
        let outcome = outcome(file.as_bytes()).unwrap_or_else(|e| panic!("{header}: {e}"));
        assert_eq!(
            outcome.header.date.map(|column| column.index),
            date,
            "{header}"
        );
    }
}

#[test]
fn a_row_is_read_whatever_its_date_cell_says() {
    let file = "date,orderNo,amount\n2024-03-01 09:00:00,A-1,1\nsoon,A-2,2\n,A-3,3\n";
    assert_eq!(
        entries(file.as_bytes()),
        vec![
            dated(2, "A-1", 1, "2024-03-01"),
            row(3, "A-2", 2),
            row(4, "A-3", 3)
        ]
    );
}

#[test]
fn dates_as_settlement_files_write_them() {
    let cases = [
        ("2026-11-30", Some("2026-11-30")),
        ("2026-11-30 03:28:15", Some("2026-11-30")),
        ("  2026-11-30T03:28:15Z", Some("2026-11-30")),
        ("2026/11/30 오후 3:28", Some("2026-11-30")),
        ("2026.1.5", Some("2026-01-05")),
        ("20261130", Some("2026-11-30")),
        ("20261130 032815", Some("2026-11-30")),
        ("2026-02-30", None),
        ("2026-11", None),
        ("2026-11/30", None),
        ("202611301", None),
        ("26-11-30", None),
        ("2026-011-30", None),
        ("30/11/2026", None),
        ("", None),
        ("합계", None),
    ];
    for (text, date) in cases {
        let expected = date.map(|date| date.parse::<NaiveDate>().expect("a date"));
        assert_eq!(parse_date(text), expected, "{text:?}");
    }
}

#[test]
fn normalising_names() {
    let cases = [
        ("orderNo", "orderno"),
        (" Order_No ", "orderno"),
        ("ORDER-NO", "orderno"),
        ("order\u{3000}no", "orderno"),
        ("\u{feff}orderNo", "orderno"),
        ("Settle_Amount (KRW)", "settleamount"),
        ("결제금액(원)", "결제금액"),
        ("Amount [KRW]", "amount"),
        ("주문 번호:", "주문번호"),
        ("Grand Total:", "grandtotal"),
        ("합계(3건)", "합계"),
        ("(원)", "(원)"),
        ("", ""),
    ];
    for (name, normal) in cases {
        assert_eq!(normalize(name), normal, "{name:?}");
    }
}

#[test]
fn extra_columns_in_any_order_are_ignored() {
    let outcome = read(
        "수수료,결제금액,memo,주문번호,status\n100,\"10,000\",\"x, y\",A-1,OK\n\
         ,5000,,A-2,\n"
            .as_bytes(),
    );
    assert_eq!(
        outcome.entries,
        vec![row(2, "A-1", 10_000), row(3, "A-2", 5_000)]
    );
    assert_eq!(
        (outcome.header.order_id.index, outcome.header.amount.index),
        (3, 1)
    );
}

#[test]
fn the_first_of_several_matching_columns_is_used() {
    let outcome = read(b"orderNo,merchant_uid,amount,settle_amount\nA-1,M-1,1000,970\n");
    assert_eq!(outcome.entries, vec![row(2, "A-1", 1000)]);
    assert_eq!(outcome.header.order_id.name, "orderNo");
    assert_eq!(outcome.header.amount.name, "amount");
}

// ---- not a settlement file ----

#[test]
fn files_that_are_not_settlement_files() {
    let mut too_long_header = b"orderNo,amount,".to_vec();
    too_long_header.resize(MAX_ROW_BYTES + 1, b'x');
    let many_blanks = format!("{}orderNo,amount\n", "\n".repeat(MAX_LEADING_ROWS + 1));
    let cases: [(&[u8], HeaderProblem); 12] = [
        (b"", HeaderProblem::NoHeader),
        (b"\xEF\xBB\xBF", HeaderProblem::NoHeader),
        (b"\n\r\n  \n,,\n", HeaderProblem::NoHeader),
        (many_blanks.as_bytes(), HeaderProblem::NoHeader),
        (b"foo,bar\n1,2\n", HeaderProblem::NoOrderIdOrAmountColumn),
        (b"orderNo,fee\nA,1\n", HeaderProblem::NoAmountColumn),
        // 거래번호 is the PG's transaction id, not our order id.
        (
            "거래번호,amount\nT-1,1\n".as_bytes(),
            HeaderProblem::NoOrderIdColumn,
        ),
        // Without a header, the refusal names what the row meant as one lacks.
        (
            b"Settlement report\norderNo,fee\nA,1\n",
            HeaderProblem::NoAmountColumn,
        ),
        (
            b"Settlement report\n\nfee,amount\n",
            HeaderProblem::NoOrderIdColumn,
        ),
        (b"\"orderNo,amount\nA,1\n", HeaderProblem::UnterminatedQuote),
        (&too_long_header[..], HeaderProblem::TooLong),
        (
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00",
            HeaderProblem::NoOrderIdOrAmountColumn,
        ),
    ];
    for (bytes, expected) in cases {
        assert_eq!(
            refusal(bytes),
            expected,
            "{:?}",
            String::from_utf8_lossy(bytes)
        );
    }
}

#[test]
fn up_to_the_limit_of_blank_rows_before_the_header() {
    let file = format!("{}orderNo,amount\nA,1\n", "\n".repeat(MAX_LEADING_ROWS));
    let outcome = read(file.as_bytes());
    let blanks = MAX_LEADING_ROWS as u64;
    assert_eq!(outcome.header.line, blanks + 1);
    assert_eq!(outcome.summary.skipped, blanks);
    assert_eq!(outcome.entries.last(), Some(&row(blanks + 2, "A", 1)));
}

/// A PG console's export: the report's name, the period it covers, a blank line, then
/// the header.
const TITLED: &str = "정산내역 조회\n조회기간: 2026-11-01 ~ 2026-11-30\n\n\
                      주문번호,결제금액,거래일시\nA,\"1,000\",2026-11-02\nB,\"(1,250,000)\",2026-11-03\n";

#[test]
fn title_lines_before_the_header_are_skipped_and_reported() {
    for file in [TITLED.as_bytes().to_vec(), cp949(TITLED)] {
        let outcome = read(&file);
        assert_eq!(outcome.header.line, 4);
        assert_eq!(
            outcome.entries,
            vec![
                skip(1, SkipReason::BeforeHeader),
                skip(2, SkipReason::BeforeHeader),
                skip(3, SkipReason::BlankLine),
                dated(5, "A", 1000, "2026-11-02"),
                dated(6, "B", -1_250_000, "2026-11-03"),
            ]
        );
        assert_eq!((outcome.summary.rows, outcome.summary.skipped), (2, 3));
    }
}

#[test]
fn up_to_the_limit_of_lines_before_the_header() {
    let titled = |lines| format!("{}orderNo,amount\nA,1\n", "Report\n".repeat(lines));
    let outcome = read(titled(MAX_LEADING_ROWS).as_bytes());
    assert_eq!(outcome.header.line, MAX_LEADING_ROWS as u64 + 1);
    assert_eq!(outcome.summary.skipped, MAX_LEADING_ROWS as u64);
    assert_eq!(
        refusal(titled(MAX_LEADING_ROWS + 1).as_bytes()),
        HeaderProblem::NoOrderIdOrAmountColumn
    );
    // A title that opens a quote never closed swallows the header: refused, not guessed.
    assert_eq!(
        refusal(b"\"Report\norderNo,amount\nA,1\n"),
        HeaderProblem::UnterminatedQuote
    );
}

#[test]
fn the_refusal_reads_as_a_sentence() {
    let error = parse(&b"orderNo,fee\n"[..]).err().expect("refused");
    assert_eq!(
        error.to_string(),
        "not a settlement file: the header row has no amount column"
    );
}

// ---- CSV ----

#[test]
fn quoted_fields_with_commas_and_doubled_quotes() {
    let file = b"orderNo,amount,memo\n\
        \"A,1\",\"1,000\",\"he said \"\"hi\"\", then left\"\n\
        \"B\"\"2\",2000,x\n\
        \"C\"3,3000,\"\"\n\
        D\"4,4000,\n";
    assert_eq!(
        entries(file),
        vec![
            row(2, "A,1", 1000),
            row(3, "B\"2", 2000),
            row(4, "C3", 3000),
            row(5, "D\"4", 4000),
        ]
    );
}

#[test]
fn crlf_lf_lone_cr_and_mixed_line_endings() {
    let cases: &[(&[u8], Vec<Entry>)] = &[
        (
            b"orderNo,amount\r\nA,1\r\nB,2\r\n",
            vec![row(2, "A", 1), row(3, "B", 2)],
        ),
        (
            b"orderNo,amount\nA,1\nB,2\n",
            vec![row(2, "A", 1), row(3, "B", 2)],
        ),
        (
            b"orderNo,amount\rA,1\rB,2\r",
            vec![row(2, "A", 1), row(3, "B", 2)],
        ),
        (
            b"orderNo,amount\r\nA,1\nB,2\rC,3\r\n\nD,4",
            vec![
                row(2, "A", 1),
                row(3, "B", 2),
                row(4, "C", 3),
                skip(5, SkipReason::BlankLine),
                row(6, "D", 4),
            ],
        ),
    ];
    for (file, expected) in cases {
        assert_eq!(
            &entries(file),
            expected,
            "{:?}",
            String::from_utf8_lossy(file)
        );
    }
}

#[test]
fn exact_line_numbers_after_fields_spanning_lines() {
    let file = b"orderNo,amount,memo\n\
        A,1000,\"first\n\
        second\r\n\
        third\"\n\
        B,2000,x\n\
        \"C\n\
        \",3000,\n\
        D,4000,\"\r\"\n\
        E,5000,\"\r\n\r\n\"\n\
        F,6000,\n";
    assert_eq!(
        entries(file),
        vec![
            row(2, "A", 1000),
            row(5, "B", 2000),
            row(6, "C", 3000),
            row(8, "D", 4000),
            row(10, "E", 5000),
            row(13, "F", 6000),
        ]
    );
}

#[test]
fn a_final_line_break_ends_the_last_row() {
    let cases: &[(&[u8], Vec<Entry>)] = &[
        (b"orderNo,amount\nA,1", vec![row(2, "A", 1)]),
        (b"orderNo,amount\nA,1\n", vec![row(2, "A", 1)]),
        (b"orderNo,amount\r\nA,1\r\n", vec![row(2, "A", 1)]),
        (
            b"orderNo,amount\r\nA,1\r\n\r\n",
            vec![row(2, "A", 1), skip(3, SkipReason::BlankLine)],
        ),
        (b"orderNo,amount\n", vec![]),
        (b"orderNo,amount", vec![]),
    ];
    for (file, expected) in cases {
        assert_eq!(
            &entries(file),
            expected,
            "{:?}",
            String::from_utf8_lossy(file)
        );
    }
}

#[test]
fn an_unterminated_quote_at_the_end_skips_its_row() {
    let outcome = read(b"orderNo,amount\nA,1\nB,\"2\nC,3\n");
    assert_eq!(
        outcome.entries,
        vec![row(2, "A", 1), skip(3, SkipReason::UnterminatedQuote)]
    );
    assert_eq!((outcome.summary.rows, outcome.summary.skipped), (1, 1));
}

#[test]
fn a_row_past_the_limit_is_skipped_and_memory_stays_bounded() {
    let mut file = b"orderNo,amount,memo\nA,1,x\nB,2,\"".to_vec();
    file.extend(b"ab\r\n".repeat(MAX_ROW_BYTES)); // 4 bytes a line, MAX_ROW_BYTES lines
    file.extend(b"\"\nC,3,\n");
    let lines = MAX_ROW_BYTES as u64;
    let mut parsed = parse(&file[..]).expect("a settlement file");
    let entries: Vec<Entry> = parsed.by_ref().map(|e| e.expect("in memory")).collect();
    assert_eq!(
        entries,
        vec![
            row(2, "A", 1),
            skip(3, SkipReason::RowTooLong),
            row(3 + lines + 1, "C", 3),
        ]
    );
    let (data, ends) = parsed.held_capacity();
    assert!(data <= 2 * MAX_ROW_BYTES);
    assert!(ends <= 2 * MAX_ROW_BYTES);
}

#[test]
fn an_unterminated_quote_over_a_huge_file_is_one_skipped_row() {
    let mut file = b"orderNo,amount\nA,1\nB,\"".to_vec();
    file.extend(b"x,y\n".repeat(100_000));
    let mut parsed = parse(&file[..]).expect("a settlement file");
    let entries: Vec<Entry> = parsed.by_ref().map(|e| e.expect("in memory")).collect();
    assert_eq!(
        entries,
        vec![row(2, "A", 1), skip(3, SkipReason::UnterminatedQuote)]
    );
    assert!(parsed.held_capacity().0 <= 2 * MAX_ROW_BYTES);
}

// ---- rows ----

#[test]
fn blank_lines_are_skipped_and_reported_with_their_line() {
    let outcome = read(b"\n  \norderNo,amount\nA,1\n\n , ,\n,,\n\"\",\"\"\nB,2\n\t\n");
    assert_eq!(
        outcome.entries,
        vec![
            skip(1, SkipReason::BlankLine),
            skip(2, SkipReason::BlankLine),
            row(4, "A", 1),
            skip(5, SkipReason::BlankLine),
            skip(6, SkipReason::BlankLine),
            skip(7, SkipReason::BlankLine),
            skip(8, SkipReason::BlankLine),
            row(9, "B", 2),
            skip(10, SkipReason::BlankLine),
        ]
    );
    assert_eq!(outcome.header.line, 3);
    assert_eq!((outcome.summary.rows, outcome.summary.skipped), (2, 7));
}

#[test]
fn summary_rows_by_their_label() {
    let labels = [
        "합계,,30000",
        "소계,,1",
        "총계,,1",
        "총 합계,,1",
        "Total,,1",
        "TOTAL,,1",
        "totals,,1",
        "Subtotal,,1",
        "Sub-total,,1",
        "Grand Total,,1",
        "grand_total:,,1",
        "합계(3건),,1",
        " total ,A-9,1",
        "2024-01-01,합계,30000",
        "2024-01-01,Total,",
        "합계",
        "\"합계\",\"\",\"30,000\"",
    ];
    for label in labels {
        let file = format!("date,orderNo,amount\n{label}\n");
        assert_eq!(
            entries(file.as_bytes()),
            vec![skip(2, SkipReason::SummaryRow)],
            "{label}"
        );
    }
    // A label must be the whole field.
    assert_eq!(
        entries(b"date,orderNo,amount\nTotally,A-1,1\n2024-01-01,TOTAL-7,2\n"),
        vec![row(2, "A-1", 1), dated(3, "TOTAL-7", 2, "2024-01-01")]
    );
}

#[test]
fn short_and_ragged_rows() {
    let file = b"orderNo,memo,amount\nA,x\nB\nC,x,3,extra,more\nD,,4\n";
    assert_eq!(
        entries(file),
        vec![
            skip(
                2,
                SkipReason::ShortRow {
                    fields: 2,
                    needed: 3
                }
            ),
            skip(
                3,
                SkipReason::ShortRow {
                    fields: 1,
                    needed: 3
                }
            ),
            row(4, "C", 3),
            row(5, "D", 4),
        ]
    );
}

#[test]
fn an_empty_order_id() {
    assert_eq!(
        entries(b"orderNo,amount\n,1000\n  ,1000\n\"\",1000\n\" \",\"\"\n"),
        vec![
            skip(2, SkipReason::EmptyOrderId),
            skip(3, SkipReason::EmptyOrderId),
            skip(4, SkipReason::EmptyOrderId),
            // Blank after all: every field empty or white space.
            skip(5, SkipReason::BlankLine),
        ]
    );
}

#[test]
fn order_ids_are_trimmed() {
    assert_eq!(
        entries(b"orderNo,amount\n  A-1 ,1\n\" A-2\t\",2\n"),
        vec![row(2, "A-1", 1), row(3, "A-2", 2)]
    );
}

#[test]
fn unparsable_amounts_are_skipped_with_their_text() {
    let unparsable = |value: &str| SkipReason::UnparsableAmount {
        value: value.to_owned(),
    };
    let long = "1".repeat(40);
    let file = format!(
        "orderNo,amount\nA,1000.5\nB,\nC,$5\nD,9223372036854775808\nE,\" (-1,000) \"\nF,{long}\n"
    );
    assert_eq!(
        entries(file.as_bytes()),
        vec![
            skip(2, unparsable("1000.5")),
            skip(3, unparsable("")),
            skip(4, unparsable("$5")),
            skip(5, unparsable("9223372036854775808")),
            skip(6, unparsable("(-1,000)")),
            skip(7, unparsable(&long[..SHOWN_AMOUNT_CHARS])),
        ]
    );
}

#[test]
fn amounts_that_are_accepted() {
    let cases = [
        ("1000", 1000),
        ("0", 0),
        ("-0", 0),
        ("1,000", 1000),
        (" 1,234,567 ", 1_234_567),
        ("1 000", 1000),
        ("1000.00", 1000),
        ("1,000.0", 1000),
        ("+1,000", 1000),
        ("-1,000", -1000),
        ("₩1,000", 1000),
        ("￦1,000", 1000),
        ("-₩1,000", -1000),
        ("₩-1,000", -1000),
        ("1,000원", 1000),
        ("1,000 원", 1000),
        ("-1,000원", -1000),
        ("KRW 1,000", 1000),
        ("krw1000", 1000),
        ("1,000 KRW", 1000),
        ("\u{a0}1,000\u{a0}", 1000),
        ("9223372036854775807", i64::MAX),
        ("-9,223,372,036,854,775,808", i64::MIN),
        // Accounting's negatives: never read as positive.
        ("(1,250,000)", -1_250_000),
        ("( 1,250,000 )", -1_250_000),
        ("(₩1,250,000)", -1_250_000),
        ("(1,250,000원)", -1_250_000),
        ("(KRW 1,000)", -1000),
        ("(0)", 0),
        ("(9,223,372,036,854,775,808)", i64::MIN),
    ];
    for (text, amount) in cases {
        assert_eq!(parse_amount(text), Some(amount), "{text:?}");
    }
}

#[test]
fn amounts_that_are_refused() {
    let cases = [
        "",
        "  ",
        "원",
        "₩",
        "-",
        "+",
        "1000.5",
        "1000.05",
        "1000.",
        ".5",
        ".00",
        "1.000.000",
        "1,00",
        "10,0000",
        "1,000,00",
        ",100",
        "1000,",
        "1,,000",
        "$1,000",
        "1,000$",
        "USD 1,000",
        "(-1,000)",
        "(+1,000)",
        "-(1,000)",
        "(₩-1,000)",
        "₩(1,000)",
        "(1,000",
        "1,000)",
        "(",
        ")",
        "()",
        "((1,000))",
        "(1,000)원",
        "1e5",
        "1E+05",
        "abc",
        "12a",
        "1,000-",
        "--1",
        "+-1",
        "원1000",
        "1000₩",
        "１０００",
        "9223372036854775808",
        "-9223372036854775809",
        "99999999999999999999",
    ];
    for text in cases {
        assert_eq!(parse_amount(text), None, "{text:?}");
    }
}

#[test]
fn negative_amounts_are_kept_for_reconciliation() {
    assert_eq!(
        entries("orderNo,amount\nR-1,\"-5,000\"\nR-2,-5000원\n".as_bytes()),
        vec![row(2, "R-1", -5000), row(3, "R-2", -5000)]
    );
}

// ---- encodings ----

#[test]
fn a_utf8_byte_order_mark_is_stripped() {
    let outcome = read("\u{feff}\"주문번호\",\"금액\"\r\nA,1\r\n".as_bytes());
    assert_eq!(outcome.entries, vec![row(2, "A", 1)]);
    assert_eq!(outcome.summary.format, Format::Csv(Encoding::Utf8WithBom));
    assert_eq!(outcome.header.order_id.name, "주문번호");
    let outcome = read(b"\xEF\xBB\xBForderNo,amount\nA,1\n");
    assert_eq!(outcome.header.order_id.name, "orderNo");
    assert_eq!(outcome.summary.format, Format::Csv(Encoding::Utf8WithBom));
}

#[test]
fn cp949_with_a_korean_header_and_a_summary_row() {
    // 똠 and 뷁 are CP949 only (outside EUC-KR's KS X 1001): their trail bytes are ASCII
    // letters, and must not disturb the fields.
    let file = cp949(
        "주문번호,결제금액,가맹점명\r\nA-1,\"10,000\",똠방각하\r\nA-2,5000원,뷁\r\n\
         합계,15000,\r\n",
    );
    let outcome = read(&file);
    assert_eq!(
        outcome.entries,
        vec![
            row(2, "A-1", 10_000),
            row(3, "A-2", 5_000),
            skip(4, SkipReason::SummaryRow),
        ]
    );
    assert_eq!(
        outcome.summary,
        Summary {
            rows: 2,
            skipped: 1,
            format: Format::Csv(Encoding::Cp949)
        }
    );
    assert_eq!(outcome.header.order_id.name, "주문번호");
    assert_eq!(outcome.header.amount.name, "결제금액");
}

#[test]
fn cp949_found_after_an_ascii_header() {
    let file = cp949("orderNo,amount,merchant\nA-1,1000,plain\nA-2,2000,가나다\n주문-3,3000,\n");
    let outcome = read(&file);
    assert_eq!(
        outcome.entries,
        vec![
            row(2, "A-1", 1000),
            row(3, "A-2", 2000),
            row(4, "주문-3", 3000)
        ]
    );
    assert_eq!(outcome.summary.format, Format::Csv(Encoding::Cp949));
}

#[test]
fn a_cp949_summary_row_decides_the_encoding() {
    let outcome = read(&cp949("orderNo,amount\nA-1,1000\n합계,1000\n"));
    assert_eq!(
        outcome.entries,
        vec![row(2, "A-1", 1000), skip(3, SkipReason::SummaryRow)]
    );
    assert_eq!(outcome.summary.format, Format::Csv(Encoding::Cp949));
}

#[test]
fn an_all_ascii_file_is_utf8() {
    assert_eq!(
        read(b"orderNo,amount\nA,1\n").summary.format,
        Format::Csv(Encoding::Utf8)
    );
}

#[test]
fn invalid_bytes_in_a_cp949_file() {
    let mut file = cp949("주문번호,금액,메모\n");
    file.extend_from_slice(b"A-\xFF,1,x\nA-2,2,\xFF\xFF\n");
    assert_eq!(
        entries(&file),
        vec![
            skip(
                2,
                SkipReason::Undecodable {
                    field: Field::OrderId
                }
            ),
            row(3, "A-2", 2),
        ]
    );
}

#[test]
fn a_utf8_file_that_turns_invalid_later() {
    let file = b"orderNo,amount,memo\nA-1,1000,\xEA\xB0\x80\nA-\xFF2,2000,x\n\
        A-3,3000,\xC7\xD5\xB0\xE8\nA-4,1\xFF000,x\n";
    let outcome = read(file);
    assert_eq!(
        outcome.entries,
        vec![
            row(2, "A-1", 1000),
            skip(
                3,
                SkipReason::Undecodable {
                    field: Field::OrderId
                }
            ),
            // Invalid bytes in a column that is not read do not matter.
            row(4, "A-3", 3000),
            skip(
                5,
                SkipReason::Undecodable {
                    field: Field::Amount
                }
            ),
        ]
    );
    assert_eq!(outcome.summary.format, Format::Csv(Encoding::Utf8));
}

#[test]
fn a_byte_order_mark_keeps_the_file_utf8() {
    let mut file = b"\xEF\xBB\xBForderNo,amount,memo\n".to_vec();
    file.extend(cp949("A-1,1,가\n합계,1,\n"));
    let outcome = read(&file);
    assert_eq!(outcome.summary.format, Format::Csv(Encoding::Utf8WithBom));
    // The label is not readable as UTF-8: the row is judged on its order id.
    assert_eq!(
        outcome.entries,
        vec![
            row(2, "A-1", 1),
            skip(
                3,
                SkipReason::Undecodable {
                    field: Field::OrderId
                }
            ),
        ]
    );
}

// ---- a whole file, and streaming ----

#[test]
fn thirty_thousand_rows_of_which_two_are_summary_rows() {
    let mut file = String::from("거래일시,주문번호,결제금액,수수료,승인번호\r\n");
    let mut expected_total = 0;
    for n in 0..29_998 {
        if n == 15_000 {
            file.push_str("소계,,,,\r\n");
        }
        let amount = 1_000 + n * 10;
        expected_total += amount;
        file.push_str(&format!(
            "2024-01-02 10:00:00,ORDER-{n:05},\"{},{:03}\",{},A{n}\r\n",
            amount / 1000,
            amount % 1000,
            amount / 100
        ));
    }
    file.push_str(&format!("합계,,\"{expected_total}\",,\r\n"));
    let outcome = read(file.as_bytes());
    assert_eq!(
        outcome.summary,
        Summary {
            rows: 29_998,
            skipped: 2,
            format: Format::Csv(Encoding::Utf8)
        }
    );
    let skipped: Vec<&Entry> = outcome
        .entries
        .iter()
        .filter(|entry| matches!(entry, Entry::Skipped(_)))
        .collect();
    assert_eq!(
        skipped,
        [
            &skip(15_002, SkipReason::SummaryRow),
            &skip(30_001, SkipReason::SummaryRow)
        ]
    );
    let total: i64 = outcome
        .entries
        .iter()
        .map(|entry| match entry {
            Entry::Row(row) => row.amount,
            Entry::Skipped(_) => 0,
        })
        .sum();
    assert_eq!(total, expected_total);
    assert_eq!(
        outcome.entries.get(1),
        Some(&dated(3, "ORDER-00001", 1_010, "2024-01-02"))
    );
}

#[test]
fn the_quirky_file_reads_as_expected() {
    let outcome = read(&quirky_file());
    assert_eq!(outcome.entries, quirky_entries());
    assert_eq!(outcome.header.line, 2);
    assert_eq!(
        outcome.summary,
        Summary {
            rows: 2,
            skipped: 7,
            format: Format::Csv(Encoding::Utf8WithBom)
        }
    );
}

#[test]
fn one_byte_at_a_time_reads_the_same_as_the_whole_buffer() {
    let quirky = quirky_file();
    let korean = cp949("주문번호,결제금액\r\nA-1,\"1,000\"\r\n\r\n합계,1000\r");
    for file in [&quirky[..], &korean[..]] {
        let whole = outcome(file);
        assert_eq!(outcome_of(Chunked::new(file, vec![1])), whole);
        let mut interrupted = Chunked::new(file, vec![1]);
        interrupted.interrupt = true;
        assert_eq!(outcome_of(interrupted), whole);
    }
}

#[test]
fn a_failing_reader_ends_the_rows_with_its_error() {
    struct FailsAfter<'a>(&'a [u8]);
    impl Read for FailsAfter<'_> {
        fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::Error::other("disk on fire"));
            }
            let read = self.0.read(buffer)?;
            Ok(read)
        }
    }
    let mut parsed = parse(FailsAfter(b"orderNo,amount\nA,1\n")).expect("header read");
    assert_eq!(parsed.next().map(|e| e.ok()), Some(Some(row(2, "A", 1))));
    let error = parsed.next().and_then(|e| e.err()).expect("the error");
    assert!(
        matches!(&error, ParseError::Io(error) if error.to_string() == "disk on fire"),
        "{error:?}"
    );
    assert!(parsed.next().is_none());
    assert_eq!(parsed.summary().rows, 1);

    let error = parse(FailsAfter(b"")).err().expect("refused");
    assert!(matches!(error, ParseError::Io(_)), "{error:?}");
}

#[test]
fn skip_reasons_have_stable_codes_and_words() {
    let cases = [
        (SkipReason::BlankLine, "BLANK_LINE", "blank line"),
        (SkipReason::SummaryRow, "SUMMARY_ROW", "summary row"),
        (
            SkipReason::ShortRow {
                fields: 1,
                needed: 3,
            },
            "SHORT_ROW",
            "short row: 1 fields, 3 needed",
        ),
        (SkipReason::EmptyOrderId, "EMPTY_ORDER_ID", "empty order id"),
        (
            SkipReason::UnparsableAmount {
                value: "12.5".to_owned(),
            },
            "UNPARSABLE_AMOUNT",
            "unparsable amount \"12.5\"",
        ),
        (
            SkipReason::Undecodable {
                field: Field::Amount,
            },
            "UNDECODABLE",
            "the amount is not valid in the file's encoding",
        ),
        (
            SkipReason::UnterminatedQuote,
            "UNTERMINATED_QUOTE",
            "a quote is never closed",
        ),
        (
            SkipReason::RowTooLong,
            "ROW_TOO_LONG",
            "row longer than 65536 bytes",
        ),
    ];
    for (reason, code, words) in cases {
        assert_eq!(reason.code(), code);
        assert_eq!(reason.to_string(), words);
    }
    assert_eq!(Encoding::Cp949.to_string(), "CP949");
}

// ---- properties ----

/// Never panics; every line reported exists; the summary counts what was yielded.
fn check_invariants(bytes: &[u8]) -> Result<Option<Outcome>, TestCaseError> {
    let Ok(outcome) = outcome(bytes) else {
        return Ok(None);
    };
    let lines = count_lines(bytes);
    prop_assert!(outcome.header.line <= lines);
    let mut previous = 0;
    let (mut rows, mut skipped) = (0, 0);
    for entry in &outcome.entries {
        let line = match entry {
            Entry::Row(row) => {
                rows += 1;
                prop_assert!(!row.order_id.trim().is_empty());
                row.line
            }
            Entry::Skipped(skipped_row) => {
                skipped += 1;
                skipped_row.line
            }
        };
        prop_assert!((1..=lines).contains(&line), "line {} of {}", line, lines);
        // The rows before the header first, then the rows after it: in file order.
        prop_assert!(line > previous && line != outcome.header.line);
        previous = line;
    }
    prop_assert_eq!(
        (outcome.summary.rows, outcome.summary.skipped),
        (rows, skipped)
    );
    Ok(Some(outcome))
}

fn csv_like() -> impl Strategy<Value = Vec<u8>> {
    let header = prop_oneof![
        Just("orderNo,amount\n"),
        Just("주문번호,결제금액\r\n"),
        Just("\u{feff}memo,\"order_no\",x,settle_amount\r"),
        Just("\n\n amount , orderId \n"),
    ];
    let body = "[aA1 ,\"\r\n합계원₩.\\-]{0,400}";
    (header, body).prop_map(|(header, body)| format!("{header}{body}").into_bytes())
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        check_invariants(&bytes)?;
    }

    #[test]
    fn arbitrary_bytes_after_a_header_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..2048),
    ) {
        let mut file = b"orderNo,amount\n".to_vec();
        file.extend(bytes);
        prop_assert!(check_invariants(&file)?.is_some());
    }

    #[test]
    fn csv_like_text_keeps_its_invariants(file in csv_like()) {
        prop_assert!(check_invariants(&file)?.is_some());
    }

    #[test]
    fn any_chunking_reads_the_same(
        file in csv_like(),
        sizes in proptest::collection::vec(1usize..20, 1..8),
    ) {
        prop_assert_eq!(outcome_of(Chunked::new(&file, sizes)), outcome(&file));
    }

    #[test]
    fn any_text_as_an_amount_never_panics(text in any::<String>()) {
        parse_amount(&text);
    }

    #[test]
    fn every_amount_written_with_separators_reads_back(value in any::<i64>()) {
        let digits = value.unsigned_abs().to_string();
        let mut grouped = String::new();
        for (index, digit) in digits.chars().enumerate() {
            if index > 0 && (digits.len() - index) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(digit);
        }
        let sign = if value < 0 { "-" } else { "" };
        prop_assert_eq!(parse_amount(&format!("{sign}₩{grouped}.00원")), Some(value));
        prop_assert_eq!(parse_amount(&value.to_string()), Some(value));
    }
}
