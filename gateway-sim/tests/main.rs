//! The simulator's tests: one test binary, a module per part of Toss's API it speaks,
//! sharing [`common`].

mod common;

mod auth;
mod cancel;
mod capacity;
mod confirm;
mod faults;
mod idempotency;
mod lookups;
mod server;
mod settlements;
mod test_codes;
mod unknown_keys;
mod webhooks;
