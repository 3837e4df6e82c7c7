//! Toss's error codes: the ones the simulator answers itself, and the HTTP
//! status of every code a test code may ask for.
//!
//! Statuses follow the reference (`payment-gateways.md` §1.5): Toss's
//! official full list where it has the code, the agreed third-party
//! transcriptions of the confirm table otherwise. Messages are the
//! simulator's wording except `NOT_FOUND_PAYMENT`'s, which is Toss's verbatim;
//! clients branch on `code`, never on `message`.

use axum::http::StatusCode;

/// One error as the wire carries it: an HTTP status and `{"code","message"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TossCode {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: &'static str,
}

const fn toss(status: StatusCode, code: &'static str, message: &'static str) -> TossCode {
    TossCode {
        status,
        code,
        message,
    }
}

/// Toss's status for this code is unconfirmed: the two transcriptions say 400
/// and 403. The simulator answers 400, a malformed request.
pub const INCORRECT_BASIC_AUTH_FORMAT: TossCode = toss(
    StatusCode::BAD_REQUEST,
    "INCORRECT_BASIC_AUTH_FORMAT",
    "잘못된 요청입니다. Authorization: Basic base64(secretKey + \":\") 형식이어야 합니다.",
);
pub const UNAUTHORIZED_KEY: TossCode = toss(
    StatusCode::UNAUTHORIZED,
    "UNAUTHORIZED_KEY",
    "인증되지 않은 시크릿 키 혹은 클라이언트 키 입니다.",
);
pub const INVALID_REQUEST: TossCode = toss(
    StatusCode::BAD_REQUEST,
    "INVALID_REQUEST",
    "잘못된 요청입니다.",
);
pub const INVALID_ORDER_ID: TossCode = toss(
    StatusCode::BAD_REQUEST,
    "INVALID_ORDER_ID",
    "orderId는 영문 대소문자, 숫자, 특수문자 -, _ 로 이루어진 6자 이상 64자 이하의 문자열이어야 합니다.",
);
pub const INVALID_IDEMPOTENCY_KEY: TossCode = toss(
    StatusCode::BAD_REQUEST,
    "INVALID_IDEMPOTENCY_KEY",
    "멱등키는 1자 이상 300자 이하의 문자열이어야 합니다.",
);
pub const IDEMPOTENT_REQUEST_PROCESSING: TossCode = toss(
    StatusCode::CONFLICT,
    "IDEMPOTENT_REQUEST_PROCESSING",
    "이전 멱등 요청이 처리 중입니다. 다시 한번 요청해서 응답을 확인하세요.",
);
pub const ALREADY_PROCESSED_PAYMENT: TossCode = toss(
    StatusCode::BAD_REQUEST,
    "ALREADY_PROCESSED_PAYMENT",
    "이미 처리된 결제 입니다.",
);
pub const DUPLICATED_ORDER_ID: TossCode = toss(
    StatusCode::BAD_REQUEST,
    "DUPLICATED_ORDER_ID",
    "이미 승인 및 취소가 진행된 중복된 주문번호 입니다. 다른 주문번호로 진행해주세요.",
);
pub const REJECT_CARD_PAYMENT: TossCode = toss(
    StatusCode::FORBIDDEN,
    "REJECT_CARD_PAYMENT",
    "한도초과 혹은 잔액부족으로 결제에 실패했습니다.",
);
pub const NOT_FOUND_PAYMENT: TossCode = toss(
    StatusCode::NOT_FOUND,
    "NOT_FOUND_PAYMENT",
    "존재하지 않는 결제 정보 입니다.",
);
pub const ALREADY_CANCELED_PAYMENT: TossCode = toss(
    StatusCode::BAD_REQUEST,
    "ALREADY_CANCELED_PAYMENT",
    "이미 취소된 결제 입니다.",
);
pub const NOT_CANCELABLE_PAYMENT: TossCode = toss(
    StatusCode::FORBIDDEN,
    "NOT_CANCELABLE_PAYMENT",
    "취소 할 수 없는 결제 입니다.",
);
pub const NOT_CANCELABLE_AMOUNT: TossCode = toss(
    StatusCode::FORBIDDEN,
    "NOT_CANCELABLE_AMOUNT",
    "취소 할 수 없는 금액 입니다.",
);
pub const NOT_ALLOWED_PARTIAL_REFUND: TossCode = toss(
    StatusCode::FORBIDDEN,
    "NOT_ALLOWED_PARTIAL_REFUND",
    "부분 취소가 불가능한 결제 입니다.",
);
pub const FORBIDDEN_CONSECUTIVE_REQUEST: TossCode = toss(
    StatusCode::FORBIDDEN,
    "FORBIDDEN_CONSECUTIVE_REQUEST",
    "반복적인 요청은 허용되지 않습니다. 잠시 후 다시 시도해주세요.",
);
pub const FAILED_INTERNAL_SYSTEM_PROCESSING: TossCode = toss(
    StatusCode::INTERNAL_SERVER_ERROR,
    "FAILED_INTERNAL_SYSTEM_PROCESSING",
    "내부 시스템 처리 작업이 실패했습니다. 잠시 후 다시 시도해주세요.",
);
pub const UNKNOWN_ERROR: TossCode = toss(
    StatusCode::INTERNAL_SERVER_ERROR,
    "UNKNOWN_ERROR",
    "알 수 없는 에러가 발생했습니다. 잠시 후 다시 시도해주세요.",
);

/// The status Toss answers `code` with, for `TossPayments-Test-Code` and the
/// `testCode` fault: the confirm table's codes, the full list's, and 400 for a
/// code in neither (the status of most of the table).
pub fn test_code_status(code: &str) -> StatusCode {
    match code {
        "UNAUTHORIZED_KEY" => StatusCode::UNAUTHORIZED,
        "REJECT_ACCOUNT_PAYMENT"
        | "REJECT_CARD_PAYMENT"
        | "REJECT_CARD_COMPANY"
        | "FORBIDDEN_REQUEST"
        | "REJECT_TOSSPAY_INVALID_ACCOUNT"
        | "EXCEED_MAX_AUTH_COUNT"
        | "EXCEED_MAX_ONE_DAY_AMOUNT"
        | "NOT_AVAILABLE_BANK"
        | "INVALID_PASSWORD"
        | "FDS_ERROR"
        | "FORBIDDEN_CONSECUTIVE_REQUEST" => StatusCode::FORBIDDEN,
        "NOT_FOUND_TERMINAL_ID" | "NOT_FOUND_PAYMENT" | "NOT_FOUND_PAYMENT_SESSION" => {
            StatusCode::NOT_FOUND
        }
        "IDEMPOTENT_REQUEST_PROCESSING" => StatusCode::CONFLICT,
        "CARD_PROCESSING_ERROR"
        | "FAILED_PAYMENT_INTERNAL_SYSTEM_PROCESSING"
        | "FAILED_INTERNAL_SYSTEM_PROCESSING"
        | "UNKNOWN_PAYMENT_ERROR"
        | "COMMON_ERROR"
        | "UNKNOWN_ERROR" => StatusCode::INTERNAL_SERVER_ERROR,
        // The confirm table's 400s (ALREADY_PROCESSED_PAYMENT, PROVIDER_ERROR,
        // INVALID_CARD_EXPIRATION, INVALID_STOPPED_CARD, …) and any code in
        // no list.
        _ => StatusCode::BAD_REQUEST,
    }
}

/// A test code as a header or the fault may give it: 1 to 64 of `A-Z`, `0-9`
/// and `_`, starting with a letter, as every Toss code is.
pub fn is_code_shaped(code: &str) -> bool {
    (1..=64).contains(&code.len())
        && code.starts_with(|c: char| c.is_ascii_uppercase())
        && code
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_codes_get_toss_s_status() {
        for (code, status) in [
            ("INVALID_CARD_EXPIRATION", 400),
            ("PROVIDER_ERROR", 400),
            ("ALREADY_PROCESSED_PAYMENT", 400),
            ("UNAUTHORIZED_KEY", 401),
            ("REJECT_CARD_COMPANY", 403),
            ("FDS_ERROR", 403),
            ("NOT_FOUND_PAYMENT", 404),
            ("NOT_FOUND_PAYMENT_SESSION", 404),
            ("NOT_FOUND_TERMINAL_ID", 404),
            ("IDEMPOTENT_REQUEST_PROCESSING", 409),
            ("FAILED_PAYMENT_INTERNAL_SYSTEM_PROCESSING", 500),
            ("UNKNOWN_PAYMENT_ERROR", 500),
            ("COMMON_ERROR", 500),
            ("SOMETHING_NOBODY_LISTS", 400),
        ] {
            assert_eq!(test_code_status(code).as_u16(), status, "{code}");
        }
    }

    #[test]
    fn codes_are_upper_snake_case() {
        for good in ["A", "INVALID_CARD_EXPIRATION", "X9_1"] {
            assert!(is_code_shaped(good), "{good}");
        }
        for bad in ["", "invalid", "_X", "9X", "A-B", "A B", &"A".repeat(65)] {
            assert!(!is_code_shaped(bad), "{bad}");
        }
    }
}
