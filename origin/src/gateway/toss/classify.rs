//! Toss's answers read into the port's classes — pure: a status and a body in, an answer
//! out. What cannot be read (not JSON, a missing field, a status in no list, a decimal
//! amount) is unknown for a confirm and unavailable for a look-up: only an answer that
//! proves otherwise settles a payment.
//!
//! A confirm's 429 is throttled — refused for our rate before it was served, so nothing
//! was charged — only when nothing in it says otherwise: no Toss error body (a limiter in
//! front of the PG), or the code [`THROTTLED`] (the simulator's capacity). Toss documents
//! no rate-limit status, so a 429 naming any other code is read by that code like any
//! status: a code listed unknown, or one in no list, is unknown. A look-up's or a cancel's
//! 429 is unavailable: asked again later.

use serde::Deserialize;

use super::codes::{self, Class};
use crate::gateway::{Approval, CancelAnswer, GatewayAnswer, GatewayStatus};

/// The fields of Toss's Payment object that decide anything.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Payment {
    order_id: String,
    status: String,
    total_amount: serde_json::Number,
    currency: String,
    approved_at: Option<String>,
    failure: Option<Failure>,
}

#[derive(Debug, Deserialize)]
struct Failure {
    code: Option<String>,
}

/// The code of a 429 refused for our rate: the simulator's line full (Toss publishes none).
const THROTTLED: &str = "TOO_MANY_REQUESTS";

/// Toss's error body, `{code, message}`.
#[derive(Debug, Deserialize)]
struct ErrorBody {
    code: String,
}

impl Payment {
    fn parse(body: &[u8]) -> Result<Self, String> {
        serde_json::from_slice(body).map_err(|err| format!("not a Toss Payment object: {err}"))
    }

    fn approval(&self) -> Result<Approval, String> {
        let amount = self.total_amount.as_i64().ok_or_else(|| {
            format!(
                "totalAmount {} is not a whole amount in minor units",
                self.total_amount
            )
        })?;
        let approved_at = match &self.approved_at {
            None => None,
            Some(at) => Some(
                chrono::DateTime::parse_from_rfc3339(at)
                    .map_err(|err| {
                        format!("approvedAt {at:?} is not a time with an offset: {err}")
                    })?
                    .timestamp_millis(),
            ),
        };
        Ok(Approval {
            order_id: self.order_id.clone(),
            amount,
            currency: self.currency.to_ascii_uppercase(),
            approved_at,
            reference: None,
        })
    }

    fn failure_code(&self) -> String {
        self.failure
            .as_ref()
            .and_then(|failure| failure.code.clone())
            .unwrap_or_else(|| self.status.clone())
    }
}

fn error_code(body: &[u8]) -> Option<String> {
    serde_json::from_slice::<ErrorBody>(body)
        .ok()
        .map(|error| error.code)
}

/// A confirm's answer.
pub fn confirm(status: u16, body: &[u8]) -> GatewayAnswer {
    let unknown = |cause: String| GatewayAnswer::Unknown { cause };
    if status == 200 {
        let payment = match Payment::parse(body) {
            Ok(payment) => payment,
            Err(cause) => return unknown(format!("200, {cause}")),
        };
        return match payment.status.as_str() {
            "DONE" => match payment.approval() {
                Ok(approval) => GatewayAnswer::Approved(approval),
                Err(cause) => unknown(format!("200 DONE, but {cause}")),
            },
            // A 200 with a failure inside: nobody was charged.
            "ABORTED" | "EXPIRED" => GatewayAnswer::Declined {
                code: payment.failure_code(),
            },
            other => unknown(format!("200 with status {other}")),
        };
    }
    match (status, error_code(body)) {
        (429, None) => GatewayAnswer::Throttled {
            code: THROTTLED.into(),
        },
        (429, Some(code)) if code == THROTTLED => GatewayAnswer::Throttled { code },
        (_, None) => unknown(format!("{status} without a Toss error body")),
        (_, Some(code)) => match codes::confirm_class(status, &code) {
            Class::Declined => GatewayAnswer::Declined { code },
            Class::NotSent => GatewayAnswer::Rejected { status, code },
            Class::Unknown => unknown(format!("{status} {code}")),
        },
    }
}

/// A look-up's answer (`GET /v1/payments/orders/{orderId}`).
pub fn look_up(status: u16, body: &[u8]) -> GatewayStatus {
    let unavailable = |cause: String| GatewayStatus::Unavailable { cause };
    match status {
        200 => {}
        404 if error_code(body).as_deref() == Some("NOT_FOUND_PAYMENT") => {
            return GatewayStatus::NotFound
        }
        other => {
            let code = error_code(body).unwrap_or_default();
            return unavailable(format!("look-up answered {other} {code}"));
        }
    }
    let payment = match Payment::parse(body) {
        Ok(payment) => payment,
        Err(cause) => return unavailable(cause),
    };
    match payment.status.as_str() {
        "DONE" => match payment.approval() {
            Ok(approval) => GatewayStatus::Approved(approval),
            Err(cause) => unavailable(format!("DONE, but {cause}")),
        },
        "ABORTED" | "EXPIRED" => GatewayStatus::Declined,
        "CANCELED" => GatewayStatus::Cancelled,
        "READY" | "IN_PROGRESS" | "WAITING_FOR_DEPOSIT" => GatewayStatus::Pending,
        // Never asked for by this origin: part of the charge is held, part given back.
        "PARTIAL_CANCELED" => unavailable("partially cancelled at the PG".into()),
        other => unavailable(format!("status {other} is in no list")),
    }
}

/// A cancel's answer.
pub fn cancel(status: u16, body: &[u8]) -> CancelAnswer {
    let unavailable = |cause: String| CancelAnswer::Unavailable { cause };
    if status == 200 {
        return match Payment::parse(body).map(|payment| payment.status) {
            Ok(state) if state == "CANCELED" => CancelAnswer::Cancelled,
            Ok(state) => unavailable(format!("cancel answered 200 with status {state}")),
            Err(cause) => unavailable(cause),
        };
    }
    let code = error_code(body).unwrap_or_default();
    if codes::CANCELLED_BEFORE.contains(&code.as_str()) {
        CancelAnswer::Cancelled
    } else if status < 500 && codes::CANCEL_REFUSED.contains(&code.as_str()) {
        CancelAnswer::Refused { status, code }
    } else {
        unavailable(format!("cancel answered {status} {code}"))
    }
}

#[cfg(test)]
mod tests;
