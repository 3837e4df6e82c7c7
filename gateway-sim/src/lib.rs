//! A stand-in for the external payment gateway (PG): Toss Payments' core API
//! v1, as Toss documents it.
//!
//! Local runs and end-to-end tests need a gateway that answers what Toss
//! answers where it matters to the payment system — `Authorization: Basic`
//! with the secret key, confirms and cancels under `Idempotency-Key` (the body
//! no part of a key's identity), repeats refused as `ALREADY_PROCESSED_PAYMENT`,
//! the Payment object, `{"code","message"}` errors with Toss's statuses,
//! `TossPayments-Test-Code`, unsigned `PAYMENT_STATUS_CHANGED` webhooks with
//! their retries — that can be made to misbehave on demand
//! (`PUT /admin/faults`: latency, hangs, 500s before or after charging,
//! declines, refused connections, a rate cap, a capacity that saturates, double
//! charges, a wrong approved amount, any error code), and that can be asked
//! afterwards what it saw (`GET /admin/ledger`, `GET /admin/capacity`).
//!
//! Module map:
//! - [`config`]: environment configuration, parsed once at start.
//! - [`ledger`]: pure record of charges, Idempotency-Keys, received requests
//!   and owed webhooks; no I/O, no clock, no randomness.
//! - [`payment`]: the Toss Payment object made from a ledger record; pure.
//! - [`codes`]: Toss's error codes and their statuses.
//! - [`faults`]: the fault settings in force.
//! - [`capacity`]: the confirms processed at once and the line waiting for a
//!   slot; no clock, no I/O.
//! - [`routes`]: axum handlers mapping HTTP onto the ledger and the faults.
//! - [`settlement`]: the day's settlement file as text; pure, like the
//!   ledger.
//! - [`webhooks`]: delivery of the ledger's webhooks, with retries.
//! - `server`: the accept loop behind [`serve`], which owns the socket and
//!   the connections so faults can close them.
//! - [`error`]: the one error type and its `{"code","message"}` JSON body.

pub mod capacity;
pub mod codes;
pub mod config;
pub mod error;
pub mod faults;
pub mod ledger;
pub mod payment;
pub mod routes;
mod server;
pub mod settlement;
pub mod webhooks;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::capacity::Capacity;
use crate::config::{SecretKey, WebhookConfig};
use crate::faults::{FaultMode, Faults};
use crate::ledger::{Ledger, Webhook};
use crate::server::ServerLink;
use crate::webhooks::{ClientError, Notifier};

pub use crate::routes::app;
pub use crate::server::serve;

/// Shared state handed to every handler.
///
/// Std mutexes suffice because every ledger and settings operation is
/// synchronous and short; the methods below are the only way in, so no lock
/// can be held across an `.await`.
///
/// The default accepts Toss's documentation test key
/// ([`config::DEFAULT_SECRET_KEY`]) and sends no webhooks.
#[derive(Clone, Default)]
pub struct SimState {
    ledger: Arc<Mutex<Ledger>>,
    faults: Arc<Mutex<Faults>>,
    capacity: Capacity,
    server: ServerLink,
    secret_key: Arc<SecretKey>,
    notifier: Option<Arc<Notifier>>,
}

impl SimState {
    /// A simulator that accepts `secret_key` and, with `webhooks`, sends
    /// webhooks as it says.
    pub fn new(
        secret_key: SecretKey,
        webhooks: Option<WebhookConfig>,
    ) -> Result<Self, ClientError> {
        let notifier = webhooks.map(Notifier::new).transpose()?;
        if let Some(notifier) = &notifier {
            tracing::info!("webhooks go to {}", notifier.url());
        }
        Ok(Self {
            secret_key: Arc::new(secret_key),
            notifier: notifier.map(Arc::new),
            ..Self::default()
        })
    }

    /// The one secret key callers must name.
    pub(crate) fn secret_key(&self) -> &SecretKey {
        &self.secret_key
    }

    /// Whether what is decided under `faults` owes a webhook.
    pub(crate) fn notifying(&self, faults: &Faults) -> bool {
        self.notifier.is_some() && faults.webhooks
    }

    /// Delivers each webhook from a task of its own.
    pub(crate) fn send_webhooks(&self, webhooks: Vec<Webhook>) {
        let Some(notifier) = &self.notifier else {
            return;
        };
        for webhook in webhooks {
            let notifier = Arc::clone(notifier);
            let state = self.clone();
            tokio::spawn(async move { notifier.deliver(&state, webhook).await });
        }
    }

    /// Runs `f` with exclusive access to the ledger.
    pub fn with_ledger<R>(&self, f: impl FnOnce(&mut Ledger) -> R) -> R {
        f(&mut lock(&self.ledger))
    }

    /// A copy of the fault settings in force.
    pub(crate) fn faults(&self) -> Faults {
        lock(&self.faults).clone()
    }

    /// Puts `faults` in force, their capacity included.
    pub(crate) fn set_faults(&self, faults: Faults) {
        let mut in_force = lock(&self.faults);
        self.capacity.set(faults.limits());
        *in_force = faults;
    }

    /// The slots and the line every confirm goes through.
    pub(crate) fn capacity(&self) -> &Capacity {
        &self.capacity
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
