//! The header: its names and synonyms, the date column, title lines before it.

use super::*;

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
        // English exports: the gross is the charged amount, never the net.
        (
            "Date,Time,TimeZone,Name,Type,Status,Currency,Gross,Fee,Net,Transaction ID,Invoice Number",
            11,
            7,
        ),
        ("invoice_id,net,fee,gross", 0, 3),
        ("Merchant Reference,Net Amount,Gross Amount", 0, 2),
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
        ("created_utc,invoice_id,gross", Some(0)),
        ("id,Created (UTC),Amount,invoice_id", Some(1)),
        ("Invoice ID,Gross,Transaction Initiation Date", Some(2)),
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

#[test]
fn a_net_or_fee_column_is_never_the_amount() {
    for header in ["invoice_id,net,fee", "Invoice Number,Net,payOutAmount,Fee"] {
        let file = format!("{header}\nA-1,1,2,3\n");
        assert_eq!(
            outcome(file.as_bytes()).map(|o| o.header),
            Err(HeaderProblem::NoAmountColumn),
            "{header}"
        );
    }
}
