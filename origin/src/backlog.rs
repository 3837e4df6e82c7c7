//! What waits for someone, sampled into the metrics every [`EVERY`]: how long the oldest
//! UNKNOWN payment has waited for its outcome, how many reconciliation items wait for an
//! operator, and the merchant's webhooks not yet delivered — what the alert rules in
//! `ops/prometheus/` watch. A sample the
//! database cannot answer leaves the last one, logged.

use std::sync::Arc;
use std::time::Duration;

use crate::metrics::Metrics;
use crate::store::{PaymentStatus, Store, StoreError};

pub const EVERY: Duration = Duration::from_secs(15);

/// One sample at `now_ms`; the webhooks' backlog only where they are pushed
/// (`pushed`): with no endpoint, events wait for the pull API, not for delivery.
pub async fn sample(
    store: &dyn Store,
    metrics: &Metrics,
    pushed: bool,
    now_ms: i64,
) -> Result<(), StoreError> {
    let oldest = store
        .payments_with_status(PaymentStatus::Unknown, 1)
        .await?;
    let waited_ms = oldest
        .first()
        .map_or(0, |payment| (now_ms - payment.created_at).max(0));
    let pending = store.pending_reconciliation_items().await?;
    metrics.backlog(Duration::from_millis(waited_ms.unsigned_abs()), pending);
    if !pushed {
        return Ok(());
    }
    let webhooks = store.webhook_backlog(0).await?;
    let oldest_ms = webhooks.oldest_at.map_or(0, |at| (now_ms - at).max(0));
    metrics.webhook_backlog(
        webhooks.pending,
        Duration::from_millis(oldest_ms.unsigned_abs()),
        webhooks.dead,
    );
    Ok(())
}

/// Samples every [`EVERY`], until dropped.
pub async fn sample_every_interval(store: Arc<dyn Store>, metrics: Arc<Metrics>, pushed: bool) {
    let mut every = tokio::time::interval(EVERY);
    loop {
        every.tick().await;
        if let Err(err) = sample(store.as_ref(), &metrics, pushed, crate::clock::now_ms()).await {
            tracing::warn!(error = %err, "the backlog could not be sampled");
        }
    }
}
