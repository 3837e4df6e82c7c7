//! The origin's pure rules: given the facts and the time, they say what happens, and do
//! no I/O (ARCHITECTURE.md, "Pure rules"; `tests/architecture.rs` holds them to it). The
//! shells around them — the guard, the recovery job, a reconciliation run — do the I/O.
//!
//! - [`answers`] — what the payment gateway said: an approval's, a cancel's, a status.
//! - [`breaker`] — the circuit breaker, a state machine on the caller's clock.
//! - [`concurrency`] — how many calls may be out at the gateway at once, learned.
//! - [`delivery`] — the merchant's webhooks: an answer's verdict, the retry schedule.
//! - [`history`] — the last minutes for the console's charts: a ring, latencies.
//! - [`limiter`] — the guard's optional limit on calls sent to the gateway.
//! - [`recovery`] — what recovery makes of the gateway's word about a payment.
//! - [`settlement`] — the settlement file parsed, and set against our payments.

pub mod answers;
pub mod breaker;
pub mod concurrency;
pub mod delivery;
pub mod history;
pub mod limiter;
pub mod recovery;
pub mod settlement;
