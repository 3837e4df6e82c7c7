//! The origin payment service: owns payments, trusts only the edge, and calls the
//! payment gateway (PG) without ever deciding what it does not know.
//!
//! - [`server`] — `origin serve`: the store, both listeners, shutdown.
//! - [`routes`] — the API and metrics routers, and the handlers: [`routes::payments`]
//!   (confirm: TX 1, guarded gateway call, TX 2; read-back), [`routes::credentials`]
//!   (the credential check behind the edge's login), [`routes::webhooks`] (the PG's
//!   webhooks), [`routes::admin`] and [`routes::reconciliations`] (operator
//!   routes behind `OPERATOR_TOKEN`); [`state`] — what every handler is given.
//! - [`edge_signature`] — the edge's HMAC signature, checked before any signed route.
//! - [`event_cli`] — `origin event …`: drops from the command line, through the
//!   operator routes.
//! - [`edge`] — what the origin asks of the edge, signed: ending a user's sessions, a
//!   drop's room.
//! - [`operator_auth`] — the operator routes' bearer token, and its failed-attempt
//!   throttle.
//! - [`idempotency`] — Idempotency-Key claims, replays and their retention.
//! - [`outbox`] — every payment's change and finding delivered to the merchant as a
//!   signed webhook (Standard Webhooks), at least once, in order per order.
//! - [`policy`] — the pure rules, no I/O: the gateway's answers, the breaker, the
//!   limiters, the recovery decision, settlement parsing and matching.
//! - [`guard`] — timeout, circuit breaker, bulkhead and limiter before every PG call.
//! - [`overload`] — the API's concurrency cap (shedding at once) and request counts.
//! - [`recovery`] — the job that converges UNKNOWN and stale PENDING payments to the
//!   PG's word.
//! - [`settlement`] — a reconciliation run: the PG's settlement file through the
//!   parser and the reconciler into the exception queue.
//! - [`crypto`] — envelope encryption of sensitive columns (AES-256-GCM data keys wrapped
//!   by versioned KEKs); [`rotation`] — `origin keys rewrap`, onto the current KEK.
//! - [`users`] — argon2id passwords, `origin user add` and `revoke-sessions`.
//! - [`gateway`] — the PG's HTTP protocol, and what each answer lets us know.
//! - [`store`] — all SQL, behind the [`store::Store`] trait; transient-error retries.
//! - [`request_id`] — every request's id, in its log lines, its answer and its errors.
//! - [`metrics`] — Prometheus text, on its own listener; [`backlog`] — what waits for
//!   someone (the oldest UNKNOWN payment, reconciliation items), sampled into it;
//!   [`history`] — the last 15 minutes of the PG guard and the drops, for the console.
//! - [`log_writer`] — log output that drops and counts what it cannot write, never fails.
//! - [`owned_task`] — a spawned task aborted when its owner is dropped.
//! - [`supervisor`] — the recovery loop's cycles, each caught if it panics; its heartbeat.
//! - [`config`] — the environment, parsed once into [`config::OriginConfig`].
//! - [`setting`] — one bounded setting read from the environment, for `config` and `outbox`.
//! - [`error`] — the one mapping from a refusal to HTTP.
//! - [`clock`] — the one place the wall clock is read.

pub mod backlog;
pub mod clock;
pub mod config;
pub mod crypto;
pub mod edge;
pub mod edge_signature;
pub mod error;
pub mod event_cli;
pub mod gateway;
pub mod guard;
pub mod history;
pub mod idempotency;
pub mod log_writer;
pub mod metrics;
pub mod operator_auth;
pub mod outbox;
pub mod overload;
pub mod owned_task;
pub mod policy;
pub mod recovery;
pub mod request_id;
pub mod rotation;
pub mod routes;
pub mod server;
pub mod setting;
pub mod settlement;
pub mod state;
pub mod store;
pub mod supervisor;
pub mod users;
