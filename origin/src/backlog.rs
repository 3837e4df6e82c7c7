//! What waits for someone, sampled into the metrics every [`EVERY`]: how long the oldest
//! UNKNOWN payment has waited for its outcome, and how many reconciliation items wait
//! for an operator — what the alert rules in `ops/prometheus/` watch. A sample the
//! database cannot answer leaves the last one, logged.

use std::sync::Arc;
use std::time::Duration;

use crate::metrics::Metrics;
use crate::store::{PaymentStatus, Store, StoreError};

pub const EVERY: Duration = Duration::from_secs(15);

/// One sample at `now_ms`.
pub async fn sample(store: &dyn Store, metrics: &Metrics, now_ms: i64) -> Result<(), StoreError> {
    let oldest = store
        .payments_with_status(PaymentStatus::Unknown, 1)
        .await?;
    let waited_ms = oldest
        .first()
        .map_or(0, |payment| (now_ms - payment.created_at).max(0));
    let pending = store.pending_reconciliation_items().await?;
    metrics.backlog(Duration::from_millis(waited_ms.unsigned_abs()), pending);
    Ok(())
}

/// Samples every [`EVERY`], until dropped.
pub async fn sample_every_interval(store: Arc<dyn Store>, metrics: Arc<Metrics>) {
    let mut every = tokio::time::interval(EVERY);
    loop {
        every.tick().await;
        if let Err(err) = sample(store.as_ref(), &metrics, crate::clock::now_ms()).await {
            tracing::warn!(error = %err, "the backlog could not be sampled");
        }
    }
}
