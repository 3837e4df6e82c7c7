//! Probes for the approve guard's breaker (`policy/breaker/probe.rs`): once an open
//! breaker's wait is over, the guard asks the PG about a payment that cannot exist,
//! instead of letting a customer's payment find out whether the PG is back — a look-up
//! ([`Gateway::answers`]), or, once a payment let through half-open went unanswered, a
//! confirm ([`Gateway::answers_confirm`]). Neither can charge anybody, and an answer
//! ("not found" above all) within the slow-call threshold is the PG working; no answer, a
//! 5xx, a 429 or a late answer keeps the breaker open for another wait. A probe is given
//! up at the threshold: what comes later could not pass anyway.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::GatewayGuard;
use crate::gateway::Gateway;
use crate::policy::breaker::probe::ProbeKind;
use crate::policy::breaker::BreakerMode;

/// How often the guard asks whether a probe is due.
const PROBE_POLL: Duration = Duration::from_millis(100);

impl GatewayGuard {
    /// Sends the breaker's probes to `gateway`, for as long as the guard lives. Without a
    /// breaker, nothing to do.
    pub fn start_probing(self: &Arc<Self>, gateway: Arc<dyn Gateway>) -> Option<JoinHandle<()>> {
        let mut breaker = self.breaker()?;
        breaker.probe_with_look_ups();
        drop(breaker);
        Some(tokio::spawn(probe_while_alive(
            Arc::downgrade(self),
            gateway,
        )))
    }

    /// Sends one probe if one is due now.
    async fn probe(&self, gateway: &dyn Gateway) {
        if self.mode() != BreakerMode::Auto {
            return;
        }
        let Some(ticket) = self.breaker().and_then(|mut b| b.probe_due(self.now_ms())) else {
            return;
        };
        // No payment has such an id: ours are the shop's, and the PG's are its own.
        let mut bytes = [0u8; 8];
        let nonce = match getrandom::fill(&mut bytes) {
            Ok(()) => u64::from_le_bytes(bytes),
            Err(_) => self.now_ms(),
        };
        let probe_id = format!("probe-{nonce:016x}");
        let kind = ticket.kind();
        let within = self.config.healthy_within();
        let started = Instant::now();
        let answered = match kind {
            ProbeKind::LookUp => tokio::time::timeout(within, gateway.answers(&probe_id)).await,
            ProbeKind::Confirm => {
                tokio::time::timeout(within, gateway.answers_confirm(&probe_id)).await
            }
        };
        let took = started.elapsed();
        let healthy = answered.unwrap_or(false) && took < within;
        tracing::info!(
            guard = self.name,
            probe = match kind {
                ProbeKind::LookUp => "look-up",
                ProbeKind::Confirm => "confirm",
            },
            probe_id,
            healthy,
            took_ms = took.as_millis() as u64,
            "the breaker's probe is over"
        );
        let transition = self
            .breaker()
            .and_then(|mut b| b.probe_answered(ticket, healthy, self.now_ms()));
        self.note(transition);
    }
}

async fn probe_while_alive(guard: Weak<GatewayGuard>, gateway: Arc<dyn Gateway>) {
    let mut every = tokio::time::interval(PROBE_POLL);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let Some(guard) = guard.upgrade() else {
            return;
        };
        guard.probe(gateway.as_ref()).await;
    }
}

#[cfg(test)]
mod tests;
