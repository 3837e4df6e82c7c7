//! UTF-8 with or without a BOM, and CP949.

use super::*;

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
