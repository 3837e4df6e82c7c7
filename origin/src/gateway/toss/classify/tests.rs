//! Toss's answers, as Toss documents them and as they go wrong.

use serde_json::json;

use super::*;

fn payment(status: &str, amount: serde_json::Value) -> Vec<u8> {
    json!({
        "version": "2022-11-16",
        "paymentKey": "pk-1",
        "orderId": "order-1",
        "status": status,
        "totalAmount": amount,
        "balanceAmount": amount,
        "currency": "KRW",
        "method": "카드",
        "requestedAt": "2024-02-13T12:17:57+09:00",
        "approvedAt": if status == "DONE" { json!("2024-02-13T12:18:14+09:00") } else { json!(null) },
        "failure": if status == "ABORTED" { json!({"code": "REJECT_CARD_PAYMENT", "message": "한도초과"}) } else { json!(null) },
    })
    .to_string()
    .into_bytes()
}

fn error(code: &str) -> Vec<u8> {
    json!({ "code": code, "message": "메시지" })
        .to_string()
        .into_bytes()
}

#[test]
fn a_done_payment_is_an_approval_with_its_order_amount_currency_and_time() {
    assert_eq!(
        confirm(200, &payment("DONE", json!(15_000))),
        GatewayAnswer::Approved(Approval {
            order_id: "order-1".into(),
            amount: 15_000,
            currency: "KRW".into(),
            approved_at: Some(1_707_794_294_000),
            reference: None,
        })
    );
}

#[test]
fn a_decline_is_its_code_whether_an_error_or_a_200_with_a_failure_inside() {
    assert_eq!(
        confirm(403, &error("REJECT_CARD_PAYMENT")),
        GatewayAnswer::Declined {
            code: "REJECT_CARD_PAYMENT".into()
        }
    );
    assert_eq!(
        confirm(200, &payment("ABORTED", json!(15_000))),
        GatewayAnswer::Declined {
            code: "REJECT_CARD_PAYMENT".into()
        }
    );
    assert_eq!(
        confirm(404, &error("NOT_FOUND_PAYMENT_SESSION")),
        GatewayAnswer::Declined {
            code: "NOT_FOUND_PAYMENT_SESSION".into()
        }
    );
}

#[test]
fn our_own_mistakes_are_not_sent_never_a_decline() {
    for (status, code) in [
        (401, "UNAUTHORIZED_KEY"),
        (400, "INVALID_REQUEST"),
        (400, "INVALID_IDEMPOTENCY_KEY"),
        (404, "NOT_FOUND_PAYMENT"),
    ] {
        assert_eq!(
            confirm(status, &error(code)),
            GatewayAnswer::Rejected {
                status,
                code: code.into()
            }
        );
    }
}

#[test]
fn a_429_is_throttled_only_unread_or_as_the_simulator_s_line_full() {
    for body in [
        error("TOO_MANY_REQUESTS"),
        b"<html>Too Many Requests</html>".to_vec(),
        br#"{"message":"slow down"}"#.to_vec(),
        Vec::new(),
    ] {
        assert_eq!(
            confirm(429, &body),
            GatewayAnswer::Throttled {
                code: "TOO_MANY_REQUESTS".into()
            },
            "{}",
            String::from_utf8_lossy(&body)
        );
    }
    assert!(matches!(
        look_up(429, &error("TOO_MANY_REQUESTS")),
        GatewayStatus::Unavailable { .. }
    ));
    assert!(matches!(
        cancel(429, &error("TOO_MANY_REQUESTS")),
        CancelAnswer::Unavailable { .. }
    ));
}

#[test]
fn a_429_naming_a_code_listed_unknown_or_in_no_list_is_unknown() {
    for code in [
        "ALREADY_PROCESSED_PAYMENT",
        "PROVIDER_ERROR",
        "IDEMPOTENT_REQUEST_PROCESSING",
        "FAILED_INTERNAL_SYSTEM_PROCESSING",
        "RATE_LIMIT_EXCEEDED",
        "",
    ] {
        let answer = confirm(429, &error(code));
        assert!(
            matches!(answer, GatewayAnswer::Unknown { .. }),
            "429 {code}: {answer:?}"
        );
    }
}

#[test]
fn what_may_have_charged_or_cannot_be_read_is_unknown() {
    let cases: Vec<(u16, Vec<u8>)> = vec![
        (400, error("ALREADY_PROCESSED_PAYMENT")),
        (400, error("PROVIDER_ERROR")),
        (409, error("IDEMPOTENT_REQUEST_PROCESSING")),
        (500, error("FAILED_INTERNAL_SYSTEM_PROCESSING")),
        (502, b"<html>Bad Gateway</html>".to_vec()),
        (400, error("A_CODE_IN_NO_LIST")),
        (200, b"{\"orderId\":\"order-1\",\"status\":\"DO".to_vec()),
        (200, b"not json".to_vec()),
        (
            200,
            br#"{"orderId":"order-1","status":"DONE","currency":"KRW"}"#.to_vec(),
        ),
        (200, payment("IN_PROGRESS", json!(15_000))),
        (200, payment("WAITING_FOR_DEPOSIT", json!(15_000))),
        (200, payment("SOMETHING_NEW", json!(15_000))),
        (200, payment("DONE", json!(726.24))),
        (400, b"".to_vec()),
    ];
    for (status, body) in cases {
        let answer = confirm(status, &body);
        assert!(
            matches!(answer, GatewayAnswer::Unknown { .. }),
            "{status} {}: {answer:?}",
            String::from_utf8_lossy(&body)
        );
    }
}

#[test]
fn a_look_up_reads_every_status_and_only_toss_s_not_found_is_not_found() {
    let approved = look_up(200, &payment("DONE", json!(15_000)));
    assert!(matches!(
        approved,
        GatewayStatus::Approved(Approval { amount: 15_000, .. })
    ));
    for (state, expected) in [
        ("ABORTED", GatewayStatus::Declined),
        ("EXPIRED", GatewayStatus::Declined),
        ("CANCELED", GatewayStatus::Cancelled),
        ("READY", GatewayStatus::Pending),
        ("IN_PROGRESS", GatewayStatus::Pending),
        ("WAITING_FOR_DEPOSIT", GatewayStatus::Pending),
    ] {
        assert_eq!(
            look_up(200, &payment(state, json!(15_000))),
            expected,
            "{state}"
        );
    }
    assert_eq!(
        look_up(404, &error("NOT_FOUND_PAYMENT")),
        GatewayStatus::NotFound
    );
    for (status, body) in [
        (404, b"Not Found".to_vec()),
        (500, error("UNKNOWN_ERROR")),
        (200, payment("PARTIAL_CANCELED", json!(15_000))),
        (200, payment("NEW_STATUS", json!(15_000))),
        (200, b"[]".to_vec()),
    ] {
        assert!(
            matches!(look_up(status, &body), GatewayStatus::Unavailable { .. }),
            "{status} {}",
            String::from_utf8_lossy(&body)
        );
    }
}

#[test]
fn a_cancel_is_done_only_when_toss_says_so() {
    assert_eq!(
        cancel(200, &payment("CANCELED", json!(15_000))),
        CancelAnswer::Cancelled
    );
    assert_eq!(
        cancel(400, &error("ALREADY_CANCELED_PAYMENT")),
        CancelAnswer::Cancelled
    );
    assert_eq!(
        cancel(403, &error("NOT_CANCELABLE_PAYMENT")),
        CancelAnswer::Refused {
            status: 403,
            code: "NOT_CANCELABLE_PAYMENT".into()
        }
    );
    for (status, body) in [
        (500, error("FAILED_REFUND_PROCESS")),
        (403, error("FORBIDDEN_CONSECUTIVE_REQUEST")),
        (409, error("IDEMPOTENT_REQUEST_PROCESSING")),
        (200, payment("DONE", json!(15_000))),
        (200, b"{".to_vec()),
        (400, error("SOMETHING_NEW")),
    ] {
        assert!(
            matches!(cancel(status, &body), CancelAnswer::Unavailable { .. }),
            "{status} {}",
            String::from_utf8_lossy(&body)
        );
    }
}
