//! A stand-in for the external payment gateway (PG).
//!
//! Local runs and end-to-end tests need a gateway that behaves like the real
//! one where it matters to the payment system — idempotent confirms keyed by
//! `orderId`, conflicts on mismatched repeats, JSON errors — that can be made
//! to misbehave on demand (`PUT /admin/faults`: latency, hangs, 500s,
//! declines, refused connections, a rate cap, double charges), that tells
//! the payment system what it decided through signed callbacks, and that can
//! be asked afterwards what it saw (`GET /admin/ledger`).
//!
//! Module map:
//! - [`config`]: environment configuration, parsed once at start.
//! - [`ledger`]: pure record of charges, received confirms and owed
//!   callbacks; no I/O, no clock, no randomness.
//! - [`faults`]: the fault settings in force.
//! - [`routes`]: axum handlers mapping HTTP onto the ledger and the faults.
//! - [`settlement`]: the day's settlement file as text; pure, like the
//!   ledger.
//! - [`callbacks`]: delivery of the ledger's callbacks, signed, with retries.
//! - `server`: the accept loop behind [`serve`], which owns the socket and
//!   the connections so faults can close them.
//! - [`error`]: the one error type and its `{"code","message"}` JSON body.

pub mod callbacks;
pub mod config;
pub mod error;
pub mod faults;
pub mod ledger;
pub mod routes;
mod server;
pub mod settlement;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::callbacks::{ClientError, Notifier};
use crate::config::CallbackConfig;
use crate::faults::{FaultMode, Faults};
use crate::ledger::{Callback, Ledger};
use crate::server::ServerLink;

pub use crate::routes::app;
pub use crate::server::serve;

/// Shared state handed to every handler.
///
/// Std mutexes suffice because every ledger and settings operation is
/// synchronous and short; the methods below are the only way in, so no lock
/// can be held across an `.await`.
///
/// The default sends no callbacks; [`SimState::with_callbacks`] does.
#[derive(Clone, Default)]
pub struct SimState {
    ledger: Arc<Mutex<Ledger>>,
    faults: Arc<Mutex<Faults>>,
    server: ServerLink,
    notifier: Option<Arc<Notifier>>,
}

impl SimState {
    /// A simulator that calls back as `config` says.
    pub fn with_callbacks(config: CallbackConfig) -> Result<Self, ClientError> {
        let notifier = Notifier::new(config)?;
        tracing::info!("callbacks go to {}", notifier.url());
        Ok(Self {
            notifier: Some(Arc::new(notifier)),
            ..Self::default()
        })
    }

    /// Whether what is decided under `faults` is to be called back.
    pub(crate) fn notifying(&self, faults: &Faults) -> bool {
        self.notifier.is_some() && faults.callbacks
    }

    /// Delivers each callback from a task of its own.
    pub(crate) fn send_callbacks(&self, callbacks: Vec<Callback>) {
        let Some(notifier) = &self.notifier else {
            return;
        };
        for callback in callbacks {
            let notifier = Arc::clone(notifier);
            let state = self.clone();
            tokio::spawn(async move { notifier.deliver(&state, callback).await });
        }
    }

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

/// Epoch milliseconds: the one place the simulator reads the clock. A clock
/// before 1970 is a broken host, not a request error, so it reads as 0
/// rather than failing the caller.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
