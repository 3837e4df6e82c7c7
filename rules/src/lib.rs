//! The rules of the admission gateway, as plain Rust.
//!
//! Nothing here does I/O, reads a clock or draws random bytes: time and randomness
//! are parameters. So every rule compiles natively and to `wasm32-unknown-unknown`,
//! is tested natively in milliseconds, and is shared by the edge and the origin —
//! both sides of a contract run the same code.
//!
//! - [`signing`] — the canonical string and HMAC signature of edge → origin requests.
//! - [`confirm`] — the payment confirm request: parsing and validation of outside input.
//! - [`credentials`] — the login request: username and password, validated.
//! - [`expiring`] — a bounded map whose entries expire: what an isolate may remember.
//! - [`login_limit`] — the login windows: per username and per client address.
//! - [`pass`] — the gate's word on a confirm, signed, so the origin enforces the gate too.
//! - [`paused`] — "payments are paused": the origin's word to the edge that its PG is out.
//! - [`queue`] — the first-come queue of one event, with admission passes.
//! - [`rate_limit`] — which routes are limited, the rates, and the RateLimit headers.
//! - [`rate_windows`] — an object's windows by key: which live in memory, which are stored.
//! - [`refresh`] — refresh tokens: format, stored hash, single use with reuse detection.
//! - [`sliding_window`] — the exact sliding-window rate limit.
//! - [`token`] — access-token verification against the configured keys and an identity
//!   provider's key set, and when to fetch that set again.

pub mod confirm;
pub mod credentials;
pub mod csp;
mod dotted;
pub mod drop;
pub mod expiring;
pub mod login_limit;
pub mod pass;
pub mod paused;
pub mod queue;
pub mod rate_limit;
pub mod rate_windows;
pub mod refresh;
pub mod request_id;
pub mod signing;
pub mod sliding_window;
pub mod token;
