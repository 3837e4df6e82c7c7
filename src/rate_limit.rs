//! Rate limits on the limited routes (`docs/design/rate-limits.md`): the user's window first — counted in
//! the same call to the user's session object as the denylist check — then, only when
//! the user is admitted, the route's global window (one shard of it, drawn at random).
//!
//! A window this isolate already knows to be full refuses at once, before any object
//! call ([`crate::memory`]). A request the global window refuses is owed back to the
//! user's window and taken back with the user's next session call, so it costs the
//! user's object no second call and, seen by the user's next request, consumes nothing.
//!
//! The global windows count only what can be served: a confirm of a gated event is
//! counted once its pass is claimed (`routes::payments`), never when the gate refuses it;
//! an enter is counted in its room's own global window, so one drop's crowd never spends
//! another's — for a sharded event, in its user's arrival shard's own window.
//!
//! Failure: when the session object cannot answer, the user's window is counted in a
//! limiter object of the user's own (`DENYLIST_FAIL_MODE=open` skips the denylist only). The global
//! window fails open, with a warning and a count: it protects capacity, not money, and
//! the origin's own guard still stands behind it; refusing every payment because one
//! limiter object is unreachable would turn a limiter fault into an outage.

use std::cell::Cell;

use rules::rate_limit::{limit_header, policy_header, QuotaState, RouteLimit};
use worker::{Env, Response};

use crate::arrivals::client::UserShard;
use crate::error::ApiError;
use crate::global_limiter::client::check_global;
use crate::memory::{self, Release, Window};
use crate::random;
use crate::rate_windows::{WindowAnswer, WindowCheck};

thread_local! {
    /// Requests let through because the global limiter could not answer, this isolate.
    static GLOBAL_FAIL_OPEN: Cell<u64> = const { Cell::new(0) };
}

/// A request on a limited route, for one user: the windows it is counted in.
pub struct Limits<'a> {
    route: &'a RouteLimit,
    user: String,
    /// The global window's object: `{route}#{shard}`, `{route}#{event}#{shard}` for an
    /// enter, `{route}#{event}#a{arrival shard}` for an enter of a sharded event.
    global: String,
    shard_limit: u32,
}

/// The room an enter is counted for: its event, and the user's arrival shard when the
/// event has more than one.
pub struct EnterWindow<'a> {
    pub event_id: &'a str,
    pub arrival: Option<UserShard>,
}

/// The quotas a request was admitted under, for its `RateLimit` headers.
pub struct Admission<'a> {
    route: Option<&'a RouteLimit>,
    quotas: Vec<QuotaState>,
}

impl<'a> Limits<'a> {
    /// The windows of `route` for `user`, the global one's shard drawn among `shards`.
    /// With `room` (an enter), the global window is that room's own: what fills it is
    /// that room's traffic, which the room bounds itself — entering one drop's line never
    /// spends another's. A sharded event's enters are counted at the user's arrival
    /// shard, one window each with the route's whole limit: the object that takes them is
    /// that shard, so the event's total is its shards × the limit, each shard's bounded.
    pub fn new(
        route: &'a RouteLimit,
        user: &str,
        shards: u32,
        room: Option<EnterWindow<'_>>,
    ) -> Result<Self, ApiError> {
        let drawn = || -> Result<u32, ApiError> {
            Ok(match shards {
                1 => 0,
                _ => u32::from_le_bytes(random::bytes::<4>()?) % shards,
            })
        };
        let (global, shard_limit) = match room {
            Some(EnterWindow {
                event_id,
                arrival: Some(arrival),
            }) => (
                format!("{}#{event_id}#a{}", route.key, arrival.index),
                route.global.limit,
            ),
            Some(EnterWindow {
                event_id,
                arrival: None,
            }) => {
                let shard = drawn()?;
                (
                    format!("{}#{event_id}#{shard}", route.key),
                    shard_limit(route.global.limit, shards, shard),
                )
            }
            None => {
                let shard = drawn()?;
                (
                    format!("{}#{shard}", route.key),
                    shard_limit(route.global.limit, shards, shard),
                )
            }
        };
        Ok(Self {
            route,
            user: user.to_owned(),
            global,
            shard_limit,
        })
    }

    /// A 429 at once, with no object call, when this isolate knows that the user's
    /// window or the drawn shard of the global one is full at `now_ms`.
    pub fn refuse_from_memory(&self, now_ms: i64) -> Result<(), ApiError> {
        if let Some(wait_ms) = memory::refusing(Window::User, &self.user_key(), now_ms) {
            return Err(limited(self.route, "user", wait_ms));
        }
        if let Some(wait_ms) = memory::refusing(Window::Global, &self.global, now_ms) {
            return Err(limited(self.route, "global", wait_ms));
        }
        Ok(())
    }

    /// The user's window check, to send with the denylist check.
    pub fn user_check(&self) -> WindowCheck {
        WindowCheck {
            key: self.route.key.clone(),
            limit: self.route.user.limit,
            window_ms: self.route.user.window_ms,
        }
    }

    /// Applies the global window after the user's window answered `user` (`None`: the
    /// session object could not answer and the denylist mode let the request through).
    /// `now_ms` is when the request started: a window remembered full from it ends no
    /// later than the object's own.
    pub async fn admit(
        self,
        env: &Env,
        user: Option<WindowAnswer>,
        now_ms: i64,
    ) -> Result<Admission<'a>, ApiError> {
        self.user_admitted(user, now_ms)?.global(env, now_ms).await
    }

    /// The user's window's answer: a refusal, or the request admitted by it and waiting
    /// for the global window ([`UserAdmitted::global`]), which a handler may ask later —
    /// once it knows the request can be served.
    pub fn user_admitted(
        self,
        user: Option<WindowAnswer>,
        now_ms: i64,
    ) -> Result<UserAdmitted<'a>, ApiError> {
        let mut quotas = Vec::with_capacity(2);
        let user_admitted_at = match user {
            Some(WindowAnswer::Limited { retry_after_ms }) => {
                memory::remember_full(
                    Window::User,
                    &self.user_key(),
                    now_ms + retry_after_ms,
                    now_ms,
                );
                return Err(limited(self.route, "user", retry_after_ms));
            }
            Some(WindowAnswer::Admitted {
                remaining,
                reset_ms,
                at_ms,
            }) => {
                quotas.push(QuotaState {
                    name: "user",
                    remaining,
                    reset_ms,
                });
                Some(at_ms)
            }
            None => None,
        };
        Ok(UserAdmitted {
            limits: self,
            quotas,
            user_admitted_at,
        })
    }

    /// The memory key of the user's window on this route.
    fn user_key(&self) -> String {
        format!("{}\n{}", self.route.key, self.user)
    }
}

/// A request the user's window admitted, before the global window is asked.
pub struct UserAdmitted<'a> {
    limits: Limits<'a>,
    quotas: Vec<QuotaState>,
    /// When the user's window counted it, to owe back if the global window refuses.
    user_admitted_at: Option<i64>,
}

impl<'a> UserAdmitted<'a> {
    /// Counts the request in the drawn shard of the route's global window.
    pub async fn global(self, env: &Env, now_ms: i64) -> Result<Admission<'a>, ApiError> {
        let UserAdmitted {
            limits,
            mut quotas,
            user_admitted_at,
        } = self;
        let route = limits.route;
        let check = WindowCheck {
            key: route.key.clone(),
            limit: limits.shard_limit,
            window_ms: route.global.window_ms,
        };
        match check_global(env, &limits.global, &check).await {
            Ok(WindowAnswer::Admitted {
                remaining,
                reset_ms,
                ..
            }) => {
                quotas.push(QuotaState {
                    name: "global",
                    remaining,
                    reset_ms,
                });
            }
            Ok(WindowAnswer::Limited { retry_after_ms }) => {
                memory::remember_full(
                    Window::Global,
                    &limits.global,
                    now_ms + retry_after_ms,
                    now_ms,
                );
                if let Some(at_ms) = user_admitted_at {
                    let release = Release {
                        key: route.key.clone(),
                        at_ms,
                    };
                    memory::owe(&limits.user, release, at_ms + route.user.window_ms, now_ms);
                }
                return Err(limited(route, "global", retry_after_ms));
            }
            Err(err) => {
                let count = GLOBAL_FAIL_OPEN.with(|count| {
                    count.set(count.get() + 1);
                    count.get()
                });
                worker::console_warn!(
                    "global limiter unavailable, failing open ({count} in this isolate): {err}"
                );
            }
        }
        Ok(Admission {
            route: Some(route),
            quotas,
        })
    }
}

impl Admission<'_> {
    /// The admission of a route that is not limited: no headers.
    pub fn unlimited() -> Self {
        Admission {
            route: None,
            quotas: Vec::new(),
        }
    }

    /// Adds `RateLimit-Policy` and `RateLimit` to a limited route's response.
    pub fn decorate(&self, response: Response) -> Result<Response, ApiError> {
        if let Some(route) = self.route {
            response
                .headers()
                .set("ratelimit-policy", &policy_header(route))?;
            if !self.quotas.is_empty() {
                response
                    .headers()
                    .set("ratelimit", &limit_header(&self.quotas))?;
            }
        }
        Ok(response)
    }
}

/// Shard `shard` of `shards` holds its share of `limit`; the shares add up to `limit`.
fn shard_limit(limit: u32, shards: u32, shard: u32) -> u32 {
    limit / shards + u32::from(shard < limit % shards)
}

fn limited(route: &RouteLimit, quota: &'static str, retry_after_ms: i64) -> ApiError {
    too_many(policy_header(route), quota, retry_after_ms)
}

/// 429 `RATE_LIMITED`: the quota `quota` of `policy` (a `RateLimit-Policy` value) is
/// spent for `retry_after_ms` more, with `Retry-After` and the `RateLimit` headers.
pub fn too_many(policy: String, quota: &'static str, retry_after_ms: i64) -> ApiError {
    let state = QuotaState {
        name: quota,
        remaining: 0,
        reset_ms: retry_after_ms,
    };
    let retry_after = rules::sliding_window::Decision::Limited { retry_after_ms }
        .retry_after_secs()
        .unwrap_or(1);
    ApiError::new(
        429,
        "RATE_LIMITED",
        "too many requests; try again after Retry-After seconds",
    )
    .with_header("retry-after", retry_after.to_string())
    .with_header("ratelimit-policy", policy)
    .with_header("ratelimit", limit_header(&[state]))
}

#[cfg(test)]
mod tests {
    use super::shard_limit;

    #[test]
    fn shard_shares_add_up_to_the_limit() {
        for (limit, shards) in [(100, 1), (100, 3), (5, 8), (0, 4), (7, 7)] {
            let total: u32 = (0..shards)
                .map(|shard| shard_limit(limit, shards, shard))
                .sum();
            assert_eq!(total, limit, "{limit} over {shards}");
        }
        assert_eq!(shard_limit(100, 3, 0), 34);
        assert_eq!(shard_limit(100, 3, 2), 33);
    }
}
