//! `POST /auth/login`, throttled before the origin hashes anything: the attempt is
//! counted in its client address's window, then in its username's (`rules::login_limit`).
//! Each window lives in one of [`LOGIN_SHARDS`] `GlobalLimiter` objects per kind, chosen
//! by a hash of its key: a fixed number of objects however many names are tried, each
//! sweeping the windows nobody uses any more. A window this isolate knows to be full
//! refuses from memory, with no call.
//!
//! Failure: a window whose object cannot answer lets the attempt through, with a warning,
//! as the routes' global windows do — the origin's own cap on credential checks still
//! stands behind it, and refusing every login because one limiter object is unreachable
//! would turn a limiter fault into an outage.

use rules::login_limit::{client_key, fnv1a, LoginLimits, LoginWindow};
use rules::rate_limit::{limit_header, policies_header, QuotaState};
use worker::{Env, Request, Response};

use crate::error::ApiError;
use crate::global_limiter::client::check_global;
use crate::memory::{self, Window};
use crate::rate_limit::too_many;
use crate::rate_windows::{WindowAnswer, WindowCheck};

/// The quotas a login attempt was admitted under, for its answer's `RateLimit` headers.
pub struct LoginAdmission {
    policy: String,
    quotas: Vec<QuotaState>,
}

/// Counts one attempt for `username` (normalised) from the client `req` came from; a
/// 429 `RATE_LIMITED` when either window is full.
pub async fn admit(
    env: &Env,
    limits: &LoginLimits,
    req: &Request,
    username: &str,
    now_ms: i64,
) -> Result<LoginAdmission, ApiError> {
    let client = client_key(req.headers().get("cf-connecting-ip")?.as_deref());
    let policy = policies_header(&[
        (LoginWindow::Client.name(), limits.client),
        (LoginWindow::User.name(), limits.user),
    ]);
    let mut quotas = Vec::with_capacity(2);
    for (window, whose) in [
        (LoginWindow::Client, client.as_str()),
        (LoginWindow::User, username),
    ] {
        let key = window.key(whose);
        let refused = |retry_after_ms| too_many(policy.clone(), window.name(), retry_after_ms);
        if let Some(wait_ms) = memory::refusing(Window::User, &key, now_ms) {
            return Err(refused(wait_ms));
        }
        let rate = window.rate(limits);
        let check = WindowCheck {
            key: key.clone(),
            limit: rate.limit,
            window_ms: rate.window_ms,
        };
        let object = format!("{}#{}", window.name(), shard_of(&key));
        match check_global(env, &object, &check).await {
            Ok(WindowAnswer::Admitted {
                remaining,
                reset_ms,
                ..
            }) => quotas.push(QuotaState {
                name: window.name(),
                remaining,
                reset_ms,
            }),
            Ok(WindowAnswer::Limited { retry_after_ms }) => {
                memory::remember_full(Window::User, &key, now_ms + retry_after_ms, now_ms);
                return Err(refused(retry_after_ms));
            }
            Err(err) => worker::console_warn!("login window unavailable, failing open: {err}"),
        }
    }
    Ok(LoginAdmission { policy, quotas })
}

/// Objects each kind of login window is spread over: together they take about 64,000
/// attempts a second on Cloudflare, far past what the origin can hash.
pub const LOGIN_SHARDS: u32 = 64;

/// The shard of window `key`: its FNV-1a hash, modulo [`LOGIN_SHARDS`] — stable across
/// isolates and deploys, so a window is always counted in the same object.
fn shard_of(key: &str) -> u32 {
    fnv1a(key) % LOGIN_SHARDS
}

impl LoginAdmission {
    /// Adds `RateLimit-Policy` and `RateLimit` to the login's answer.
    pub fn decorate(&self, response: Response) -> Result<Response, ApiError> {
        for (name, value) in self.headers() {
            response.headers().set(name, &value)?;
        }
        Ok(response)
    }

    /// [`LoginAdmission::decorate`] for a login refused after it was counted.
    pub fn decorate_refusal(&self, refusal: ApiError) -> ApiError {
        self.headers()
            .into_iter()
            .fold(refusal, |refusal, (name, value)| {
                refusal.with_header(name, value)
            })
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = vec![("ratelimit-policy", self.policy.clone())];
        if !self.quotas.is_empty() {
            headers.push(("ratelimit", limit_header(&self.quotas)));
        }
        headers
    }
}
