//! The recovery job (`docs/design/recovery.md`): converges UNKNOWN payments, and PENDING ones a
//! crashed confirm left behind, to what the PG says happened.
//!
//! A cycle claims due payments a page at a time — each claim is a lease, so several
//! origin instances sharing a database never ask about the same payment at once — asks
//! the PG about each through a guard of its own, and records what [`crate::policy::recovery::decide`]
//! makes of the answer. The guard is not the confirm path's: a dead PG opens this
//! breaker, and the safety net stops asking (the rest waits for a later cycle) instead
//! of hammering it or taking the confirm path's bulkhead slots.
//!
//! The PG's webhooks ([`crate::routes::webhooks`]) are hints: each makes a look-up
//! ([`hints`]) whose answer converges the payment at once through [`Recovery::apply`];
//! the job is the safety net behind them.
//!
//! A **late approval** — the PG approved a payment we had already recorded FAILED (a
//! request that stalled past its NOT_FOUND answers, seen by a webhook's look-up or a cycle) — is never
//! kept as money taken without a sale: the payment is marked refund-due (durably,
//! first), the charge is cancelled at the PG, and the payment becomes REFUNDED. If the
//! PG cannot cancel now, the job retries it every cycle until it can.

pub mod hints;
mod lease;
mod refund;

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use serde::Serialize;
use tokio::time::Instant;

use crate::clock::now_ms;
use crate::gateway::{self, Gateway, GatewayStatus, Order};
use crate::guard::GatewayGuard;
use crate::metrics::Metrics;
use crate::policy::recovery::{decide, Decision, RecoveryConfig, Subject};
use crate::store::transient::retry_transient;
use crate::store::{Lease, Payment, PaymentStatus, Store, StoreError};
use crate::supervisor::{self, Heartbeat};
use lease::{Held, Renewer};

/// Payments claimed at a time.
const PAGE: u32 = 100;

/// Questions to the PG in flight at once within a page (the recovery guard's bulkhead
/// bounds it again).
const CONCURRENCY: usize = 16;

/// The longest a healthy cycle takes (many pages, a slow PG): past this and three
/// intervals without one completed, the process is not ready.
const LONGEST_CYCLE: Duration = Duration::from_secs(120);

/// What one cycle did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CycleReport {
    /// Payments asked about.
    pub examined: u32,
    pub approved: u32,
    pub failed: u32,
    /// Asked again later: the PG was processing, away, or said NOT_FOUND too few times.
    pub unresolved: u32,
    /// Newly flagged for an operator.
    pub flagged: u32,
    /// Late approvals cancelled at the PG.
    pub refunded: u32,
    /// Whether the cycle stopped early because the PG could not be asked.
    pub stopped_early: bool,
    pub took_ms: u64,
}

impl CycleReport {
    /// The cycle's payments by outcome, as the metrics count them.
    pub fn outcomes(&self) -> [(&'static str, u32); 5] {
        [
            ("approved", self.approved),
            ("failed", self.failed),
            ("unresolved", self.unresolved),
            ("flagged", self.flagged),
            ("refunded", self.refunded),
        ]
    }
}

/// What applying the PG's word did to one payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// It is now settled, or asked about again later.
    Recorded {
        payment: Payment,
        decision: Decision,
        /// It carries an operator flag it did not carry before.
        newly_flagged: bool,
    },
    /// It was already settled; the PG's word agrees with it.
    AlreadySettled(Payment),
    /// It was already settled the other way round: an operator must look.
    Disagrees { payment: Payment, pg: GatewayStatus },
    /// A late approval, cancelled at the PG: REFUNDED.
    Refunded(Payment),
    /// A late approval the PG could not cancel yet: retried by the job.
    RefundPending(Payment),
}

pub struct Recovery {
    store: Arc<dyn Store>,
    gateway: Arc<dyn Gateway>,
    guard: GatewayGuard,
    metrics: Arc<Metrics>,
    config: RecoveryConfig,
    /// When a cycle of [`Recovery::run_every_interval`] last completed.
    heartbeat: Arc<Heartbeat>,
    /// This recovery's name on the leases it takes (`lease.rs`).
    holder: String,
}

impl Recovery {
    pub fn new(
        store: Arc<dyn Store>,
        gateway: Arc<dyn Gateway>,
        guard: GatewayGuard,
        metrics: Arc<Metrics>,
        config: RecoveryConfig,
    ) -> Self {
        Self {
            store,
            gateway,
            guard,
            metrics,
            config,
            heartbeat: Arc::new(Heartbeat::new(now_ms())),
            holder: lease::new_holder(),
        }
    }

    /// Whether the loop has completed a cycle within three intervals and the longest a
    /// cycle takes: a cycle may run long, but not that long (`/readyz`).
    pub fn ready(&self, now_ms: i64) -> bool {
        let bound = 3 * self.config.interval.as_millis() as i64 + LONGEST_CYCLE.as_millis() as i64;
        self.heartbeat.fresh(now_ms, bound)
    }

    /// How long this recovery's leases last: a few of its PG timeouts.
    fn lease_length(&self) -> Duration {
        lease::length(self.guard.config().timeout)
    }

    pub fn guard(&self) -> &GatewayGuard {
        &self.guard
    }

    /// Runs a cycle every interval, for as long as it is polled, each supervised: a
    /// cycle that panics is counted and the next runs on time (`supervisor.rs`).
    pub async fn run_every_interval(self: Arc<Self>) {
        let (interval, metrics, heartbeat) = (
            self.config.interval,
            self.metrics.clone(),
            self.heartbeat.clone(),
        );
        supervisor::every("recovery", interval, metrics, heartbeat, move || {
            let recovery = self.clone();
            async move {
                let report = recovery.run_cycle().await;
                if report.examined > 0 {
                    tracing::info!(?report, "recovery cycle");
                }
            }
        })
        .await;
    }

    /// One cycle: every payment due now, page by page, until none is left or the PG
    /// cannot be asked. Each page is leased while it is worked on (`lease.rs`).
    pub async fn run_cycle(&self) -> CycleReport {
        let started = Instant::now();
        let mut report = CycleReport::default();
        let length = self.lease_length();
        let renewer = Renewer {
            store: self.store.as_ref(),
            metrics: &self.metrics,
            holder: &self.holder,
            length,
        };
        loop {
            let claimed_at = Instant::now();
            let now = now_ms();
            let lease = Lease {
                holder: &self.holder,
                until_ms: now + length.as_millis() as i64,
            };
            let claimed = retry_transient(&self.metrics, "claim_for_recovery", || {
                self.store
                    .claim_for_recovery(now, now - self.config.min_age_ms, lease, PAGE)
            })
            .await;
            let page = match claimed {
                Ok(page) => page,
                Err(err) => {
                    tracing::warn!(error = %err, "recovery could not claim payments");
                    report.stopped_early = true;
                    break;
                }
            };
            let last_page = page.len() < PAGE as usize;
            let held = Held::new(page.iter().map(|p| p.payment_id), lease.until_ms);
            let work = futures_util::stream::iter(page)
                .map(|payment| self.recover_held(payment, &held))
                .buffer_unordered(CONCURRENCY)
                .collect::<Vec<_>>();
            let results = renewer.renewing(&held, claimed_at, work).await;
            let mut gateway_away = false;
            for result in results.into_iter().flatten() {
                report.examined += 1;
                match result {
                    Ok((applied, asked)) => {
                        gateway_away |= !asked;
                        count(&mut report, &applied);
                    }
                    Err(err) => {
                        tracing::warn!(error = %err, "recovery could not record a decision");
                        report.unresolved += 1;
                    }
                }
            }
            if gateway_away {
                report.stopped_early = true;
                break;
            }
            if last_page {
                break;
            }
        }
        report.took_ms = started.elapsed().as_millis() as u64;
        self.metrics.recovery_cycle(&report.outcomes());
        report
    }

    /// [`Recovery::recover`] while the payment's lease is still this recovery's; `None`
    /// (not asked) once it was lost. The lease ends with the record.
    async fn recover_held(
        &self,
        payment: Payment,
        held: &Held,
    ) -> Option<Result<(Applied, bool), StoreError>> {
        let payment_id = payment.payment_id;
        if !held.holds(payment_id, now_ms()) {
            return None;
        }
        let recovered = self.recover(payment).await;
        held.release(payment_id);
        Some(recovered)
    }

    /// Asks the PG about one claimed payment and records the decision. The flag says
    /// whether the PG could be asked at all.
    async fn recover(&self, payment: Payment) -> Result<(Applied, bool), StoreError> {
        if payment.recovery.refund_due {
            let applied = self.refund(payment).await?;
            let asked = !matches!(applied, Applied::RefundPending(_));
            return Ok((applied, asked));
        }
        let view = self.look_up(&payment).await;
        let asked = !matches!(view, GatewayStatus::Unavailable { .. });
        Ok((self.apply(payment, view).await?, asked))
    }

    /// What the PG says of `payment` now, asked through the recovery guard.
    pub async fn look_up(&self, payment: &Payment) -> GatewayStatus {
        let order = Order::of(payment);
        match self.guard.call(self.gateway.look_up(&order)).await {
            Ok(view) => view,
            Err(refusal) => GatewayStatus::Unavailable {
                cause: format!("the recovery guard refused: {}", refusal.reason()),
            },
        }
    }

    /// Converges `payment` to the PG's word `view`, now: the job's step, and a webhook's.
    pub async fn apply(
        &self,
        mut payment: Payment,
        view: GatewayStatus,
    ) -> Result<Applied, StoreError> {
        if let GatewayStatus::Approved(approval) = &view {
            // Found without the PG's id (Stripe's search): kept, so a refund can name it.
            if let (None, Some(reference)) = (&payment.gateway.reference, &approval.reference) {
                retry_transient(&self.metrics, "record_reference", || {
                    self.store.record_reference(payment.payment_id, reference)
                })
                .await?;
                payment.gateway.reference = Some(reference.clone());
            }
        }
        let order = Order::of(&payment);
        let currency = self.gateway.currency();
        let approved_as_ordered = matches!(&view, GatewayStatus::Approved(approval)
            if approval.mismatch(gateway::expected(&order, currency)).is_none());
        if payment.status == PaymentStatus::Failed && approved_as_ordered {
            return self.refund(payment).await;
        }
        if !matches!(
            payment.status,
            PaymentStatus::Pending | PaymentStatus::Unknown
        ) {
            return Ok(self.settled(payment, view));
        }
        let now = now_ms();
        let decision = decide(
            Subject {
                expected: gateway::expected(&order, currency),
                created_at: payment.created_at,
                state: &payment.recovery,
            },
            &view,
            now,
            &self.config,
        );
        let flag = match &decision {
            Decision::Later { state } => state.flag.as_ref(),
            Decision::Approve { .. } | Decision::Fail { .. } => None,
        };
        let newly_flagged = flag.is_some() && payment.recovery.flag.is_none();
        let recorded = retry_transient(&self.metrics, "record_recovery", || {
            self.store
                .record_recovery(payment.payment_id, &decision, &self.holder, now_ms())
        })
        .await?;
        match recorded {
            Some(payment) => {
                if let Decision::Approve { .. } | Decision::Fail { .. } = decision {
                    tracing::info!(order_id = %payment.order_id, status = payment.status.as_str(), reason = payment.failure_reason.as_deref(), "recovery settled a payment");
                    self.metrics.payment_settled(payment.status.as_str());
                }
                Ok(Applied::Recorded {
                    payment,
                    decision,
                    newly_flagged,
                })
            }
            // Settled meanwhile (by a confirm's TX 2, a webhook's look-up, another instance).
            None => {
                let current = self.store.payment_by_id(payment.payment_id).await?;
                Ok(self.settled(current, view))
            }
        }
    }
}

impl Recovery {
    /// The PG's word about a payment that is already settled. No word (the PG away, or
    /// still processing) agrees with anything; the PG holding money for a payment we do
    /// not count as sold — or not holding it for one we do — is an operator's.
    fn settled(&self, payment: Payment, view: GatewayStatus) -> Applied {
        let agrees = match (&payment.status, &view) {
            (_, GatewayStatus::Unavailable { .. } | GatewayStatus::Pending) => true,
            (PaymentStatus::Approved, GatewayStatus::Approved(_)) => true,
            (PaymentStatus::Approved, _) | (_, GatewayStatus::Approved(_)) => false,
            _ => true,
        };
        if agrees {
            return Applied::AlreadySettled(payment);
        }
        tracing::error!(order_id = %payment.order_id, status = payment.status.as_str(), ?view, "the PG disagrees with a settled payment; an operator must look");
        self.metrics.gateway_needs_operator("pg_disagrees");
        Applied::Disagrees { payment, pg: view }
    }
}

fn count(report: &mut CycleReport, applied: &Applied) {
    match applied {
        Applied::Recorded {
            decision,
            newly_flagged,
            ..
        } => {
            report.flagged += u32::from(*newly_flagged);
            match decision {
                Decision::Approve { .. } => report.approved += 1,
                Decision::Fail { .. } => report.failed += 1,
                Decision::Later { .. } => report.unresolved += 1,
            }
        }
        Applied::AlreadySettled(_) => {}
        Applied::Disagrees { .. } => report.flagged += 1,
        Applied::Refunded(_) => report.refunded += 1,
        Applied::RefundPending(_) => report.unresolved += 1,
    }
}
