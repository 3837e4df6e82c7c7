//! The global rate limit: a `GlobalLimiter` Durable Object per limited route (and per
//! shard), consulted only after the user's own limit admitted the request.
//!
//! One object serialises every request it sees — about 1,000 a second on Cloudflare.
//! Past that, `RATE_LIMIT_GLOBAL_SHARDS = N` spreads the route over N objects, each
//! holding its share of the limit (see `docs/design/rate-limits.md` for what that gives
//! up). Its requests and answers are the windows' own (`rate_windows.rs`), shared with
//! the session object.
//!
//! - [`object`] — the Durable Object itself.
//! - [`client`] — the Worker's side: one call per limited request.

pub mod client;
pub mod object;
