//! Whole files, and the same result however the reader splits the bytes.

use super::*;

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
