//! Which handler answers which method and path, and the shared steps around them:
//! configuration, the clock, authentication, and turning refusals into responses.

use worker::{Env, Method, Request, Response};

use crate::auth::authenticate;
use crate::config::EdgeConfig;
use crate::error::ApiError;
use crate::payments;

/// Answers one request. Every refusal becomes a JSON error body here.
pub async fn dispatch(req: Request, env: &Env) -> worker::Result<Response> {
    match route(req, env).await {
        Ok(response) => Ok(response),
        Err(err) => err.into_response(),
    }
}

async fn route(req: Request, env: &Env) -> Result<Response, ApiError> {
    let path = req.path();
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match (req.method(), segments.as_slice()) {
        (Method::Get, ["healthz"]) => {
            Ok(Response::from_json(&serde_json::json!({"status": "ok"}))?)
        }
        (Method::Post, ["payments", "confirm"]) => {
            let (config, now_ms) = prepare(env)?;
            let caller = authenticate(&req, &config.keys, now_ms.div_euclid(1000))?;
            payments::confirm(req, &config, &caller, now_ms).await
        }
        (Method::Get, ["payments", order_id]) => {
            let (config, now_ms) = prepare(env)?;
            let caller = authenticate(&req, &config.keys, now_ms.div_euclid(1000))?;
            payments::get(order_id, &config, &caller, now_ms).await
        }
        (_, ["healthz"] | ["payments", _]) => Err(ApiError::method_not_allowed()),
        _ => Err(ApiError::not_found()),
    }
}

/// The configuration and the time, read once per request. A configuration that does
/// not parse is the operator's error: it is logged in full and the client gets a 500.
fn prepare(env: &Env) -> Result<(EdgeConfig, i64), ApiError> {
    let config = EdgeConfig::from_env(env).map_err(|err| {
        worker::console_error!("configuration: {err}");
        ApiError::new(500, "MISCONFIGURED", "the edge is not configured")
    })?;
    let now_ms = i64::try_from(worker::Date::now().as_millis()).map_err(ApiError::internal)?;
    Ok((config, now_ms))
}
