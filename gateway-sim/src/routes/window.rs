//! `GET /window`: an imitation of Toss's payment window, for local runs and
//! the browser tests.
//!
//! A shop's page opens it as Toss's SDK opens the real one (`requestPayment`):
//! `clientKey`, `method` (`CARD`), `currency` (`KRW`), `amount`, `orderId`,
//! `orderName`, `successUrl` and `failUrl` as query parameters. It shows the
//! order with two buttons, no card asked for. **Pay** issues a fresh
//! `paymentKey`, recorded in the ledger for that order and amount, and sends
//! the buyer to `successUrl?paymentKey=…&orderId=…&amount=…&paymentType=NORMAL`;
//! **Cancel** to `failUrl?code=PAY_PROCESS_CANCELED&message=…&orderId=…`.
//! Both are `303 See Other` from a form post. A return URL that is not
//! http(s), or any field Toss would refuse, is `400 BAD_REQUEST`.
//!
//! A confirm naming an issued key for another order or amount is refused
//! `400 INVALID_REQUEST` by [`as_issued`], before the confirm handler sees it:
//! Toss does not publish its code for this (an assumption), and the refusal
//! is not kept under the Idempotency-Key. Keys it did not issue go on as before.

use axum::body::{to_bytes, Body};
use axum::extract::rejection::{FormRejection, QueryRejection};
use axum::extract::{Query, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use reqwest::Url;
use serde::Deserialize;

use super::BODY_LIMIT_BYTES;
use crate::error::ApiError;
use crate::ledger::IssuedKey;
use crate::{now_ms, SimState};

const PAGE: &str = include_str!("window.html");
const CLIENT_KEY_PREFIXES: [&str; 4] = ["test_ck_", "live_ck_", "test_gck_", "live_gck_"];
/// Toss's message for a buyer who closed or cancelled the window.
const CANCELED_MESSAGE: &str = "사용자에 의해 결제가 취소되었습니다.";

/// The window's fields as sent, in its URL or its forms.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WindowFields {
    client_key: Option<String>,
    method: Option<String>,
    currency: Option<String>,
    amount: Option<String>,
    order_id: Option<String>,
    order_name: Option<String>,
    success_url: Option<String>,
    fail_url: Option<String>,
}

/// An order the window takes: every field as Toss would accept it.
struct Order {
    client_key: String,
    amount: u64,
    order_id: String,
    order_name: String,
    success_url: Url,
    fail_url: Url,
}

impl TryFrom<WindowFields> for Order {
    type Error = ApiError;

    fn try_from(fields: WindowFields) -> Result<Self, ApiError> {
        let bad = |text: &str| ApiError::BadRequest(text.to_owned());
        let client_key = fields.client_key.unwrap_or_default();
        if !CLIENT_KEY_PREFIXES
            .iter()
            .any(|p| client_key.starts_with(p))
        {
            return Err(bad(
                "clientKey must be a client key: test_ck_… or live_ck_…",
            ));
        }
        if fields.method.as_deref().is_some_and(|m| m != "CARD") {
            return Err(bad("method: this window takes CARD only"));
        }
        if fields.currency.as_deref().is_some_and(|c| c != "KRW") {
            return Err(bad("currency: this window takes KRW only"));
        }
        let amount = fields.amount.as_deref().and_then(|a| a.parse::<u64>().ok());
        let amount = amount
            .filter(|&a| a > 0)
            .ok_or_else(|| bad("amount must be a whole number of won, > 0"))?;
        let order_id = fields.order_id.unwrap_or_default();
        let order_id_ok = (6..=64).contains(&order_id.len())
            && order_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !order_id_ok {
            return Err(bad("orderId must be 6 to 64 of A-Z, a-z, 0-9, - and _"));
        }
        let order_name = fields.order_name.unwrap_or_default();
        if !(1..=100).contains(&order_name.chars().count()) {
            return Err(bad("orderName must be 1 to 100 characters"));
        }
        Ok(Self {
            client_key,
            amount,
            order_id,
            order_name,
            success_url: return_url("successUrl", fields.success_url)?,
            fail_url: return_url("failUrl", fields.fail_url)?,
        })
    }
}

/// A return URL: absolute http(s) with a host.
fn return_url(name: &str, url: Option<String>) -> Result<Url, ApiError> {
    url.as_deref()
        .and_then(|url| Url::parse(url).ok())
        .filter(|url| ["http", "https"].contains(&url.scheme()) && url.has_host())
        .ok_or_else(|| ApiError::BadRequest(format!("{name} must be an http(s) URL")))
}

/// `GET /window`: the order, Pay and Cancel.
pub(super) async fn window(
    query: Result<Query<WindowFields>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(fields) = query.map_err(|err| ApiError::BadRequest(err.body_text()))?;
    let order = Order::try_from(fields)?;
    let nonce: String = std::iter::repeat_with(fastrand::alphanumeric)
        .take(24)
        .collect();
    let policy = format!(
        "default-src 'none'; style-src 'nonce-{nonce}'; form-action 'self' {} {}; \
         frame-ancestors 'none'; base-uri 'none'",
        order.success_url.origin().ascii_serialization(),
        order.fail_url.origin().ascii_serialization(),
    );
    let page = PAGE
        .replace("{{nonce}}", &nonce)
        .replace("{{orderName}}", &escape(&order.order_name))
        .replace("{{amount}}", &won(order.amount))
        .replace("{{orderId}}", &escape(&order.order_id))
        .replace("{{fields}}", &hidden_fields(&order));
    Ok((
        [
            (header::CONTENT_SECURITY_POLICY, policy),
            (header::CACHE_CONTROL, "no-store".to_owned()),
            (header::REFERRER_POLICY, "no-referrer".to_owned()),
        ],
        Html(page),
    )
        .into_response())
}

/// `POST /window/pay`: a fresh key for the order, and back to `successUrl`.
pub(super) async fn pay(
    State(state): State<SimState>,
    form: Result<Form<WindowFields>, FormRejection>,
) -> Result<Redirect, ApiError> {
    let Form(fields) = form.map_err(|err| ApiError::BadRequest(err.body_text()))?;
    let order = Order::try_from(fields)?;
    let random: String = std::iter::repeat_with(fastrand::alphanumeric)
        .take(10)
        .collect();
    let payment_key = format!("tviva{}{random}", now_ms());
    let issued = IssuedKey {
        order_id: order.order_id.clone(),
        amount: order.amount,
    };
    state.with_ledger(|ledger| ledger.issue_key(payment_key.clone(), issued));
    tracing::info!(order_id = order.order_id, "window: paid, key issued");
    let mut url = order.success_url;
    url.query_pairs_mut()
        .append_pair("paymentKey", &payment_key)
        .append_pair("orderId", &order.order_id)
        .append_pair("amount", &order.amount.to_string())
        .append_pair("paymentType", "NORMAL");
    Ok(Redirect::to(url.as_str()))
}

/// `POST /window/cancel`: back to `failUrl`, as Toss sends a buyer who cancels.
pub(super) async fn cancel(
    form: Result<Form<WindowFields>, FormRejection>,
) -> Result<Redirect, ApiError> {
    let Form(fields) = form.map_err(|err| ApiError::BadRequest(err.body_text()))?;
    let order = Order::try_from(fields)?;
    let mut url = order.fail_url;
    url.query_pairs_mut()
        .append_pair("code", "PAY_PROCESS_CANCELED")
        .append_pair("message", CANCELED_MESSAGE)
        .append_pair("orderId", &order.order_id);
    Ok(Redirect::to(url.as_str()))
}

/// The confirm's fields this check reads; a body that is not this is left to
/// the confirm handler to refuse.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Confirming {
    payment_key: String,
    order_id: String,
    amount: u64,
}

/// Around `POST /v1/payments/confirm`: an issued key is confirmed for its
/// order and amount only.
pub(super) async fn as_issued(
    State(state): State<SimState>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, BODY_LIMIT_BYTES).await else {
        let detail = format!("request body exceeds {BODY_LIMIT_BYTES} bytes");
        return ApiError::invalid_request(detail).into_response();
    };
    if let Ok(confirm) = serde_json::from_slice::<Confirming>(&bytes) {
        let checked = state.with_ledger(|ledger| {
            ledger.check_issued(&confirm.payment_key, &confirm.order_id, confirm.amount)
        });
        if let Err(refusal) = checked {
            tracing::info!(order_id = confirm.order_id, "confirm refused: {refusal}");
            return ApiError::invalid_request(refusal.to_string()).into_response();
        }
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The order again, for the form that posts it.
fn hidden_fields(order: &Order) -> String {
    let amount = order.amount.to_string();
    [
        ("clientKey", order.client_key.as_str()),
        ("method", "CARD"),
        ("currency", "KRW"),
        ("amount", &amount),
        ("orderId", &order.order_id),
        ("orderName", &order.order_name),
        ("successUrl", order.success_url.as_str()),
        ("failUrl", order.fail_url.as_str()),
    ]
    .iter()
    .map(|(name, value)| {
        format!(
            r#"<input type="hidden" name="{name}" value="{}">"#,
            escape(value)
        )
    })
    .collect()
}

/// `amount` as the window shows it: `₩5,000`.
fn won(amount: u64) -> String {
    let digits = amount.to_string();
    let mut grouped = String::new();
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("₩{grouped}")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests;
