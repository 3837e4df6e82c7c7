//! The caller of a request: its bearer token verified locally (`verify_bearer`: no I/O,
//! but for an identity provider's key set now and then, `crate::jwks`), then
//! (`authenticate`) one call to the user's session object to learn whether the token was
//! revoked — and, on a rate-limited route, whether the user's window admits the request.
//! `routes.rs` runs the two with the refusals from memory between them.

use rules::token::AccessClaims;
use worker::{Env, Headers};

use crate::config::{DenylistFailMode, EdgeConfig};
use crate::error::ApiError;
use crate::global_limiter::client::check_global;
use crate::memory;
use crate::rate_windows::{WindowAnswer, WindowCheck};
use crate::session::client::UserSessionClient;
use crate::session::protocol::Authorized;

/// An authenticated caller, and what the user's rate window said when one was asked.
pub struct Caller {
    pub claims: AccessClaims,
    /// `None` when no window was asked, or the session object could not answer.
    pub window: Option<WindowAnswer>,
}

/// In one call to the user's session object, checks the denylist for a verified token's
/// `claims` and, on a limited route, counts the request in the user's `window` — after
/// taking back what this isolate owes that window (see [`crate::memory`]).
pub async fn authenticate(
    env: &Env,
    config: &EdgeConfig,
    claims: AccessClaims,
    window: Option<WindowCheck>,
    now_ms: i64,
) -> Result<Caller, ApiError> {
    let release = memory::owed(&claims.sub, now_ms);
    let answer = UserSessionClient::new(env, &claims.sub)
        .authorize(&claims, window.clone(), release)
        .await;
    match answer {
        Ok(Authorized {
            revoked: false,
            limit,
        }) => Ok(Caller {
            claims,
            window: limit,
        }),
        Ok(Authorized { revoked: true, .. }) => Err(revoked()),
        Err(err) => match config.denylist_fail_mode {
            DenylistFailMode::Open => {
                worker::console_warn!(
                    "denylist unchecked, failing open (DENYLIST_FAIL_MODE=open): {err}"
                );
                let window = match window {
                    Some(check) => user_window_apart(env, &claims.sub, &check).await,
                    None => None,
                };
                Ok(Caller { claims, window })
            }
            DenylistFailMode::Closed => {
                worker::console_error!("denylist unchecked, failing closed: {err}");
                Err(ApiError::new(
                    503,
                    "DENYLIST_UNAVAILABLE",
                    "sign-in state cannot be checked now; try again shortly",
                ))
            }
        },
    }
}

/// The user's window when the session object that keeps it cannot answer: counted in a
/// limiter object of the user's own instead, so failing open skips the denylist only.
/// `None` when that cannot answer either (the global window still stands behind it).
async fn user_window_apart(env: &Env, user: &str, check: &WindowCheck) -> Option<WindowAnswer> {
    match check_global(env, &format!("user#{}#{user}", check.key), check).await {
        Ok(answer) => Some(answer),
        Err(err) => {
            worker::console_warn!("the user's window is unchecked too: {err}");
            None
        }
    }
}

/// The request's `Authorization: Bearer` token, verified by the policy at `now_ms`, with
/// the identity provider's keys too when `JWT_JWKS_URL` is set. The reason for a refusal
/// is logged; the client learns only that it was refused.
pub async fn verify_bearer(
    headers: &Headers,
    config: &EdgeConfig,
    now_ms: i64,
) -> Result<AccessClaims, ApiError> {
    let header = headers.get("authorization")?.ok_or_else(|| {
        ApiError::new(
            401,
            "TOKEN_MISSING",
            "an Authorization: Bearer token is required",
        )
    })?;
    let token = bearer_token(&header).ok_or_else(invalid)?;
    crate::jwks::verify(token, config, now_ms)
        .await
        .map_err(|rejection| {
            worker::console_log!("token refused: {rejection}");
            invalid()
        })
}

pub fn revoked() -> ApiError {
    ApiError::new(401, "TOKEN_REVOKED", "the access token has been revoked")
}

fn invalid() -> ApiError {
    ApiError::new(401, "TOKEN_INVALID", "the access token is not valid")
}

/// The token of an `Authorization` header value; the scheme is case-insensitive.
fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::bearer_token;

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Bearer "), None);
    }
}
