//! The Durable Object itself: the route's (or shard's) sliding windows in its SQLite.

use worker::{durable_object, DurableObject, Env, Request, Response, Result, State};

use crate::clock;
use crate::durable_call::{read_call, reply};
use crate::rate_windows::{RateWindows, WindowCheck};

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
