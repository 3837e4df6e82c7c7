//! The edge: a Cloudflare Worker that admits browsers and forwards only admitted
//! payment confirms to the origin.
//!
//! Every request takes the cheapest refusal first (`docs/design/rate-limits.md`): the bearer token is
//! verified locally with no I/O (an identity provider's key set aside, fetched now and
//! then), the body is validated before any round trip, and only
//! then is the request signed and forwarded. The rules themselves live in the `rules`
//! crate; this crate is the thin shell around them.
//!
//! - [`routes`] — which handler answers which method and path, and the handlers:
//!   [`routes::auth`] (login, refresh, logout, who-am-I), [`routes::queue`] (enter,
//!   status, leave, the waiting-room page), [`routes::payments`] (confirm, read-back).
//! - [`config`] — the Worker's variables and secrets, parsed once per isolate into types.
//! - [`auth`] — the caller of a request: bearer token verified, denylist checked.
//! - [`jwks`] — an identity provider's key set (`JWT_JWKS_URL`), fetched and kept.
//! - [`session`] — the per-user Durable Object: denylist and refresh-token families.
//! - [`rate_limit`] — the user's window, then the global one, and the RateLimit headers.
//! - [`login_limit`] — login attempts per client address and per username.
//! - [`memory`] — what an isolate remembers: full windows, admissions owed back.
//! - [`rate_windows`] — sliding windows kept by a Durable Object (SQLite-backed).
//! - [`global_limiter`] — the `GlobalLimiter` Durable Object, one per route and shard.
//! - [`queue`] — the `WaitingRoom` Durable Object: one first-come line per event.
//! - [`arrivals`] — the `ArrivalShard` Durable Object: an event's enters spread over
//!   many, numbered in batches by its room.
//! - [`directory`] — the `EventDirectory` Durable Object: which events operators gated
//!   at run time.
//! - [`origin`] — the signed call to the origin, and its answer passed back unchanged.
//! - [`durable_call`] — one JSON call from the Worker to a Durable Object.
//! - [`alarm`] — Durable Object alarms, set at a time (never as an offset by mistake).
//! - [`body`] — request bodies, read with a bound.
//! - [`clock`] — the one place the runtime's clock is read.
//! - [`random`] — random bytes and ids from the runtime's CSPRNG.
//! - [`error`] — the one mapping from a refusal to an HTTP response.

pub mod alarm;
pub mod arrivals;
pub mod auth;
pub mod body;
pub mod clock;
pub mod config;
pub mod directory;
pub mod durable_call;
pub mod error;
pub mod global_limiter;
pub mod jwks;
pub mod login_limit;
pub mod memory;
pub mod origin;
pub mod queue;
pub mod random;
pub mod rate_limit;
pub mod rate_windows;
pub mod routes;
pub mod session;

pub use arrivals::object::ArrivalShard;
pub use directory::object::EventDirectory;
pub use global_limiter::object::GlobalLimiter;
pub use queue::object::WaitingRoom;
pub use session::object::UserSession;

use worker::{event, web_sys, Context, Env, Response};

#[event(fetch)]
async fn fetch(req: web_sys::Request, env: Env, ctx: Context) -> worker::Result<Response> {
    routes::dispatch(req, &env, &ctx).await
}
