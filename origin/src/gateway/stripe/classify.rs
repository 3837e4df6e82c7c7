//! Stripe's answers read into the port's classes — pure: a status and a body in, an answer
//! out. By HTTP status and `code`, never by `type` alone: localstripe types every error
//! `invalid_request_error`, a decline included. What cannot be read (not JSON, a missing
//! field, a status in no list) is unknown for a confirm and unavailable for a look-up or
//! a cancel: only an answer that proves otherwise settles a payment.

use serde::Deserialize;

use super::objects::{reference, PaymentIntent, StripeError};
use crate::gateway::{CancelAnswer, Confirmed, GatewayAnswer, GatewayStatus};

/// A confirm's answer, with the PaymentIntent's id whenever the answer names one.
pub fn confirm(status: u16, body: &[u8]) -> Confirmed {
    Confirmed {
        answer: confirm_answer(status, body),
        reference: reference(body),
    }
}

fn confirm_answer(status: u16, body: &[u8]) -> GatewayAnswer {
    let unknown = |cause: String| GatewayAnswer::Unknown { cause };
    if status == 200 {
        let intent = match PaymentIntent::parse(body) {
            Ok(intent) => intent,
            Err(cause) => return unknown(format!("200, {cause}")),
        };
        return match intent.status.as_str() {
            "succeeded" => intent.approval().map_or_else(
                |cause| unknown(format!("200 succeeded, but {cause}")),
                GatewayAnswer::Approved,
            ),
            "requires_payment_method" | "canceled" => GatewayAnswer::Declined {
                code: intent.failure_code(),
            },
            "requires_capture" => unknown("200 requires_capture, never asked for".into()),
            // processing, requires_action, requires_confirmation, and any status to come.
            other => unknown(format!("200 with status {other}")),
        };
    }
    let error = StripeError::parse(body);
    if status == 429 {
        // Refused by the rate limiter, before the idempotency layer: nothing was done.
        let code = error.map_or_else(|| "rate_limit".into(), |error| error.code());
        return GatewayAnswer::Throttled { code };
    }
    let Some(error) = error else {
        return unknown(format!("{status} without a Stripe error body"));
    };
    match status {
        402 if error.is_decline() => GatewayAnswer::Declined {
            code: error.decline(),
        },
        // The key was used with other parameters: what the first request did is unknown.
        400 if error.is_idempotency() => unknown(format!("400 {}", error.code())),
        400 | 401 | 403 | 404 => GatewayAnswer::Rejected {
            status,
            code: error.code(),
        },
        // Every 5xx (a POST's 500 is replayed under its key: only a look-up tells), 409
        // idempotency_key_in_use (the first request still runs), 424, a 402 we cannot
        // name, and every status to come.
        _ => unknown(format!("{status} {}", error.code())),
    }
}

/// `GET /v1/payment_intents/{pi}`'s answer. The id was Stripe's own, so a 404 says the key
/// or the account changed, not that nobody was charged: it is unavailable, never not found.
pub fn look_up(status: u16, body: &[u8]) -> GatewayStatus {
    if status != 200 {
        let code = StripeError::parse(body).map_or_else(String::new, |error| error.code());
        return GatewayStatus::Unavailable {
            cause: format!("look-up answered {status} {code}"),
        };
    }
    PaymentIntent::parse(body).map_or_else(
        |cause| GatewayStatus::Unavailable { cause },
        |intent| intent.outcome(),
    )
}

/// The search for an order's PaymentIntent, or `None` for an order id the query language
/// cannot quote.
pub fn search_query(order_id: &str) -> Option<String> {
    (!order_id.contains(['\'', '\\'])).then(|| format!("metadata['order_id']:'{order_id}'"))
}

/// `GET /v1/payment_intents/search`'s answer. Search lags writes by up to an hour, and
/// the port does not know a payment's age: finding nothing is unavailable, never not
/// found. Two PaymentIntents for one order (one key makes one) are an operator's to read.
pub fn search(status: u16, body: &[u8]) -> GatewayStatus {
    #[derive(Deserialize)]
    struct Found {
        data: Vec<PaymentIntent>,
    }
    let unavailable = |cause: String| GatewayStatus::Unavailable { cause };
    if status != 200 {
        let code = StripeError::parse(body).map_or_else(String::new, |error| error.code());
        return unavailable(format!("search answered {status} {code}"));
    }
    match serde_json::from_slice::<Found>(body).map(|found| found.data) {
        Ok(found) => match found.as_slice() {
            [] => unavailable(
                "search found no PaymentIntent for the order yet (it lags up to an hour)".into(),
            ),
            [intent] => intent.outcome(),
            several => unavailable(format!(
                "{} PaymentIntents carry this order id",
                several.len()
            )),
        },
        Err(err) => unavailable(format!("not a search result: {err}")),
    }
}

/// A refund's answer (`POST /v1/refunds`).
pub fn cancel(status: u16, body: &[u8]) -> CancelAnswer {
    #[derive(Deserialize)]
    struct Refund {
        status: String,
    }
    let unavailable = |cause: String| CancelAnswer::Unavailable { cause };
    if status == 200 {
        return match serde_json::from_slice::<Refund>(body).map(|refund| refund.status) {
            Ok(state) if state == "succeeded" => CancelAnswer::Cancelled,
            Ok(state) if state == "failed" || state == "canceled" => CancelAnswer::Refused {
                status,
                code: format!("refund_{state}"),
            },
            // pending, requires_action, and any status to come: not given back yet.
            Ok(state) => unavailable(format!("the refund is {state}")),
            Err(err) => unavailable(format!("not a Refund: {err}")),
        };
    }
    let error = StripeError::parse(body);
    match error {
        Some(error) if error.code.as_deref() == Some("charge_already_refunded") => {
            CancelAnswer::Cancelled
        }
        Some(error) if (400..500).contains(&status) && !matches!(status, 409 | 429) => {
            CancelAnswer::Refused {
                status,
                code: error.code(),
            }
        }
        other => {
            let code = other.map_or_else(String::new, |error| error.code());
            unavailable(format!("refund answered {status} {code}"))
        }
    }
}

#[cfg(test)]
mod tests;
