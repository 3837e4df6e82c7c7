//! The global rate limit: a `GlobalLimiter` Durable Object per limited route (and per
//! shard), consulted only after the user's own limit admitted the request.
//!
//! One object serialises every request it sees — about 1,000 a second on Cloudflare.
//! Past that, `RATE_LIMIT_GLOBAL_SHARDS = N` spreads the route over N objects, each
//! holding its share of the limit (see docs/design/rate-limits.md for what that gives up).

use worker::{durable_object, DurableObject, Env, Request, Response, Result, State};

use crate::clock;
use crate::durable_call::{call_object, read_call, reply, ObjectUnavailable};
use crate::rate_windows::{RateWindows, WindowAnswer, WindowCheck};

/// The Durable Object namespace binding in `wrangler.toml`.
pub const BINDING: &str = "GLOBAL_LIMITER";

#[durable_object]
pub struct GlobalLimiter {
    windows: RateWindows,
}

impl DurableObject for GlobalLimiter {
    fn new(state: State, _env: Env) -> Self {
        Self {
            windows: RateWindows::new(state.storage().sql()),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let check: WindowCheck = read_call(&req)?;
        let now_ms = clock::now_ms();
        reply(&self.windows.check(&check, now_ms)?)
    }
}

/// Asks the global window of `check.key` — its object `name`, one shard — to admit one
/// request.
pub async fn check_global(
    env: &Env,
    name: &str,
    check: &WindowCheck,
) -> Result<WindowAnswer, ObjectUnavailable> {
    call_object(env, BINDING, name, check).await
}
