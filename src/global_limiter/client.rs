//! The Worker's side of the global limiter: one call per limited request.

use worker::Env;

use crate::durable_call::{call_object, ObjectUnavailable};
use crate::rate_windows::{WindowAnswer, WindowCheck};

/// The Durable Object namespace binding in `wrangler.toml`.
pub const BINDING: &str = "GLOBAL_LIMITER";

/// Asks the global window of `check.key` — its object `name`, one shard — to admit one
/// request.
pub async fn check_global(
    env: &Env,
    name: &str,
    check: &WindowCheck,
) -> Result<WindowAnswer, ObjectUnavailable> {
    call_object(env, BINDING, name, check).await
}
