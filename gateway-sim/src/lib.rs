//! A stand-in for the external payment gateway (PG).
//!
//! Local runs and end-to-end tests need a gateway that behaves like the real
//! one where it matters to the payment system — idempotent confirms keyed by
//! `orderId`, conflicts on mismatched repeats, JSON errors — and that can be
//! asked afterwards what it saw (`GET /admin/ledger`).
//!
//! Module map:
//! - [`config`]: environment configuration, parsed once at start.
//! - [`ledger`]: pure record of payments and received confirms; no I/O, no clock.
//! - [`routes`]: axum handlers mapping HTTP onto the ledger.
//! - [`error`]: the one error type and its `{"code","message"}` JSON body.

pub mod config;
pub mod error;
pub mod ledger;
pub mod routes;

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::net::TcpListener;

use crate::ledger::Ledger;

pub use crate::routes::app;

/// Shared state handed to every handler.
///
/// A std `Mutex` suffices because every ledger operation is synchronous and
/// short; [`SimState::with_ledger`] is the only way in, so the lock can never
/// be held across an `.await`.
#[derive(Clone, Default)]
pub struct SimState {
    ledger: Arc<Mutex<Ledger>>,
}

impl SimState {
    /// Runs `f` with exclusive access to the ledger.
    pub fn with_ledger<R>(&self, f: impl FnOnce(&mut Ledger) -> R) -> R {
        // Ledger methods leave it consistent at every step, so a panic in
        // another handler does not make the data unusable.
        let mut ledger = self.ledger.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut ledger)
    }
}

/// Serves [`app`] on `listener` until `shutdown` resolves, then lets
/// in-flight requests finish.
///
/// Logs the bound address, so a caller that bound port 0 can learn the port.
pub async fn serve(
    listener: TcpListener,
    state: SimState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    tracing::info!("gateway-sim listening on http://{addr}");
    axum::serve(listener, app(state))
        .with_graceful_shutdown(shutdown)
        .await
}
