//! Prometheus metrics, served on a listener of their own so they still answer when the
//! API is saturated (in seed 000 the metrics died with the API and nobody could see
//! the outage).
//!
//! With async tasks a thread dump shows nothing waiting; `origin_gateway_in_flight` is
//! the one view of what waits on the PG.

use std::sync::atomic::AtomicI64;
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::policy::breaker::{BreakerMode, BreakerState, Transition};

mod gauges;
mod labels;
mod recent;
mod webhooks;

pub use gauges::{ConcurrencyGauges, InFlight};
use labels::*;

type IntGauge = Gauge<i64, AtomicI64>;

pub struct Metrics {
    registry: Registry,
    payments: Family<StatusLabel, Counter>,
    gateway_in_flight: Family<GuardLabel, IntGauge>,
    concurrency_limit: Family<GuardLabel, IntGauge>,
    gateway_waiting: Family<GuardLabel, IntGauge>,
    gateway_calls: Family<ResultLabel, Histogram>,
    refusals: Family<ReasonLabel, Counter>,
    breaker_state: Family<StateLabel, IntGauge>,
    breaker_mode: Family<ModeLabel, IntGauge>,
    breaker_transitions: Family<TransitionLabel, Counter>,
    idempotency: Family<IdempotencyLabel, Counter>,
    db_retries: Family<OperationLabel, Counter>,
    http_requests: Family<RequestLabel, Counter>,
    recovery_cycles: Counter,
    recovery_payments: Family<OutcomeLabel, Counter>,
    webhooks: Family<OutcomeLabel, Counter>,
    needs_operator: Family<OutcomeLabel, Counter>,
    late_approvals: Family<OutcomeLabel, Counter>,
    reconciliation_findings: Family<OutcomeLabel, Counter>,
    task_panics: Family<TaskLabel, Counter>,
    unknown_oldest_age: IntGauge,
    reconciliation_pending: IntGauge,
    recent_calls: recent::RecentCalls,
    merchant: webhooks::WebhookMetrics,
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
        let gateway_in_flight = Family::<GuardLabel, IntGauge>::default();
        registry.register(
            "gateway_in_flight",
            "PG calls sent and waiting for an answer",
            gateway_in_flight.clone(),
        );
        let concurrency_limit = Family::<GuardLabel, IntGauge>::default();
        registry.register(
            "gateway_concurrency_limit",
            "PG calls the concurrency limit lets out at once now; present when it is on",
            concurrency_limit.clone(),
        );
        let gateway_waiting = Family::<GuardLabel, IntGauge>::default();
        registry.register(
            "gateway_waiting",
            "PG calls waiting for a slot under the concurrency limit",
            gateway_waiting.clone(),
        );
        let gateway_calls = Family::<ResultLabel, Histogram>::new_with_constructor(|| {
            // 5 ms to ~20 s.
            Histogram::new(exponential_buckets(0.005, 2.0, 13))
        });
        registry.register(
            "gateway_call_duration_seconds",
            "PG calls sent, by what we learned, and how long each took",
            gateway_calls.clone(),
        );
        let refusals = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "guard_refusals",
            "PG calls the guard refused before sending, by reason",
            refusals.clone(),
        );
        let breaker_state = Family::<StateLabel, IntGauge>::default();
        registry.register(
            "breaker_state",
            "1 for the circuit breaker's current state, 0 for the others",
            breaker_state.clone(),
        );
        let breaker_mode = Family::<ModeLabel, IntGauge>::default();
        registry.register(
            "breaker_mode",
            "1 for the operator's setting of the breaker (AUTO, FORCED_OPEN, DISABLED) in \
             force, 0 for the others; present once an operator set one",
            breaker_mode.clone(),
        );
        let breaker_transitions = Family::<TransitionLabel, Counter>::default();
        registry.register(
            "breaker_transitions",
            "Circuit breaker state changes",
            breaker_transitions.clone(),
        );
        let idempotency = Family::<IdempotencyLabel, Counter>::default();
        registry.register(
            "idempotency_answers",
            "Confirms answered from an Idempotency-Key record instead of being run: \
             REPLAYED, IN_FLIGHT (409) or KEY_REUSED (422)",
            idempotency.clone(),
        );
        let db_retries = Family::<OperationLabel, Counter>::default();
        registry.register(
            "db_retries",
            "Transactions re-run after a transient database error",
            db_retries.clone(),
        );
        let http_requests = Family::<RequestLabel, Counter>::default();
        registry.register(
            "http_requests",
            "API requests answered, by route and status",
            http_requests.clone(),
        );
        let recovery_cycles = Counter::default();
        registry.register(
            "recovery_cycles",
            "Recovery cycles run",
            recovery_cycles.clone(),
        );
        let recovery_payments = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "recovery_payments",
            "Payments recovery asked the PG about, by outcome: approved, failed, \
             unresolved (asked again later), flagged (for an operator)",
            recovery_payments.clone(),
        );
        let webhooks = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "gateway_webhooks",
            "PG webhooks by outcome: refused, ignored (names no payment), queued, \
             duplicate, dropped (too many waiting), looked_up, \
             unknown_payment, store_error",
            webhooks.clone(),
        );
        let needs_operator = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "gateway_needs_operator",
            "PG answers an operator must look at: not_sent (the PG refused our request or \
             configuration unprocessed), approval_mismatch (it approved another amount, \
             currency or order), pg_disagrees (the PG's word contradicts a settled \
             payment: money held without a sale, or a sale without money)",
            needs_operator.clone(),
        );
        let late_approvals = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "late_approvals",
            "PG approvals of payments recorded FAILED: refunded (cancelled at the PG) or \
             refund_pending (to be retried)",
            late_approvals.clone(),
        );
        let task_panics = Family::<TaskLabel, Counter>::default();
        registry.register(
            "task_panics",
            "Tasks on the money path that panicked and were caught, by task: payment (its \
             payment left for recovery), recovery (one cycle; the next runs on time)",
            task_panics.clone(),
        );
        registry.register(
            "log_writes_dropped",
            "Log writes dropped because the output could not take them (a closed pipe): \
             logging never stops a task",
            crate::log_writer::DROPPED.clone(),
        );
        let reconciliation_findings = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "reconciliation_findings",
            "Settlement reconciliation findings, by outcome: MATCHED, AMOUNT_MISMATCH, \
             EXTERNAL_ONLY, INTERNAL_ONLY, and SKIPPED for the file's rows left out",
            reconciliation_findings.clone(),
        );
        let unknown_oldest_age = IntGauge::default();
        registry.register(
            "unknown_oldest_age_seconds",
            "How long the oldest UNKNOWN payment has been waiting for its outcome (0: none), \
             sampled every 15 s",
            unknown_oldest_age.clone(),
        );
        let reconciliation_pending = IntGauge::default();
        registry.register(
            "reconciliation_pending",
            "Reconciliation items waiting for an operator, sampled every 15 s",
            reconciliation_pending.clone(),
        );
        let merchant = webhooks::WebhookMetrics::register(&mut registry);
        Self {
            merchant,
            registry,
            payments,
            gateway_in_flight,
            concurrency_limit,
            gateway_waiting,
            gateway_calls,
            refusals,
            breaker_state,
            breaker_mode,
            breaker_transitions,
            idempotency,
            db_retries,
            http_requests,
            recovery_cycles,
            recovery_payments,
            webhooks,
            needs_operator,
            late_approvals,
            reconciliation_findings,
            task_panics,
            unknown_oldest_age,
            reconciliation_pending,
            recent_calls: recent::RecentCalls::default(),
        }
    }
}

impl Metrics {
    /// What waits for someone, as `backlog.rs` last sampled it.
    pub fn backlog(&self, unknown_oldest_age: Duration, reconciliation_pending: u64) {
        self.unknown_oldest_age
            .set(i64::try_from(unknown_oldest_age.as_secs()).unwrap_or(i64::MAX));
        self.reconciliation_pending
            .set(i64::try_from(reconciliation_pending).unwrap_or(i64::MAX));
    }

    pub fn gateway_call_started(&self, guard: &'static str) -> InFlight {
        let gauge = self.gateway_in_flight.get_or_create(&GuardLabel { guard });
        gauge.inc();
        InFlight(gauge.clone())
    }

    pub fn gateway_in_flight(&self, guard: &'static str) -> i64 {
        self.gateway_in_flight
            .get_or_create(&GuardLabel { guard })
            .get()
    }

    /// The gauges of `guard`'s concurrency limit, for it to set as the limit changes.
    pub fn concurrency(&self, guard: &'static str) -> ConcurrencyGauges {
        let label = GuardLabel { guard };
        ConcurrencyGauges {
            limit: self.concurrency_limit.get_or_create(&label).clone(),
            waiting: self.gateway_waiting.get_or_create(&label).clone(),
        }
    }

    pub fn gateway_call_finished(&self, guard: &'static str, result: &'static str, took: Duration) {
        self.gateway_calls
            .get_or_create(&ResultLabel { guard, result })
            .observe(took.as_secs_f64());
        self.recent_calls.record(guard, took);
    }

    pub fn guard_refused(&self, guard: &'static str, reason: &'static str) {
        self.refusals
            .get_or_create(&ReasonLabel { guard, reason })
            .inc();
    }

    pub fn guard_refusals(&self, guard: &'static str, reason: &'static str) -> u64 {
        self.refusals
            .get_or_create(&ReasonLabel { guard, reason })
            .get()
    }

    pub fn breaker_state(&self, guard: &'static str, current: BreakerState) {
        for state in BreakerState::ALL {
            self.breaker_state
                .get_or_create(&StateLabel {
                    guard,
                    state: state.as_str(),
                })
                .set(i64::from(state == current));
        }
    }

    /// The operator's setting of `guard`'s breaker now in force.
    pub fn breaker_mode(&self, guard: &'static str, current: BreakerMode) {
        for mode in BreakerMode::ALL {
            self.breaker_mode
                .get_or_create(&ModeLabel {
                    guard,
                    mode: mode.as_str(),
                })
                .set(i64::from(mode == current));
        }
    }

    pub fn breaker_transition(&self, guard: &'static str, transition: &Transition) {
        self.breaker_transitions
            .get_or_create(&TransitionLabel {
                guard,
                from: transition.from.as_str(),
                to: transition.to.as_str(),
            })
            .inc();
        self.breaker_state(guard, transition.to);
    }

    /// A payment settled, by its status (`APPROVED`, `FAILED`, …).
    pub fn payment_settled(&self, status: &'static str) {
        self.payments.get_or_create(&StatusLabel { status }).inc();
    }

    pub fn idempotency_answer(&self, answer: &'static str) {
        self.idempotency
            .get_or_create(&IdempotencyLabel { answer })
            .inc();
    }

    pub fn db_retried(&self, operation: &'static str) {
        self.db_retries
            .get_or_create(&OperationLabel { operation })
            .inc();
    }

    pub fn http_answered(&self, method: &str, route: &str, status: u16) {
        self.http_requests
            .get_or_create(&RequestLabel {
                method: method.to_owned(),
                route: route.to_owned(),
                status,
            })
            .inc();
    }

    /// One recovery cycle, and its payments by outcome (`approved`, `failed`, …).
    pub fn recovery_cycle(&self, outcomes: &[(&'static str, u32)]) {
        self.recovery_cycles.inc();
        for &(outcome, count) in outcomes {
            self.recovery_payments
                .get_or_create(&OutcomeLabel { outcome })
                .inc_by(u64::from(count));
        }
    }

    pub fn task_panicked(&self, task: &'static str) {
        self.task_panics.get_or_create(&TaskLabel { task }).inc();
    }

    pub fn task_panics(&self, task: &'static str) -> u64 {
        self.task_panics.get_or_create(&TaskLabel { task }).get()
    }

    pub fn late_approval(&self, outcome: &'static str) {
        self.late_approvals
            .get_or_create(&OutcomeLabel { outcome })
            .inc();
    }

    pub fn webhook(&self, outcome: &'static str) {
        self.webhooks.get_or_create(&OutcomeLabel { outcome }).inc();
    }

    pub fn gateway_needs_operator(&self, outcome: &'static str) {
        self.needs_operator
            .get_or_create(&OutcomeLabel { outcome })
            .inc();
    }

    /// One reconciliation's findings by category (`MATCHED`, …, and `SKIPPED` rows).
    pub fn reconciled(&self, findings: &[(&'static str, u64)]) {
        for &(outcome, count) in findings {
            self.reconciliation_findings
                .get_or_create(&OutcomeLabel { outcome })
                .inc_by(count);
        }
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
mod tests;
