//! RFC 4180 as files write it: quotes, line endings, line numbers, long and unterminated rows.

use super::*;

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
