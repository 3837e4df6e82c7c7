//! The origin's integration tests: one test binary, a module per concept (each file or
//! folder here), sharing [`support`]. The settlement parser's fuzzing harness and the
//! hostile workbooks are binaries of their own (`settlement_fuzz.rs`,
//! `hostile_workbooks.rs`): each counts its own process's threads and memory, which
//! other tests would move.

mod support;

mod architecture;
mod breaker_controls;
mod drops;
mod encryption;
mod gate;
mod log_output;
mod outbox;
mod payments;
mod probes;
mod reconciliation_workbooks;
mod reconciliations;
mod recovery_leases;
mod settlement_deadline;
mod shared_budget;
mod store;
mod stripe;
mod users;
