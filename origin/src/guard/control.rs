//! The operator's setting of a guard's breaker, followed from the database every instance
//! shares: each instance reads it every [`FOLLOW_EVERY`], so a setting made on one is in
//! force on all within a second, and at start, so a restart keeps it. One small read a
//! half-second per instance is its cost.

use std::sync::Arc;
use std::time::Duration;

use super::GatewayGuard;
use crate::store::Store;

/// How often an instance reads the setting.
pub const FOLLOW_EVERY: Duration = Duration::from_millis(500);

/// Applies the stored setting of `guard`'s breaker (stored under `name`) now and every
/// [`FOLLOW_EVERY`] after, for as long as the origin runs; a failed read is retried at the
/// next tick.
pub async fn follow(guard: Arc<GatewayGuard>, name: &'static str, store: Arc<dyn Store>) {
    let mut every = tokio::time::interval(FOLLOW_EVERY);
    loop {
        every.tick().await;
        match store.breaker_control(name).await {
            Ok(Some(control)) => guard.apply_control(control),
            Ok(None) => {}
            Err(err) => tracing::warn!(error = %err, "could not read the breaker's setting"),
        }
    }
}
