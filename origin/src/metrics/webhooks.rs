//! The merchant's webhooks as Prometheus sees them: each attempt by its result, and the
//! backlog — how many wait, how long the oldest has, how many are dead letters —
//! sampled with the rest of what waits (`backlog.rs`).

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::labels::OutcomeLabel;
use std::time::Duration;

use super::IntGauge;

pub(super) struct WebhookMetrics {
    attempts: Family<OutcomeLabel, Counter>,
    backlog: IntGauge,
    oldest_age: IntGauge,
    dead: IntGauge,
}

impl WebhookMetrics {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let attempts = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "webhook_attempts",
            "Deliveries of the merchant's webhooks attempted, by result: delivered, failed \
             (tried again), dead (kept as a dead letter), gone (410: the endpoint disabled)",
            attempts.clone(),
        );
        let backlog = IntGauge::default();
        registry.register(
            "webhook_backlog_events",
            "Outbox events not yet delivered to the merchant (dead letters apart), sampled every 15 s",
            backlog.clone(),
        );
        let oldest_age = IntGauge::default();
        registry.register(
            "webhook_backlog_oldest_age_seconds",
            "How long ago the oldest event not yet delivered happened (0 when none waits), \
             sampled every 15 s",
            oldest_age.clone(),
        );
        let dead = IntGauge::default();
        registry.register(
            "webhook_dead_letters",
            "Events given up on and kept for an operator, sampled every 15 s",
            dead.clone(),
        );
        Self {
            attempts,
            backlog,
            oldest_age,
            dead,
        }
    }

    pub(super) fn attempt(&self, outcome: &'static str) {
        self.attempts.get_or_create(&OutcomeLabel { outcome }).inc();
    }

    pub(super) fn backlog(&self, pending: i64, oldest_age_secs: i64, dead: i64) {
        self.backlog.set(pending);
        self.oldest_age.set(oldest_age_secs);
        self.dead.set(dead);
    }
}

impl super::Metrics {
    /// An attempt at a merchant's webhook, by result.
    pub fn webhook_attempt(&self, result: &'static str) {
        self.merchant.attempt(result);
    }

    /// The merchant's webhooks waiting, as `backlog.rs` last sampled them.
    pub fn webhook_backlog(&self, pending: i64, oldest_age: Duration, dead: i64) {
        let age = i64::try_from(oldest_age.as_secs()).unwrap_or(i64::MAX);
        self.merchant.backlog(pending, age, dead);
    }
}
