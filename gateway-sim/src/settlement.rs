//! The settlement file, as text: what `GET /v1/settlements` exports for one
//! day. Pure — the caller passes the approvals and the day — so the file's
//! shape is unit tested here; the route only encodes it (UTF-8 with a byte
//! order mark, or CP949) and answers.
//!
//! The file has the quirks of a real PG's export (`docs/design/settlement.md`), all of which
//! the origin's parser (`origin/src/settlement/parser.rs`) reads:
//! - Korean headers with columns the origin ignores: `거래일시` (UTC,
//!   `YYYY-MM-DD HH:MM:SS`), `가맹점ID`, `결제수단`, `수수료`, `정산금액`.
//!   The order id is under `주문번호` and the gross amount under `결제금액`,
//!   both in the parser's synonym lists; `결제금액` comes before `정산금액`
//!   (also a synonym), so a parser taking the first match reads the gross
//!   amount, which is what the payment system charged.
//! - The fee is [`FEE_PER_MILLE`] of the gross amount, rounded down, and the
//!   net `정산금액` is gross minus fee.
//! - Amounts with thousands separators and a `원` suffix (`12,345원`).
//! - Every row's `결제수단` is `카드,일시불`, which must be quoted; any field
//!   holding a comma, a quote or a line break is quoted, with `"` as `""`.
//! - CRLF after every row, the last included.
//! - A final `합계` row totalling the three amount columns; an empty day is
//!   the header and `합계` with zeros.
//!
//! A day's rows are its approved charges that were not cancelled (at any
//! time), in the order they were approved; a day is a UTC calendar day. In
//! non-idempotent mode one order may be charged, and so listed, more than
//! once.

use chrono::{DateTime, NaiveDate, Timelike};

use crate::ledger::Approval;

/// The header row, in column order.
pub const HEADER: [&str; 7] = [
    "거래일시",
    "가맹점ID",
    "주문번호",
    "결제수단",
    "결제금액",
    "수수료",
    "정산금액",
];

/// What the first field of the summary row says.
pub const SUMMARY_LABEL: &str = "합계";

/// The simulated gateway's one merchant.
pub const MERCHANT_ID: &str = "M-GATEWAY-SIM";

/// The payment method of every row; its comma makes it a quoted field.
pub const PAYMENT_METHOD: &str = "카드,일시불";

/// The gateway's fee, in thousandths of the gross amount (2.5%).
pub const FEE_PER_MILLE: u64 = 25;

/// Parses a `YYYY-MM-DD` calendar date, exactly that shape.
pub fn parse_date(text: &str) -> Option<NaiveDate> {
    let bytes = text.as_bytes();
    let shaped = bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes
            .iter()
            .enumerate()
            .all(|(index, byte)| index == 4 || index == 7 || byte.is_ascii_digit());
    if !shaped {
        return None;
    }
    let year = text.get(0..4)?.parse().ok()?;
    let month = text.get(5..7)?.parse().ok()?;
    let day = text.get(8..10)?.parse().ok()?;
    NaiveDate::from_ymd_opt(year, month, day)
}

/// The settlement file for `date`, from every approval the ledger holds.
pub fn settlement_csv(approvals: &[Approval], date: NaiveDate) -> String {
    let mut csv = String::new();
    push_row(&mut csv, HEADER.map(str::to_owned));
    let (mut gross_total, mut fee_total) = (0u64, 0u64);
    for approval in approvals.iter().filter(|a| a.cancelled_at.is_none()) {
        let Some(approved_at) = utc(approval.approved_at).filter(|at| at.date_naive() == date)
        else {
            continue;
        };
        let fee = fee(approval.amount);
        gross_total = gross_total.saturating_add(approval.amount);
        fee_total = fee_total.saturating_add(fee);
        push_row(
            &mut csv,
            [
                format!(
                    "{} {:02}:{:02}:{:02}",
                    approved_at.date_naive(),
                    approved_at.hour(),
                    approved_at.minute(),
                    approved_at.second()
                ),
                MERCHANT_ID.to_owned(),
                approval.order_id.clone(),
                PAYMENT_METHOD.to_owned(),
                won(approval.amount),
                won(fee),
                won(approval.amount - fee),
            ],
        );
    }
    push_row(
        &mut csv,
        [
            SUMMARY_LABEL.to_owned(),
            String::new(),
            String::new(),
            String::new(),
            won(gross_total),
            won(fee_total),
            won(gross_total - fee_total),
        ],
    );
    csv
}

/// The file's name in the `content-disposition` header.
pub fn file_name(date: NaiveDate) -> String {
    format!("settlement-{date}.csv")
}

/// Epoch milliseconds as a UTC time; `None` beyond what chrono represents.
fn utc(epoch_ms: u64) -> Option<DateTime<chrono::Utc>> {
    DateTime::from_timestamp_millis(i64::try_from(epoch_ms).ok()?)
}

/// Never more than the amount, so the net amount is not negative.
fn fee(amount: u64) -> u64 {
    amount / 1000 * FEE_PER_MILLE + amount % 1000 * FEE_PER_MILLE / 1000
}

/// `1234567` → `1,234,567원`.
pub fn won(amount: u64) -> String {
    let digits = amount.to_string();
    let mut text = String::with_capacity(digits.len() * 4 / 3 + 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text.push('원');
    text
}

fn push_row<const N: usize>(csv: &mut String, fields: [String; N]) {
    for (index, field) in fields.iter().enumerate() {
        if index > 0 {
            csv.push(',');
        }
        if field.contains([',', '"', '\r', '\n']) {
            csv.push('"');
            csv.push_str(&field.replace('"', "\"\""));
            csv.push('"');
        } else {
            csv.push_str(field);
        }
    }
    csv.push_str("\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER_LINE: &str = "거래일시,가맹점ID,주문번호,결제수단,결제금액,수수료,정산금액\r\n";

    /// 2024-05-01T00:00:00Z in epoch milliseconds.
    const MAY_1: u64 = 1_714_521_600_000;
    const DAY_MS: u64 = 86_400_000;

    fn may_1() -> NaiveDate {
        NaiveDate::from_ymd_opt(2024, 5, 1).expect("valid date")
    }

    fn approval(order_id: &str, amount: u64, approved_at: u64) -> Approval {
        Approval {
            order_id: order_id.to_owned(),
            payment_key: format!("pk-{order_id}"),
            amount,
            approved_at,
            request_count: 1,
            cancelled_at: None,
        }
    }

    #[test]
    fn rows_have_the_pg_quirks_and_a_total() {
        let approvals = [
            approval("o-1", 1_234_567, MAY_1 + 34_200_000),
            approval("o-2", 999, MAY_1 + DAY_MS - 1),
        ];
        assert_eq!(
            settlement_csv(&approvals, may_1()),
            format!(
                "{HEADER_LINE}\
                 2024-05-01 09:30:00,M-GATEWAY-SIM,o-1,\"카드,일시불\",\"1,234,567원\",\"30,864원\",\"1,203,703원\"\r\n\
                 2024-05-01 23:59:59,M-GATEWAY-SIM,o-2,\"카드,일시불\",999원,24원,975원\r\n\
                 합계,,,,\"1,235,566원\",\"30,888원\",\"1,204,678원\"\r\n"
            )
        );
    }

    #[test]
    fn cancelled_and_other_days_are_left_out() {
        let mut cancelled = approval("o-cancelled", 5000, MAY_1 + 10);
        cancelled.cancelled_at = Some(MAY_1 + DAY_MS + 10);
        let approvals = [
            approval("o-before", 1000, MAY_1 - 1),
            cancelled,
            approval("o-kept", 2000, MAY_1),
            approval("o-after", 3000, MAY_1 + DAY_MS),
        ];
        let csv = settlement_csv(&approvals, may_1());
        let orders: Vec<_> = csv
            .split("\r\n")
            .filter_map(|line| line.split(',').nth(2))
            .collect();
        assert_eq!(orders, ["주문번호", "o-kept", ""]);
        assert!(
            csv.ends_with("합계,,,,\"2,000원\",50원,\"1,950원\"\r\n"),
            "{csv}"
        );
    }

    #[test]
    fn declined_charges_are_not_approvals_so_never_listed() {
        use crate::ledger::{ConfirmRequest, Ledger, Processing};

        let mut ledger = Ledger::default();
        for (order_id, decline) in [("o-approved", false), ("o-declined", true)] {
            let request = ConfirmRequest {
                payment_key: format!("pk-{order_id}"),
                order_id: order_id.into(),
                amount: 1000,
            };
            let received = ledger.receive(request, MAY_1, None).expect("no cap");
            let processing = Processing {
                idempotent: true,
                decline,
                notify: false,
                amount_delta: 0,
            };
            ledger.process(received, MAY_1, processing);
        }
        let csv = settlement_csv(&ledger.snapshot().approvals, may_1());
        assert!(csv.contains(",o-approved,"), "{csv}");
        assert!(!csv.contains("o-declined"), "{csv}");
    }

    #[test]
    fn empty_day_is_the_header_and_a_zero_total() {
        assert_eq!(
            settlement_csv(&[], may_1()),
            format!("{HEADER_LINE}합계,,,,0원,0원,0원\r\n")
        );
    }

    #[test]
    fn fields_with_commas_quotes_or_line_breaks_are_quoted() {
        let approvals = [approval("o,\"1\"\n", 10, MAY_1)];
        let csv = settlement_csv(&approvals, may_1());
        assert!(
            csv.contains(",M-GATEWAY-SIM,\"o,\"\"1\"\"\n\",\"카드,일시불\",10원,0원,10원\r\n"),
            "{csv}"
        );
    }

    #[test]
    fn amounts_get_separators_in_groups_of_three() {
        let cases = [
            (0, "0원"),
            (999, "999원"),
            (1000, "1,000원"),
            (100_000, "100,000원"),
            (1_000_000, "1,000,000원"),
            (u64::MAX, "18,446,744,073,709,551,615원"),
        ];
        for (amount, text) in cases {
            assert_eq!(won(amount), text);
        }
    }

    #[test]
    fn fee_is_rounded_down_and_never_overflows() {
        assert_eq!(fee(39), 0);
        assert_eq!(fee(40), 1);
        assert_eq!(fee(10_000), 250);
        assert!(fee(u64::MAX) < u64::MAX);
    }

    #[test]
    fn dates_are_exactly_yyyy_mm_dd_and_real() {
        assert_eq!(parse_date("2024-05-01"), Some(may_1()));
        assert!(parse_date("2024-02-29").is_some());
        for bad in [
            "",
            "2023-02-29",
            "2024-13-01",
            "2024-5-1",
            "2024/05/01",
            "20240501",
            "2024-05-01T00:00:00Z",
            "+024-05-01",
            "２０２４-05-01",
        ] {
            assert_eq!(parse_date(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn header_names_are_among_the_origin_parser_synonyms() {
        // Copied from origin/src/settlement/parser.rs (ORDER_ID_HEADERS,
        // AMOUNT_HEADERS, SUMMARY_LABELS): the simulator cannot depend on
        // the origin.
        assert_eq!(HEADER[2], "주문번호");
        assert_eq!(HEADER[4], "결제금액");
        let amount_synonyms = ["금액", "결제금액", "정산금액", "승인금액", "거래금액"];
        let first_amount = HEADER
            .iter()
            .position(|name| amount_synonyms.contains(name));
        assert_eq!(first_amount, Some(4), "the gross amount comes first");
        assert_eq!(SUMMARY_LABEL, "합계");
    }
}
