//! Prometheus metrics, served on a listener of their own so they still answer when the
//! API is saturated.

use std::sync::atomic::AtomicI64;

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::store::PaymentStatus;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabel {
    status: &'static str,
}

pub struct Metrics {
    registry: Registry,
    payments: Family<StatusLabel, Counter>,
    gateway_in_flight: Gauge<i64, AtomicI64>,
}

/// Counts one gateway call in flight for as long as it lives.
pub struct InFlight<'a>(&'a Gauge<i64, AtomicI64>);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("origin");
        let payments = Family::<StatusLabel, Counter>::default();
        registry.register(
            "payments",
            "Payments settled by confirm, by status",
            payments.clone(),
        );
        let gateway_in_flight = Gauge::<i64, AtomicI64>::default();
        registry.register(
            "gateway_in_flight",
            "Gateway approval calls waiting for an answer",
            gateway_in_flight.clone(),
        );
        Self {
            registry,
            payments,
            gateway_in_flight,
        }
    }
}

impl Metrics {
    pub fn gateway_call_started(&self) -> InFlight<'_> {
        self.gateway_in_flight.inc();
        InFlight(&self.gateway_in_flight)
    }

    pub fn payment_settled(&self, status: PaymentStatus) {
        self.payments
            .get_or_create(&StatusLabel {
                status: status.as_str(),
            })
            .inc();
    }

    /// The registry in the Prometheus text format.
    pub fn render(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settled_payments_and_calls_in_flight_are_rendered() {
        let metrics = Metrics::default();
        metrics.payment_settled(PaymentStatus::Approved);
        let call = metrics.gateway_call_started();
        let text = metrics.render();
        assert!(
            text.contains(r#"origin_payments_total{status="APPROVED"} 1"#),
            "{text}"
        );
        assert!(text.contains("origin_gateway_in_flight 1"), "{text}");
        drop(call);
        assert!(metrics.render().contains("origin_gateway_in_flight 0"));
    }
}
