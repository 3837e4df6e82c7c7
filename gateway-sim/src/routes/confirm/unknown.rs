//! A confirm of a `paymentKey` no payment window made. Toss refuses it unprocessed, 404
//! `NOT_FOUND_PAYMENT` (on a confirm: a key the PG does not know — `docs/design/gateways.md`),
//! and the origin's breaker sends one on purpose, as a confirm probe that can charge
//! nobody, to learn whether the confirm path answers at all. The simulator takes every
//! other key its window never issued as a real window's (so that tests can confirm without
//! a browser), so the keys it does not know are marked: they start with
//! [`UNKNOWN_KEY_PREFIX`], as the origin's probes do and Toss's keys (letters and digits)
//! never do.
//!
//! Such a confirm meets what every confirm meets before its payment is looked at — a slot
//! under the `capacity` (a full line: 429), then the fault mode's timing: `DELAY` (and
//! `NORMAL` with a capacity) after its roll, so a stalled confirm path stalls it too; the
//! HANG modes hold it, and `HANG_BEFORE_PROCESSING` then drops the connection; the 500
//! modes answer 500 — and is then refused. It is among the ledger's `calls`, as every API
//! request is, but nothing else is recorded: not among the confirms received (`requests`
//! are payments'), no Idempotency-Key claimed, no rate cap counted, no test code
//! answered, no charge, no webhook.

use std::future::pending;
use std::time::Duration;

use axum::Extension;

use crate::capacity::Slot;
use crate::codes;
use crate::error::ApiError;
use crate::faults::{FaultMode, Faults};
use crate::routes::Answer;
use crate::server::ConnectionHandle;

/// How a `paymentKey` no window made begins.
pub const UNKNOWN_KEY_PREFIX: &str = "probe-";

/// Whether the simulator knows `payment_key` for one no window made.
pub(super) fn is_unknown(payment_key: &str) -> bool {
    payment_key.starts_with(UNKNOWN_KEY_PREFIX)
}

/// Refuses the confirm of an unknown key, once the fault mode has taken its time; `slot`
/// is held until then.
pub(super) async fn refuse(
    faults: &Faults,
    slot: Slot,
    connection: Option<Extension<ConnectionHandle>>,
    order_id: &str,
) -> Result<Answer, ApiError> {
    match faults.mode {
        FaultMode::Normal | FaultMode::RefuseConnections | FaultMode::Delay => {
            if let Some(range) = faults.processing_ms() {
                tokio::time::sleep(Duration::from_millis(fastrand::u64(range))).await;
            }
        }
        FaultMode::HangAfterProcessing => tokio::time::sleep(faults.hold()).await,
        FaultMode::HangBeforeProcessing => {
            tokio::time::sleep(faults.hold()).await;
            if let Some(Extension(connection)) = connection {
                connection.drop_without_answer();
            }
            return pending().await;
        }
        FaultMode::Error500 | FaultMode::Error500AfterProcessing => {
            return Err(ApiError::detailed(
                codes::FAILED_INTERNAL_SYSTEM_PROCESSING,
                "injected fault: a confirm of a paymentKey no window made, answered 500",
            ));
        }
    }
    drop(slot);
    tracing::info!(
        order_id,
        "confirm of a paymentKey no window made: not found"
    );
    Err(ApiError::Toss(codes::NOT_FOUND_PAYMENT))
}
