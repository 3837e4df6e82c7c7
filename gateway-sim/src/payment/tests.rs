//! The Payment object, status by status, and Toss's two time formats.

use serde_json::{json, Value};

use super::*;

/// 2023-11-30T15:05:07.250Z: 2023-12-01 00:05:07.250 in Seoul.
const AT: u64 = 1_701_356_707_250;

fn record(status: PaymentStatus) -> PaymentRecord {
    let decided = status != PaymentStatus::InProgress;
    let approved = matches!(status, PaymentStatus::Done | PaymentStatus::Canceled);
    PaymentRecord {
        payment_key: "pk-1".into(),
        order_id: "order-1".into(),
        status,
        amount: 15_000,
        requested_at: AT,
        approved_at: approved.then_some(AT + 1000),
        transaction_key: decided.then(|| "TX-APPROVE".into()),
        approve_no: approved.then(|| "00000007".into()),
        cancel: (status == PaymentStatus::Canceled).then(|| CancelRecord {
            transaction_key: "TX-CANCEL".into(),
            reason: "changed my mind".into(),
            canceled_at: AT + 60_000,
            amount: 15_000,
        }),
    }
}

fn object(status: PaymentStatus) -> Value {
    serde_json::to_value(Payment::of(&record(status))).expect("serializable")
}

#[test]
fn a_done_payment_is_the_whole_toss_object() {
    assert_eq!(
        object(PaymentStatus::Done),
        json!({
            "version": "2022-11-16",
            "mId": "M-GATEWAY-SIM",
            "lastTransactionKey": "TX-APPROVE",
            "paymentKey": "pk-1",
            "orderId": "order-1",
            "orderName": ORDER_NAME,
            "type": "NORMAL",
            "method": "카드",
            "status": "DONE",
            "requestedAt": "2023-12-01T00:05:07+09:00",
            "approvedAt": "2023-12-01T00:05:08+09:00",
            "useEscrow": false,
            "cultureExpense": false,
            "totalAmount": 15_000,
            "balanceAmount": 15_000,
            "suppliedAmount": 13_636,
            "vat": 1_364,
            "taxFreeAmount": 0,
            "taxExemptionAmount": 0,
            "currency": "KRW",
            "cancels": null,
            "failure": null,
            "card": {
                "amount": 15_000,
                "issuerCode": "71",
                "acquirerCode": "71",
                "number": "43301234****123*",
                "installmentPlanMonths": 0,
                "approveNo": "00000007",
                "useCardPoint": false,
                "cardType": "신용",
                "ownerType": "개인",
                "acquireStatus": "READY",
                "isInterestFree": false,
                "interestPayer": null,
            },
            "virtualAccount": null,
            "transfer": null,
            "mobilePhone": null,
            "giftCertificate": null,
            "easyPay": null,
            "cashReceipt": null,
            "discount": null,
            "secret": null,
            "receipt": {
                "url": "https://dashboard.tosspayments.com/receipt/redirection?transactionId=TX-APPROVE&ref=PX"
            },
            "checkout": { "url": "https://api.tosspayments.com/v1/payments/pk-1/checkout" },
            "isPartialCancelable": false,
            "country": "KR",
            "metadata": null,
        })
    );
}

#[test]
fn an_aborted_payment_has_its_failure_and_no_approval() {
    let payment = object(PaymentStatus::Aborted);
    assert_eq!(payment["status"], "ABORTED");
    assert_eq!(
        payment["failure"],
        json!({ "code": "REJECT_CARD_PAYMENT", "message": codes::REJECT_CARD_PAYMENT.message })
    );
    assert_eq!(payment["approvedAt"], Value::Null);
    assert_eq!(payment["card"], Value::Null);
    assert_eq!(payment["receipt"], Value::Null);
    assert_eq!(payment["cancels"], Value::Null);
    assert_eq!(payment["lastTransactionKey"], "TX-APPROVE");
}

#[test]
fn a_canceled_payment_lists_its_cancel_and_has_no_balance() {
    let payment = object(PaymentStatus::Canceled);
    assert_eq!(payment["status"], "CANCELED");
    assert_eq!(payment["totalAmount"], 15_000, "never changes");
    assert_eq!(payment["balanceAmount"], 0);
    assert_eq!(payment["lastTransactionKey"], "TX-CANCEL");
    assert_eq!(payment["card"]["acquireStatus"], "CANCELED");
    assert_eq!(payment["approvedAt"], "2023-12-01T00:05:08+09:00");
    assert_eq!(
        payment["cancels"],
        json!([{
            "transactionKey": "TX-CANCEL",
            "cancelReason": "changed my mind",
            "canceledAt": "2023-12-01T00:06:07+09:00",
            "cancelAmount": 15_000,
            "taxFreeAmount": 0,
            "taxExemptionAmount": 0,
            "refundableAmount": 0,
            "easyPayDiscountAmount": 0,
            "receiptKey": "TX-CANCEL",
            "cancelStatus": "DONE",
            "cancelRequestId": null,
        }])
    );
}

#[test]
fn an_in_progress_payment_has_no_transaction_yet() {
    let payment = object(PaymentStatus::InProgress);
    assert_eq!(payment["status"], "IN_PROGRESS");
    assert_eq!(payment["approvedAt"], Value::Null);
    assert_eq!(payment["lastTransactionKey"], Value::Null);
    assert_eq!(payment["requestedAt"], "2023-12-01T00:05:07+09:00");
    assert_eq!(payment["balanceAmount"], 15_000);
}

#[test]
fn vat_is_an_eleventh_rounded_half_up() {
    for (total, vat) in [(0, 0), (5, 0), (6, 1), (11, 1), (15_000, 1_364), (1000, 91)] {
        let mut record = record(PaymentStatus::Done);
        record.amount = total;
        let payment = Payment::of(&record);
        assert_eq!((payment.vat, payment.supplied_amount), (vat, total - vat));
    }
}

#[test]
fn times_are_seoul_s_with_the_offset_and_webhook_times_without() {
    assert_eq!(seoul_time(AT), "2023-12-01T00:05:07+09:00");
    assert_eq!(seoul_time(0), "1970-01-01T09:00:00+09:00");
    assert_eq!(webhook_time(AT), "2023-12-01T00:05:07.250000");
}
