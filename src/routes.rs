//! Which handler answers which method and path, and the shared steps around them:
//! configuration, the clock, authentication, and turning refusals into responses.

use worker::{Env, Method, Request, Response};

use crate::auth::authenticate;
use crate::auth_routes;
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
    let method = req.method();
    if let (Method::Get, ["healthz"]) = (&method, segments.as_slice()) {
        return Ok(Response::from_json(&serde_json::json!({"status": "ok"}))?);
    }
    let config = EdgeConfig::of(env).map_err(|err| {
        worker::console_error!("configuration: {err}");
        ApiError::new(500, "MISCONFIGURED", "the edge is not configured")
    })?;
    let now_ms = i64::try_from(worker::Date::now().as_millis()).map_err(ApiError::internal)?;
    match (method, segments.as_slice()) {
        (Method::Post, ["auth", "login"]) => auth_routes::login(req, env, &config, now_ms).await,
        (Method::Post, ["auth", "refresh"]) => {
            auth_routes::refresh(req, env, &config, now_ms).await
        }
        (Method::Post, ["auth", "logout"]) => auth_routes::logout(req, env, &config, now_ms).await,
        (Method::Get, ["auth", "me"]) => {
            let caller = authenticate(&req, env, &config, now_ms).await?;
            auth_routes::me(&caller)
        }
        (Method::Post, ["payments", "confirm"]) => {
            let caller = authenticate(&req, env, &config, now_ms).await?;
            payments::confirm(req, &config, &caller, now_ms).await
        }
        (Method::Get, ["payments", order_id]) => {
            let caller = authenticate(&req, env, &config, now_ms).await?;
            payments::get(order_id, &config, &caller, now_ms).await
        }
        (_, ["healthz"] | ["auth", "login" | "refresh" | "logout" | "me"] | ["payments", _]) => {
            Err(ApiError::method_not_allowed())
        }
        _ => Err(ApiError::not_found()),
    }
}
