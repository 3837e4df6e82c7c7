//! A stand-in for the external payment gateway (PG).
//!
//! Local runs and end-to-end tests need a gateway that behaves like the real
//! one where it matters to the payment system — idempotent confirms keyed by
//! `orderId`, conflicts on mismatched repeats, JSON errors — that can be made
//! to misbehave on demand (`PUT /admin/faults`: latency, hangs, 500s,
//! declines, refused connections, a rate cap, double charges), and that can
//! be asked afterwards what it saw (`GET /admin/ledger`).
//!
//! Module map:
//! - [`config`]: environment configuration, parsed once at start.
//! - [`ledger`]: pure record of charges and received confirms; no I/O, no
//!   clock, no randomness.
//! - [`faults`]: the fault settings in force.
//! - [`routes`]: axum handlers mapping HTTP onto the ledger and the faults.
//! - `server`: the accept loop behind [`serve`], which owns the socket and
//!   the connections so faults can close them.
//! - [`error`]: the one error type and its `{"code","message"}` JSON body.

pub mod config;
pub mod error;
pub mod faults;
pub mod ledger;
pub mod routes;
mod server;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::faults::{FaultMode, Faults};
use crate::ledger::Ledger;
use crate::server::ServerLink;

pub use crate::routes::app;
pub use crate::server::serve;

/// Shared state handed to every handler.
///
/// Std mutexes suffice because every ledger and settings operation is
/// synchronous and short; the methods below are the only way in, so no lock
/// can be held across an `.await`.
#[derive(Clone, Default)]
pub struct SimState {
    ledger: Arc<Mutex<Ledger>>,
    faults: Arc<Mutex<Faults>>,
    server: ServerLink,
}

impl SimState {
    /// Runs `f` with exclusive access to the ledger.
    pub fn with_ledger<R>(&self, f: impl FnOnce(&mut Ledger) -> R) -> R {
        f(&mut lock(&self.ledger))
    }

    /// A copy of the fault settings in force.
    pub(crate) fn faults(&self) -> Faults {
        *lock(&self.faults)
    }

    pub(crate) fn set_faults(&self, faults: Faults) {
        *lock(&self.faults) = faults;
    }

    /// Back to `NORMAL` once the port is open again, unless the settings
    /// were replaced in the meantime.
    pub(crate) fn end_refusal(&self) {
        let mut faults = lock(&self.faults);
        if faults.mode == FaultMode::RefuseConnections {
            *faults = faults.after_refusal();
        }
    }

    /// The line to the serve loop, if one owns this simulator's socket.
    pub(crate) fn server(&self) -> &ServerLink {
        &self.server
    }
}

/// Ledger and settings are consistent at every step, so a panic in another
/// handler does not make the data unusable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
