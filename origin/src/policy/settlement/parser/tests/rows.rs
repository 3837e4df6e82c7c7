//! What each row after the header is: blank, summary, short, and its amounts.

use super::*;

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
