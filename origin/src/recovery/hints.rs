//! The PG's webhooks, each a hint: the payment it names is looked up through the recovery
//! guard, and only the look-up's answer converges it ([`Recovery::apply`]). A webhook is
//! answered at once; the look-ups happen here, one at a time and at most
//! `GATEWAY_WEBHOOK_LOOKUP_RATE`, whatever arrives: a flood of webhooks — forged, since
//! Toss signs none, or a PG's retries — costs the PG no more questions than that rate.
//!
//! A payment already waiting to be looked up is not queued twice, an event the PG sent
//! before (Stripe's `evt_…`) is taken once, and past [`QUEUE`] hints waiting the next
//! are dropped: the recovery job asks about every unsettled payment anyway.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rules::expiring::ExpiringMap;
use rules::sliding_window::Rate;
use tokio::sync::mpsc;

use crate::gateway::Hint;
use crate::metrics::Metrics;
use crate::store::Store;

use super::Recovery;

/// Hints waiting to be looked up, at most.
pub const QUEUE: usize = 1_024;

/// Event ids remembered, and for how long: a PG retries an event for days, and the
/// payment's own state makes a late duplicate harmless.
const EVENTS_REMEMBERED: usize = 10_000;
const EVENT_MEMORY_MS: i64 = 24 * 3_600_000;

/// What became of a webhook's hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    Queued,
    /// Its payment is already waiting to be looked up, or its event was taken before.
    Duplicate,
    /// Too many hints are waiting: dropped, left to the recovery job.
    Dropped,
}

impl Offered {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Duplicate => "duplicate",
            Self::Dropped => "dropped",
        }
    }
}

/// Where webhooks leave their hints.
pub struct Hints {
    sender: mpsc::Sender<Hint>,
    /// The order ids queued and not yet looked up.
    waiting: Mutex<HashSet<String>>,
    events: Mutex<ExpiringMap<()>>,
}

/// What [`Hints::new`] hands the worker.
pub struct Queue(mpsc::Receiver<Hint>);

impl Hints {
    pub fn new() -> (Arc<Self>, Queue) {
        let (sender, receiver) = mpsc::channel(QUEUE);
        let hints = Self {
            sender,
            waiting: Mutex::new(HashSet::new()),
            events: Mutex::new(ExpiringMap::new(EVENTS_REMEMBERED)),
        };
        (Arc::new(hints), Queue(receiver))
    }

    pub fn offer(&self, hint: Hint, now_ms: i64) -> Offered {
        if let Some(event) = &hint.event_id {
            let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
            if events.get_mut(event, now_ms).is_some() {
                return Offered::Duplicate;
            }
            events.upsert(event, (), now_ms + EVENT_MEMORY_MS, now_ms, |_, _| {});
        }
        let order_id = hint.order_id.clone();
        if !self.lock_waiting().insert(order_id.clone()) {
            return Offered::Duplicate;
        }
        let event_id = hint.event_id.clone();
        match self.sender.try_send(hint) {
            Ok(()) => Offered::Queued,
            Err(_) => {
                // Not taken: the PG's retry of this event is taken as new.
                self.lock_waiting().remove(&order_id);
                if let Some(event) = event_id {
                    let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
                    events.take(&event, now_ms);
                }
                Offered::Dropped
            }
        }
    }

    fn lock_waiting(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Looks up each hint's payment, one at a time, at most `rate`; runs while webhooks can
/// still arrive. Each look-up runs in a task of its own: one that panics is counted
/// (`origin_task_panics_total{task="webhook_look_up"}`) and the next hint is taken.
pub async fn look_up_each(
    hints: Arc<Hints>,
    Queue(mut queue): Queue,
    recovery: Arc<Recovery>,
    store: Arc<dyn Store>,
    metrics: Arc<Metrics>,
    rate: Rate,
) {
    let per_look_up = rate.window_ms.max(1).unsigned_abs() / u64::from(rate.limit.max(1));
    let spacing = Duration::from_millis(per_look_up.max(1));
    let mut pace = tokio::time::interval(spacing);
    pace.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while let Some(hint) = queue.recv().await {
        hints.lock_waiting().remove(&hint.order_id);
        pace.tick().await;
        let one = tokio::spawn(look_up(
            hint,
            recovery.clone(),
            store.clone(),
            metrics.clone(),
        ));
        if one.await.is_err() {
            metrics.task_panicked("webhook_look_up");
        }
    }
}

/// One hint's payment looked up and converged by the answer — while its confirm still
/// waits, too: the confirm's TX 2 then finds it settled (`routes::payments`).
async fn look_up(
    hint: Hint,
    recovery: Arc<Recovery>,
    store: Arc<dyn Store>,
    metrics: Arc<Metrics>,
) {
    let payment = match store.payment_by_order_id(&hint.order_id).await {
        Ok(Some(payment)) => payment,
        Ok(None) => {
            tracing::info!(?hint, "a webhook names no payment of ours; nothing done");
            metrics.webhook("unknown_payment");
            return;
        }
        Err(err) => {
            tracing::warn!(?hint, error = %err, "a webhook's payment could not be read; left to recovery");
            metrics.webhook("store_error");
            return;
        }
    };
    let view = recovery.look_up(&payment).await;
    let order_id = payment.order_id.clone();
    match recovery.apply(payment, view).await {
        Ok(applied) => {
            tracing::info!(order_id, ?applied, "a webhook's payment was looked up");
            metrics.webhook("looked_up");
        }
        Err(err) => {
            tracing::warn!(order_id, error = %err, "a webhook's look-up could not be recorded; left to recovery");
            metrics.webhook("store_error");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(order_id: &str, event_id: Option<&str>) -> Hint {
        Hint {
            order_id: order_id.into(),
            event_id: event_id.map(Into::into),
        }
    }

    #[test]
    fn a_payment_waits_once_an_event_is_taken_once_and_a_full_queue_drops() {
        let (hints, Queue(mut queue)) = Hints::new();
        assert_eq!(hints.offer(hint("order-1", None), 0), Offered::Queued);
        assert_eq!(hints.offer(hint("order-1", None), 0), Offered::Duplicate);
        assert_eq!(
            hints.offer(hint("order-2", Some("evt_1")), 0),
            Offered::Queued
        );
        assert_eq!(
            hints.offer(hint("order-3", Some("evt_1")), 1),
            Offered::Duplicate,
            "the same event again"
        );
        // Taken by the worker: its payment may wait again.
        let taken = queue.try_recv().expect("the first hint");
        hints.lock_waiting().remove(&taken.order_id);
        assert_eq!(hints.offer(hint("order-1", None), 2), Offered::Queued);

        for n in 0..QUEUE {
            hints.offer(hint(&format!("order-fill-{n}"), None), 3);
        }
        assert_eq!(
            hints.offer(hint("order-late", Some("evt_late")), 3),
            Offered::Dropped
        );
        while queue.try_recv().is_ok() {}
        assert_eq!(
            hints.offer(hint("order-late", Some("evt_late")), 4),
            Offered::Queued,
            "a dropped event is taken when the PG sends it again"
        );
    }

    #[test]
    fn an_event_is_forgotten_after_a_day() {
        let (hints, _queue) = Hints::new();
        assert_eq!(
            hints.offer(hint("order-1", Some("evt_1")), 0),
            Offered::Queued
        );
        hints.lock_waiting().clear();
        assert_eq!(
            hints.offer(hint("order-1", Some("evt_1")), EVENT_MEMORY_MS - 1),
            Offered::Duplicate
        );
        assert_eq!(
            hints.offer(hint("order-1", Some("evt_1")), EVENT_MEMORY_MS),
            Offered::Queued
        );
    }
}
