//! The guard's probes with a PG whose look-ups and confirms each answer or stall: after a
//! payment let through half-open goes unanswered, the guard asks the confirm path itself,
//! and no other payment is sent until it answers.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::http::HeaderMap;

use crate::gateway::{
    CancelAnswer, Confirmed, Gateway, GatewayAnswer, GatewayStatus, Hint, Order, Provider,
    WebhookRefusal,
};
use crate::guard::tests::{approved, guard};
use crate::guard::{GatewayGuard, GuardConfig};
use crate::policy::breaker::{BreakerConfig, BreakerState};

/// A PG whose look-ups and confirms answer while up, and stall otherwise.
#[derive(Default)]
struct Pg {
    look_ups_up: AtomicBool,
    confirms_up: AtomicBool,
    look_ups: AtomicU32,
    confirms: AtomicU32,
}

async fn answer_if(up: &AtomicBool) -> bool {
    if up.load(Ordering::SeqCst) {
        true
    } else {
        std::future::pending().await
    }
}

#[async_trait]
impl Gateway for Pg {
    fn provider(&self) -> Provider {
        Provider::Toss
    }

    fn currency(&self) -> &str {
        "KRW"
    }

    async fn confirm(&self, _order: &Order<'_>) -> Confirmed {
        unreachable!("payments go through the guard's call")
    }

    async fn look_up(&self, _order: &Order<'_>) -> GatewayStatus {
        unreachable!("a probe asks whether the PG answers")
    }

    async fn answers(&self, probe_id: &str) -> bool {
        assert!(probe_id.starts_with("probe-"), "{probe_id}");
        self.look_ups.fetch_add(1, Ordering::SeqCst);
        answer_if(&self.look_ups_up).await
    }

    async fn answers_confirm(&self, probe_id: &str) -> bool {
        assert!(probe_id.starts_with("probe-"), "{probe_id}");
        self.confirms.fetch_add(1, Ordering::SeqCst);
        answer_if(&self.confirms_up).await
    }

    async fn cancel(&self, _order: &Order<'_>, _reason: &str) -> CancelAnswer {
        unreachable!("a probe never cancels")
    }

    fn webhook(&self, _: &HeaderMap, _: &[u8], _: i64) -> Result<Option<Hint>, WebhookRefusal> {
        Ok(None)
    }
}

/// A payment through `guard` to a PG whose confirms answer while `up`: whether it was sent.
async fn pay(guard: &GatewayGuard, pg: &Pg, sent: &AtomicU32) -> bool {
    let answer = guard
        .call(async {
            sent.fetch_add(1, Ordering::SeqCst);
            answer_if(&pg.confirms_up).await;
            approved()
        })
        .await;
    answer.is_ok()
}

#[tokio::test(start_paused = true)]
async fn after_a_half_open_payment_stalls_the_guard_probes_confirms_and_sends_no_payment() {
    let (guard, _) = guard(GuardConfig {
        breaker: Some(BreakerConfig {
            window: 4,
            min_calls: 2,
            slow_call_ms: 200,
            open_ms: 1_000,
            half_open_calls: 1,
            ..BreakerConfig::default()
        }),
        ..GuardConfig::default()
    });
    let guard = Arc::new(guard);
    let pg = Arc::new(Pg::default());
    pg.look_ups_up.store(true, Ordering::SeqCst);
    let probing = guard.start_probing(pg.clone()).expect("a breaker");
    let state = || guard.view().breaker.state.map(|s| s.state);
    for _ in 0..2 {
        guard.call(async { GatewayAnswer::NotSent }).await.unwrap();
    }
    assert_eq!(state(), Some(BreakerState::Open));
    // The look-up passes; the one half-open payment stalls, and re-opens the breaker at
    // the slow-call threshold (it times out at 3 s, UNKNOWN).
    tokio::time::sleep(Duration::from_millis(1_050)).await;
    assert_eq!(state(), Some(BreakerState::HalfOpen));
    let sent = Arc::new(AtomicU32::new(0));
    let stalled = {
        let (guard, pg, sent) = (guard.clone(), pg.clone(), sent.clone());
        tokio::spawn(async move { pay(&guard, &pg, &sent).await })
    };
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(state(), Some(BreakerState::Open));
    assert_eq!(sent.load(Ordering::SeqCst), 1);
    // Cycle after cycle, a confirm probe goes unanswered; no payment is sent.
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(!pay(&guard, &pg, &sent).await, "refused: CIRCUIT_OPEN");
    }
    assert_eq!(sent.load(Ordering::SeqCst), 1, "no payment after the first");
    assert_eq!(
        pg.look_ups.load(Ordering::SeqCst),
        1,
        "look-ups say nothing now"
    );
    let confirms = pg.confirms.load(Ordering::SeqCst);
    assert!((7..=9).contains(&confirms), "one a cycle: {confirms}");
    assert!(stalled.await.unwrap(), "sent, and UNKNOWN at its timeout");
    // The confirm path back: the next confirm probe turns it half-open, and a payment
    // closes it.
    pg.confirms_up.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    assert_eq!(state(), Some(BreakerState::HalfOpen));
    assert!(pay(&guard, &pg, &sent).await);
    assert_eq!(state(), Some(BreakerState::Closed));
    probing.abort();
}
