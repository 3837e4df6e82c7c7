//! Files that are not settlement files, and why each is refused.

use super::*;

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
