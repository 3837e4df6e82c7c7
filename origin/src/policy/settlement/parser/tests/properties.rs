//! Properties over arbitrary input: never a panic, every line reported exists.

use super::*;

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
