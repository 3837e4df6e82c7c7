//! The end-to-end tests: one test binary, a module per behaviour (each file of this
//! folder), all driving the real processes on loopback through [`support`]. One binary
//! links once; its tests run side by side, each with its own ports, folders and
//! database (`docs/testing.md`).

mod support;

mod auth;
mod bodies;
mod breaker_probes;
mod bundle;
mod checkout_page;
mod claims_upgrade;
mod concurrency_limit;
mod confirm;
mod console_charts;
mod console_drop;
mod crash;
mod dev_vars;
mod docs;
mod draw;
mod drop;
mod drop_cli;
mod events;
mod gate;
mod gate_passes;
mod guard;
mod guard_instances;
mod idempotency;
mod jwks;
mod key_rotation;
mod login_limits;
mod make_run;
mod merchant_webhooks;
mod merchant_webhooks_outage;
mod merchant_webhooks_receivers;
mod openapi;
mod operator_console;
mod ops;
mod queue;
mod queue_alarm;
mod queue_paused;
mod queue_restore;
mod queue_tickets;
mod rate_limit;
mod reconciliation;
mod recovery;
mod request_ids;
mod sessions;
mod shard_windows;
mod shards;
mod stripe;
mod ticket_gate;
mod toss;
mod toss_webhooks;
mod waiting_room_page;
mod wrangler_dev;
