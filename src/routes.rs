//! Which handler answers which method and path, and the shared steps around them:
//! configuration, the clock, authentication, rate limits, and turning refusals into
//! responses.

use worker::{Env, Method, Request, Response};

use crate::auth::authenticate;
use crate::auth_routes;
use crate::config::EdgeConfig;
use crate::error::ApiError;
use crate::payments;
use crate::rate_limit::{admit, user_check};

/// Answers one request. Every refusal becomes a JSON error body here.
pub async fn dispatch(req: Request, env: &Env) -> worker::Result<Response> {
    match route(req, env).await {
        Ok(response) => Ok(response),
        Err(err) => err.into_response(),
    }
}

/// Routes that need a verified caller.
enum Authenticated<'p> {
    Me,
    Confirm,
    Payment(&'p str),
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
    let authenticated = match (&method, segments.as_slice()) {
        (Method::Post, ["auth", "login"]) => {
            return auth_routes::login(req, env, &config, now_ms).await
        }
        (Method::Post, ["auth", "refresh"]) => {
            return auth_routes::refresh(req, env, &config, now_ms).await
        }
        (Method::Post, ["auth", "logout"]) => {
            return auth_routes::logout(req, env, &config, now_ms).await
        }
        (Method::Get, ["auth", "me"]) => Authenticated::Me,
        (Method::Post, ["payments", "confirm"]) => Authenticated::Confirm,
        (Method::Get, ["payments", order_id]) => Authenticated::Payment(order_id),
        (_, ["healthz"] | ["auth", "login" | "refresh" | "logout" | "me"] | ["payments", _]) => {
            return Err(ApiError::method_not_allowed())
        }
        _ => return Err(ApiError::not_found()),
    };

    let limit = config.rate_limits.for_request(method.as_ref(), &path);
    let caller = authenticate(&req, env, &config, now_ms, limit.map(user_check)).await?;
    let admission = admit(env, &config, limit, &caller.claims.sub, caller.window).await?;
    let response = match authenticated {
        Authenticated::Me => auth_routes::me(&caller.claims),
        Authenticated::Confirm => payments::confirm(req, &config, &caller.claims, now_ms).await,
        Authenticated::Payment(order_id) => {
            payments::get(order_id, &config, &caller.claims, now_ms).await
        }
    }?;
    admission.decorate(response)
}
