//! Payment routes: confirm and read-back, forwarded to the origin once the caller is
//! authenticated and the request is known to be well formed.

use rules::confirm::{check_idempotency_key, check_order_id, ConfirmRequest};
use rules::signing::IDEMPOTENCY_KEY_HEADER;
use rules::token::AccessClaims;
use worker::{Env, Method, Request, Response};

use crate::body::read_body;
use crate::config::EdgeConfig;
use crate::error::ApiError;
use crate::origin::{OriginAnswer, OriginCall};
use crate::queue::client::WaitingRoomClient;

/// `POST /payments/confirm`: validated here, decided by the origin.
pub async fn confirm(
    mut req: Request,
    env: &Env,
    config: &EdgeConfig,
    caller: &AccessClaims,
    now_ms: i64,
) -> Result<Response, ApiError> {
    let idempotency_key = req.headers().get(IDEMPOTENCY_KEY_HEADER)?;
    let idempotency_key = check_idempotency_key(idempotency_key.as_deref())?;
    let body = read_body(&mut req).await?;
    let confirm = ConfirmRequest::parse(&body)?;
    let gated = confirm
        .event_id
        .as_deref()
        .filter(|event| config.gated_events.contains(*event));
    if let Some(event_id) = gated {
        require_pass(env, event_id, &caller.sub).await?;
    }
    let answer = OriginCall {
        method: Method::Post,
        path: "/payments/confirm".into(),
        user_id: &caller.sub,
        idempotency_key: Some(idempotency_key),
        body: Some(body),
    }
    .answer(config, now_ms)
    .await?;
    if let Some(event_id) = gated {
        if approved(&answer) {
            // The pass is spent and the buyer leaves the line; if this call fails the
            // pass still expires on its own.
            if let Err(err) = WaitingRoomClient::new(env, event_id, &caller.sub)
                .consume()
                .await
            {
                worker::console_warn!("pass not consumed after a payment: {err}");
            }
        }
    }
    answer.into_response()
}

/// The gate of a gated event: a live pass of this user for this event, or no confirm.
/// It never fails open — a pass that cannot be checked is a refusal.
async fn require_pass(env: &Env, event_id: &str, user: &str) -> Result<(), ApiError> {
    match WaitingRoomClient::new(env, event_id, user).has_pass().await {
        Ok(true) => Ok(()),
        Ok(false) => Err(ApiError::new(
            429,
            "QUEUE_PASS_REQUIRED",
            "this event needs an admission pass: join its queue and wait for your turn",
        )),
        Err(err) => {
            worker::console_error!("pass not checkable, confirm refused: {err}");
            Err(ApiError::new(
                503,
                "QUEUE_UNAVAILABLE",
                "admission cannot be checked now; try again shortly",
            )
            .with_header("retry-after", "2"))
        }
    }
}

/// Whether the origin approved the payment (201 with status APPROVED).
fn approved(answer: &OriginAnswer) -> bool {
    #[derive(serde::Deserialize)]
    struct Status {
        status: String,
    }
    answer.status == 201
        && serde_json::from_slice::<Status>(&answer.body)
            .is_ok_and(|body| body.status == "APPROVED")
}

/// `GET /payments/{orderId}`: the caller's own payment, as the origin has it.
pub async fn get(
    order_id: &str,
    config: &EdgeConfig,
    caller: &AccessClaims,
    now_ms: i64,
) -> Result<Response, ApiError> {
    check_order_id(order_id)?;
    OriginCall {
        method: Method::Get,
        path: format!("/payments/{order_id}"),
        user_id: &caller.sub,
        idempotency_key: None,
        body: None,
    }
    .forward(config, now_ms)
    .await
}
