//! Every error code Toss Payments publishes for confirm and cancel, and its class. The
//! same table, with each code's source, is in `docs/design/gateways.md`; a test keeps the
//! two equal. Codes are an open set: a code in no list is unknown, never declined.

/// What an error code says happened to a confirm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The card, its issuer or a limit refused the charge.
    Declined,
    /// Our configuration or our request was refused before processing: nobody was
    /// charged, and an operator must look.
    NotSent,
    /// It may have been processed: look it up; never fail it, never send it again under a
    /// new key.
    Unknown,
}

/// Confirm's codes that are a customer's decline. `NOT_FOUND_PAYMENT_SESSION` is here:
/// the 10-minute confirm window has passed, so it can never be charged.
pub const DECLINED: &[&str] = &[
    "REJECT_CARD_PAYMENT",
    "REJECT_CARD_COMPANY",
    "REJECT_ACCOUNT_PAYMENT",
    "REJECT_TOSSPAY_INVALID_ACCOUNT",
    "INVALID_REJECT_CARD",
    "INVALID_CARD_EXPIRATION",
    "INVALID_STOPPED_CARD",
    "INVALID_CARD_LOST_OR_STOLEN",
    "INVALID_CARD_NUMBER",
    "INVALID_PASSWORD",
    "EXCEED_MAX_CARD_INSTALLMENT_PLAN",
    "INVALID_CARD_INSTALLMENT_PLAN",
    "NOT_SUPPORTED_INSTALLMENT_PLAN_CARD_OR_MERCHANT",
    "NOT_SUPPORTED_MONTHLY_INSTALLMENT_PLAN",
    "EXCEED_MAX_DAILY_PAYMENT_COUNT",
    "EXCEED_MAX_PAYMENT_AMOUNT",
    "EXCEED_MAX_ONE_DAY_AMOUNT",
    "EXCEED_MAX_ONE_DAY_WITHDRAW_AMOUNT",
    "EXCEED_MAX_ONE_TIME_WITHDRAW_AMOUNT",
    "EXCEED_MAX_AUTH_COUNT",
    "BELOW_MINIMUM_AMOUNT",
    "NOT_ALLOWED_POINT_USE",
    "FDS_ERROR",
    "NOT_AVAILABLE_BANK",
    "NOT_AVAILABLE_PAYMENT",
    "RESTRICTED_TRANSFER_ACCOUNT",
    "NOT_FOUND_PAYMENT_SESSION",
];

/// Confirm's codes that say our request or configuration was refused unprocessed.
pub const NOT_SENT: &[&str] = &[
    "UNAUTHORIZED_KEY",
    "INVALID_API_KEY",
    "INCORRECT_BASIC_AUTH_FORMAT",
    "INVALID_REQUEST",
    "INVALID_IDEMPOTENCY_KEY",
    "INVALID_ORDER_ID",
    "INVALID_AUTHORIZE_AUTH",
    "INVALID_UNREGISTERED_SUBMALL",
    "NOT_REGISTERED_BUSINESS",
    "NOT_FOUND_TERMINAL_ID",
    "UNAPPROVED_ORDER_ID",
    "NOT_FOUND_PAYMENT",
];

/// Confirm's codes named unknown on purpose (every 5xx is unknown whatever its code):
/// temporary errors, an earlier confirm that went through, one still running, a
/// "repeated request" (`FORBIDDEN_CONSECUTIVE_REQUEST`: another confirm of the payment
/// may be the one being processed), and a refusal whose meaning Toss does not say.
pub const UNKNOWN: &[&str] = &[
    "ALREADY_PROCESSED_PAYMENT",
    "FORBIDDEN_CONSECUTIVE_REQUEST",
    "PROVIDER_ERROR",
    "IDEMPOTENT_REQUEST_PROCESSING",
    "FORBIDDEN_REQUEST",
    "FAILED_PAYMENT_INTERNAL_SYSTEM_PROCESSING",
    "FAILED_INTERNAL_SYSTEM_PROCESSING",
    "UNKNOWN_PAYMENT_ERROR",
    "CARD_PROCESSING_ERROR",
    "COMMON_ERROR",
    "UNKNOWN_ERROR",
];

/// Cancel's codes that mean the charge is given back already: no money is held.
pub const CANCELLED_BEFORE: &[&str] = &["ALREADY_CANCELED_PAYMENT", "ALREADY_REFUND_PAYMENT"];

/// Cancel's codes that refuse it for good as asked: an operator must look.
pub const CANCEL_REFUSED: &[&str] = &[
    "INVALID_REFUND_ACCOUNT_INFO",
    "NOT_MATCHES_REFUNDABLE_AMOUNT",
    "REFUND_REJECTED",
    "NOT_CANCELABLE_AMOUNT",
    "NOT_CANCELABLE_PAYMENT",
    "EXCEED_MAX_REFUND_DUE",
    "EXCEED_MAX_REFUND_AMOUNT",
    "NOT_ALLOWED_PARTIAL_REFUND",
    "NOT_FOUND_PAYMENT",
    "UNAUTHORIZED_KEY",
    "INVALID_REQUEST",
];

/// Cancel's codes after which the cancel may be sent again later, under the same key:
/// `FORBIDDEN_CONSECUTIVE_REQUEST` (too soon), one still running, and its 5xx.
pub const CANCEL_LATER: &[&str] = &[
    "FORBIDDEN_CONSECUTIVE_REQUEST",
    "IDEMPOTENT_REQUEST_PROCESSING",
    "FAILED_REFUND_PROCESS",
    "FAILED_METHOD_HANDLING_CANCEL",
    "COMMON_ERROR",
    "UNKNOWN_ERROR",
];

/// The class of a confirm's error answer.
pub fn confirm_class(status: u16, code: &str) -> Class {
    if status >= 500 || UNKNOWN.contains(&code) {
        Class::Unknown
    } else if DECLINED.contains(&code) {
        Class::Declined
    } else if NOT_SENT.contains(&code) {
        Class::NotSent
    } else {
        Class::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_code_is_in_two_classes_of_one_call() {
        for code in DECLINED {
            assert!(
                !NOT_SENT.contains(code) && !UNKNOWN.contains(code),
                "{code}"
            );
        }
        for code in NOT_SENT {
            assert!(!UNKNOWN.contains(code), "{code}");
        }
        for code in CANCELLED_BEFORE {
            assert!(
                !CANCEL_REFUSED.contains(code) && !CANCEL_LATER.contains(code),
                "{code}"
            );
        }
        for code in CANCEL_REFUSED {
            assert!(!CANCEL_LATER.contains(code), "{code}");
        }
    }

    /// `docs/design/gateways.md`'s table says of every confirm code and every cancel code
    /// what these lists say, and has no row in neither.
    #[test]
    fn the_design_page_s_table_is_these_lists() {
        let page = include_str!("../../../../docs/design/gateways.md");
        let table = page
            .split("### Every code Toss publishes")
            .nth(1)
            .and_then(|rest| rest.split("\n#").next())
            .expect("the table's section");
        let mut rows = std::collections::BTreeMap::new();
        for line in table.lines().filter(|line| line.starts_with("| `")) {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let code = cells[1].trim_matches('`');
            rows.insert(code.to_owned(), [cells[3].to_owned(), cells[4].to_owned()]);
        }
        let confirm = [
            (DECLINED, "declined"),
            (NOT_SENT, "not sent"),
            (UNKNOWN, "unknown"),
        ];
        let cancel = [
            (CANCELLED_BEFORE, "cancelled"),
            (CANCEL_REFUSED, "refused"),
            (CANCEL_LATER, "sent again"),
        ];
        for (column, lists) in [(0, &confirm), (1, &cancel)] {
            for (list, class) in lists {
                for code in *list {
                    let row = rows
                        .get(*code)
                        .unwrap_or_else(|| panic!("{code} has no row"));
                    let cell = &row[column];
                    assert!(cell.starts_with(class), "{code}: {cell}, not {class}");
                }
            }
            let listed: usize = lists.iter().map(|(list, _)| list.len()).sum();
            let classed = rows.values().filter(|row| row[column] != "—").count();
            assert_eq!(classed, listed, "every class in the column is in a list");
        }
        for (code, row) in &rows {
            assert!(row.iter().any(|cell| cell != "—"), "{code} has no class");
        }
    }

    #[test]
    fn every_5xx_and_every_code_in_no_list_is_unknown() {
        assert_eq!(confirm_class(500, "REJECT_CARD_PAYMENT"), Class::Unknown);
        assert_eq!(confirm_class(503, "INVALID_REQUEST"), Class::Unknown);
        assert_eq!(
            confirm_class(400, "A_CODE_TOSS_ADDS_NEXT_YEAR"),
            Class::Unknown
        );
        assert_eq!(confirm_class(400, ""), Class::Unknown);
        assert_eq!(
            confirm_class(400, "ALREADY_PROCESSED_PAYMENT"),
            Class::Unknown
        );
        assert_eq!(confirm_class(400, "PROVIDER_ERROR"), Class::Unknown);
        assert_eq!(
            confirm_class(409, "IDEMPOTENT_REQUEST_PROCESSING"),
            Class::Unknown
        );
        assert_eq!(confirm_class(403, "REJECT_CARD_PAYMENT"), Class::Declined);
        assert_eq!(
            confirm_class(404, "NOT_FOUND_PAYMENT_SESSION"),
            Class::Declined
        );
        assert_eq!(confirm_class(401, "UNAUTHORIZED_KEY"), Class::NotSent);
    }
}
