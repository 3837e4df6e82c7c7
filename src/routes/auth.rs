//! `/auth/*`: login, refresh-token rotation, logout, and who-am-I.
//!
//! The edge never sees a password hash: login asks the origin to check the
//! credentials, then mints the tokens itself. Refresh tokens live in the user's
//! session object as hashes; the single-use rule and reuse detection are applied
//! there, atomically (see `rules::refresh`).

use rules::credentials::Credentials;
use rules::pass::Gate;
use rules::rate_limit::policies_header;
use rules::refresh::{RefreshToken, SECRET_BYTES};
use rules::token::{AccessClaims, NewAccessToken};
use serde::{Deserialize, Serialize};
use worker::{Env, Headers, Method, Request, Response};

use crate::auth::{revoked, verify_bearer};
use crate::body::read_body;
use crate::config::EdgeConfig;
use crate::durable_call::ObjectUnavailable;
use crate::error::ApiError;
use crate::login_limit;
use crate::memory::{self, Window};
use crate::origin::{unavailable, OriginCall};
use crate::random;
use crate::rate_limit::too_many;
use crate::rate_windows::WindowCheck;
use crate::session::client::UserSessionClient;
use crate::session::protocol::{Revocation, RotateOutcome};

const MAX_USER_ID_LEN: usize = 128;
/// The refresh window's policy name in the `RateLimit` headers, and its key's prefix.
const REFRESH_WINDOW: &str = "refresh-family";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TokenPair<'a> {
    access_token: &'a str,
    refresh_token: &'a str,
    token_type: &'static str,
    expires_in: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Verified {
    user_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RefreshBody {
    refresh_token: String,
}

/// `POST /auth/login`: 200 a token pair, 401 `INVALID_CREDENTIALS`, 429 when the
/// attempt's client address or username has had its share (`login_limit`); every
/// counted attempt's answer carries the `RateLimit` headers.
pub async fn login(
    mut req: Request,
    env: &Env,
    config: &EdgeConfig,
    now_ms: i64,
    request_id: &str,
) -> Result<Response, ApiError> {
    let body = read_body(&mut req).await?;
    let credentials = Credentials::parse(&body)
        .map_err(|err| ApiError::bad_request("INVALID_REQUEST", err.to_string()))?;
    let admission = login_limit::admit(
        env,
        &config.login_limits,
        &req,
        &credentials.username,
        now_ms,
    )
    .await?;
    match sign_in(body, env, config, now_ms, request_id).await {
        Ok(response) => admission.decorate(response),
        Err(refusal) => Err(admission.decorate_refusal(refusal)),
    }
}

/// The origin's credential check of a login `body`, then a new session and its tokens.
async fn sign_in(
    body: Vec<u8>,
    env: &Env,
    config: &EdgeConfig,
    now_ms: i64,
    request_id: &str,
) -> Result<Response, ApiError> {
    let answer = OriginCall {
        method: Method::Post,
        path: "/internal/credentials/verify".into(),
        user_id: "",
        idempotency_key: None,
        body: Some(body),
        request_id,
        gate: Gate::Ungated,
    }
    .answer(config, now_ms)
    .await?;
    let user_id = match answer.status {
        200 => {
            serde_json::from_slice::<Verified>(&answer.body)
                .map_err(|_| unavailable())?
                .user_id
        }
        401 => {
            return Err(ApiError::new(
                401,
                "INVALID_CREDENTIALS",
                "the username or password is not right",
            ))
        }
        503 => {
            return Err(ApiError::new(
                503,
                "BUSY",
                "sign-in is busy; try again shortly",
            ))
        }
        status => {
            worker::console_error!("credential check answered {status}");
            return Err(unavailable());
        }
    };
    if user_id.is_empty()
        || user_id.len() > MAX_USER_ID_LEN
        || user_id.chars().any(char::is_control)
    {
        return Err(ApiError::internal(
            "the origin answered an unusable user id",
        ));
    }
    let family = random::id()?;
    let secret = random::bytes::<SECRET_BYTES>()?;
    let refresh = RefreshToken::new(&user_id, &family, &secret, &config.refresh_key);
    UserSessionClient::new(env, &user_id)
        .open(
            &family,
            &refresh.hash(),
            now_ms + config.refresh_ttl_secs * 1000,
            now_ms,
        )
        .await
        .map_err(session_unavailable)?;
    token_pair(config, &user_id, &family, &refresh, now_ms)
}

/// `POST /auth/refresh`: the presented token is retired and a new pair issued. A token
/// the edge did not issue is refused before any object call; a login's tokens refresh
/// at most `REFRESH_RATE_LIMIT_FAMILY` times a window, counted in the same call as the
/// rotation and remembered here once full.
pub async fn refresh(
    mut req: Request,
    env: &Env,
    config: &EdgeConfig,
    now_ms: i64,
) -> Result<Response, ApiError> {
    let body = read_body(&mut req).await?;
    let RefreshBody { refresh_token } = serde_json::from_slice(&body).map_err(|_| {
        ApiError::bad_request(
            "INVALID_REQUEST",
            "the body must be {\"refreshToken\": \"...\"}",
        )
    })?;
    let presented =
        RefreshToken::parse(&refresh_token, &config.refresh_key).ok_or_else(refresh_invalid)?;
    let (user_id, family) = (presented.user_id(), presented.family());
    let window = format!("{REFRESH_WINDOW}:{family}");
    // Remembered full for the token refused, not the family: another token of the family
    // may be a retired one coming back, and that reuse is the object's to see.
    let presented_hash = presented.hash();
    let remembered = format!("{REFRESH_WINDOW}:{presented_hash}");
    let policy = policies_header(&[(REFRESH_WINDOW, config.refresh_limit)]);
    if let Some(wait_ms) = memory::refusing(Window::User, &remembered, now_ms) {
        return Err(too_many(policy, REFRESH_WINDOW, wait_ms));
    }
    let secret = random::bytes::<SECRET_BYTES>()?;
    let successor = RefreshToken::new(user_id, family, &secret, &config.refresh_key);
    let limit = WindowCheck {
        key: window,
        limit: config.refresh_limit.limit,
        window_ms: config.refresh_limit.window_ms,
    };
    let outcome = UserSessionClient::new(env, user_id)
        .rotate(
            &presented_hash,
            &successor.hash(),
            now_ms + config.refresh_ttl_secs * 1000,
            limit,
        )
        .await
        .map_err(session_unavailable)?;
    match outcome {
        RotateOutcome::Rotated { family } => {
            token_pair(config, user_id, &family, &successor, now_ms)
        }
        RotateOutcome::Limited { retry_after_ms } => {
            memory::remember_full(Window::User, &remembered, now_ms + retry_after_ms, now_ms);
            Err(too_many(policy, REFRESH_WINDOW, retry_after_ms))
        }
        RotateOutcome::Reused => Err(ApiError::new(
            401,
            "REFRESH_REUSED",
            "this refresh token was used before; every session of this login is revoked",
        )),
        RotateOutcome::Refused => Err(refresh_invalid()),
    }
}

/// `POST /auth/logout`: the access token is denylisted until it expires and its
/// refresh family revoked, in one call to the session object.
pub async fn logout(
    headers: &Headers,
    env: &Env,
    config: &EdgeConfig,
    now_ms: i64,
) -> Result<Response, ApiError> {
    let claims = verify_bearer(headers, config, now_ms).await?;
    let before = UserSessionClient::new(env, &claims.sub)
        .logout(&claims)
        .await
        .map_err(session_unavailable)?;
    match before {
        Revocation { revoked: true } => Err(revoked()),
        Revocation { revoked: false } => Ok(Response::empty()?.with_status(204)),
    }
}

/// `POST /auth/logout-all` (Bearer): every session of the caller ends — every refresh
/// family revoked, every access token issued until now refused — this one's included.
pub async fn logout_all(
    env: &Env,
    caller: &AccessClaims,
    now_ms: i64,
) -> Result<Response, ApiError> {
    UserSessionClient::new(env, &caller.sub)
        .end_all(now_ms)
        .await
        .map_err(session_unavailable)?;
    Ok(Response::empty()?.with_status(204))
}

/// `GET /auth/me`: who the token says the caller is.
pub fn me(caller: &AccessClaims) -> Result<Response, ApiError> {
    let body = serde_json::json!({ "sub": caller.sub, "jti": caller.jti, "exp": caller.exp });
    Ok(Response::from_json(&body)?)
}

/// A fresh access token in `family`'s session, with its refresh token.
fn token_pair(
    config: &EdgeConfig,
    user_id: &str,
    family: &str,
    refresh: &RefreshToken,
    now_ms: i64,
) -> Result<Response, ApiError> {
    let now_secs = now_ms.div_euclid(1000);
    let jti = random::id()?;
    let access = config
        .policy
        .keys
        .mint(
            &config.signing_kid,
            &NewAccessToken {
                sub: user_id,
                jti: &jti,
                sid: Some(family),
                issued_at: now_secs,
                expires_at: now_secs + config.access_ttl_secs,
                issuer: config.policy.issuer.as_deref(),
                audience: config.policy.audience.as_deref(),
            },
        )
        .map_err(ApiError::internal)?;
    let response = Response::from_json(&TokenPair {
        access_token: &access,
        refresh_token: refresh.as_str(),
        token_type: "Bearer",
        expires_in: config.access_ttl_secs,
    })?;
    // Tokens must never sit in a cache (RFC 6749 §5.1).
    response.headers().set("cache-control", "no-store")?;
    Ok(response)
}

fn refresh_invalid() -> ApiError {
    ApiError::new(
        401,
        "REFRESH_INVALID",
        "the refresh token is not valid; log in again",
    )
}

pub(super) fn session_unavailable(err: ObjectUnavailable) -> ApiError {
    worker::console_error!("{err}");
    ApiError::new(
        503,
        "SESSION_UNAVAILABLE",
        "sign-in state cannot be changed now; try again shortly",
    )
}
