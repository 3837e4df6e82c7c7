//! Payment routes: confirm and read-back, forwarded to the origin once the caller is
//! authenticated and the request is known to be well formed.

use rules::confirm::{check_idempotency_key, check_order_id, ConfirmRequest};
use rules::signing::IDEMPOTENCY_KEY_HEADER;
use rules::token::AccessClaims;
use worker::{Method, Request, Response};

use crate::body::read_body;
use crate::config::EdgeConfig;
use crate::error::ApiError;
use crate::origin::OriginCall;

/// `POST /payments/confirm`: validated here, decided by the origin.
pub async fn confirm(
    mut req: Request,
    config: &EdgeConfig,
    caller: &AccessClaims,
    now_ms: i64,
) -> Result<Response, ApiError> {
    let idempotency_key = req.headers().get(IDEMPOTENCY_KEY_HEADER)?;
    let idempotency_key = check_idempotency_key(idempotency_key.as_deref())?;
    let body = read_body(&mut req).await?;
    ConfirmRequest::parse(&body)?;
    OriginCall {
        method: Method::Post,
        path: "/payments/confirm".into(),
        user_id: &caller.sub,
        idempotency_key: Some(idempotency_key),
        body: Some(body),
    }
    .forward(config, now_ms)
    .await
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
