//! The concurrency limit in the guard: calls wait for a slot, are refused unsent past
//! the longest wait or when the breaker opens, and the breaker's probes are look-ups.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::http::HeaderMap;
use tokio::time::Instant;

use crate::gateway::{
    CancelAnswer, Confirmed, Gateway, GatewayAnswer, GatewayStatus, Hint, Order, Provider,
    WebhookRefusal,
};
use crate::guard::tests::{approved, guard, held_call, small_breaker};
use crate::guard::{GatewayGuard, GuardConfig, Refusal};
use crate::metrics::Metrics;
use crate::policy::breaker::{BreakerConfig, BreakerMode, BreakerState};
use crate::policy::concurrency::LimitMode;
use crate::store::BreakerControl;

pub(super) fn fixed(slots: u32, max_wait_ms: u64) -> GuardConfig {
    GuardConfig {
        concurrency: LimitMode::Fixed(slots),
        max_wait: Duration::from_millis(max_wait_ms),
        breaker: None,
        ..GuardConfig::default()
    }
}

/// The guard of `config`, shared by the calls' tasks, and its metrics.
pub(super) fn shared(config: GuardConfig) -> (Arc<GatewayGuard>, Arc<Metrics>) {
    let (guard, metrics) = guard(config);
    (Arc::new(guard), metrics)
}

/// Until `calls` hold a slot.
pub(super) async fn until_in_flight(guard: &GatewayGuard, calls: u32) {
    while guard.view().concurrency.in_flight != calls {
        tokio::task::yield_now().await;
    }
}

/// Until `calls` wait for a slot.
pub(super) async fn until_waiting(guard: &GatewayGuard, calls: u32) {
    while guard.view().concurrency.waiting != calls {
        tokio::task::yield_now().await;
    }
}

/// A call through `guard` that counts whether it was sent, and is approved at once.
pub(super) fn counted_call(
    guard: &Arc<GatewayGuard>,
    sent: &Arc<AtomicU32>,
) -> tokio::task::JoinHandle<Result<GatewayAnswer, Refusal>> {
    let (guard, sent) = (guard.clone(), sent.clone());
    tokio::spawn(async move {
        guard
            .call(async move {
                sent.fetch_add(1, Ordering::SeqCst);
                approved()
            })
            .await
    })
}

/// `calls` at once, each approved after `latency`; every one must be approved.
pub(super) async fn approved_calls_of(guard: &Arc<GatewayGuard>, calls: usize, latency: Duration) {
    let running: Vec<_> = (0..calls)
        .map(|_| {
            let guard = guard.clone();
            tokio::spawn(async move {
                guard
                    .call(async {
                        tokio::time::sleep(latency).await;
                        approved()
                    })
                    .await
            })
        })
        .collect();
    for call in running {
        assert_eq!(call.await.unwrap(), Ok(approved()));
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_past_the_limit_waits_for_a_slot_and_is_sent_when_one_frees() {
    let (guard, metrics) = shared(fixed(1, 1_000));
    let (release, first) = held_call(&guard);
    until_in_flight(&guard, 1).await;
    let sent = Arc::new(AtomicU32::new(0));
    let second = counted_call(&guard, &sent);
    until_waiting(&guard, 1).await;
    let view = guard.view().concurrency;
    assert_eq!(
        (view.mode, view.limit, view.floor, view.ceiling),
        ("fixed", Some(1), Some(1), Some(1))
    );
    assert!(metrics
        .render()
        .contains(r#"origin_gateway_waiting{guard="approve"} 1"#));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(sent.load(Ordering::SeqCst), 0, "not sent while it waits");
    release.send(()).unwrap();
    assert_eq!(first.await.unwrap(), Ok(approved()));
    assert_eq!(second.await.unwrap(), Ok(approved()));
    assert_eq!(sent.load(Ordering::SeqCst), 1);
    let view = guard.view();
    assert_eq!(
        (view.concurrency.in_flight, view.concurrency.waiting),
        (0, 0)
    );
    assert_eq!(view.refusals["CONCURRENCY_LIMITED"], 0);
}

#[tokio::test(start_paused = true)]
async fn a_call_that_waits_past_the_longest_wait_is_refused_unsent() {
    let (guard, metrics) = shared(fixed(1, 200));
    let (_release, _first) = held_call(&guard);
    until_in_flight(&guard, 1).await;
    let sent = Arc::new(AtomicU32::new(0));
    let started = Instant::now();
    let refused = counted_call(&guard, &sent).await.unwrap();
    assert_eq!(refused, Err(Refusal::ConcurrencyLimited));
    assert_eq!(started.elapsed(), Duration::from_millis(200));
    assert_eq!(sent.load(Ordering::SeqCst), 0);
    assert_eq!(metrics.guard_refusals("approve", "CONCURRENCY_LIMITED"), 1);
    assert_eq!(guard.view().concurrency.waiting, 0);
    // The edge holds its gated rooms for one longest wait.
    assert_eq!(guard.paused_for_ms(Refusal::ConcurrencyLimited), Some(200));
}

#[tokio::test(start_paused = true)]
async fn a_full_line_refuses_at_once() {
    let (guard, _) = shared(fixed(1, 10_000));
    let (_release, _first) = held_call(&guard);
    until_in_flight(&guard, 1).await;
    let sent = Arc::new(AtomicU32::new(0));
    // The line holds as many as the ceiling: one here.
    let _waiting = counted_call(&guard, &sent);
    until_waiting(&guard, 1).await;
    let started = Instant::now();
    assert_eq!(
        counted_call(&guard, &sent).await.unwrap(),
        Err(Refusal::ConcurrencyLimited)
    );
    assert_eq!(started.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_waiting_call_that_is_cancelled_leaves_the_line() {
    let (guard, _) = shared(fixed(2, 10_000));
    let (release_a, a) = held_call(&guard);
    let (_release_b, _b) = held_call(&guard);
    until_in_flight(&guard, 2).await;
    let sent = Arc::new(AtomicU32::new(0));
    let cancelled = counted_call(&guard, &sent);
    until_waiting(&guard, 1).await;
    let next = counted_call(&guard, &sent);
    until_waiting(&guard, 2).await;
    cancelled.abort();
    until_waiting(&guard, 1).await;
    release_a.send(()).unwrap();
    assert_eq!(a.await.unwrap(), Ok(approved()));
    assert_eq!(next.await.unwrap(), Ok(approved()));
    assert_eq!(
        sent.load(Ordering::SeqCst),
        1,
        "the cancelled call was never sent"
    );
    assert_eq!(guard.view().concurrency.in_flight, 1);
}

#[tokio::test(start_paused = true)]
async fn the_wait_for_a_slot_is_not_the_pgs_latency() {
    let (guard, _) = shared(GuardConfig {
        breaker: Some(BreakerConfig {
            slow_call_ms: 100,
            slow_call_rate: 50,
            ..small_breaker()
        }),
        ..fixed(2, 10_000)
    });
    // Four calls of 60 ms, two at a time: the last two are answered 120 ms after they
    // asked.
    approved_calls_of(&guard, 4, Duration::from_millis(60)).await;
    let state = guard.view().breaker.state.map(|s| (s.state, s.slow_calls));
    assert_eq!(state, Some((BreakerState::Closed, 0)));
}

#[tokio::test(start_paused = true)]
async fn the_breaker_opening_refuses_the_calls_waiting() {
    let (guard, _) = shared(GuardConfig {
        timeout: Duration::from_secs(1),
        breaker: Some(BreakerConfig {
            window: 20,
            min_calls: 5,
            slow_call_ms: 100,
            slow_call_rate: 10,
            open_ms: 60_000,
            ..BreakerConfig::default()
        }),
        max_wait: Duration::from_secs(5),
        ..GuardConfig::default()
    });
    // A stalled PG: the adaptive limit's floor, 2, are sent; the other 3 wait.
    let (releases, stalled): (Vec<_>, Vec<_>) = (0..2).map(|_| held_call(&guard)).unzip();
    until_in_flight(&guard, 2).await;
    let sent = Arc::new(AtomicU32::new(0));
    let started = Instant::now();
    let waiting: Vec<_> = (0..3).map(|_| counted_call(&guard, &sent)).collect();
    until_waiting(&guard, 3).await;
    // The calls waiting are traffic the breaker has seen: with the 2 sent, its 5
    // calls, so the first slow one opens it.
    for call in waiting {
        assert_eq!(call.await.unwrap(), Err(Refusal::CircuitOpen));
    }
    assert!(started.elapsed() <= Duration::from_millis(100));
    assert_eq!(sent.load(Ordering::SeqCst), 0);
    for call in stalled {
        assert!(matches!(
            call.await.unwrap(),
            Ok(GatewayAnswer::Unknown { .. })
        ));
    }
    drop(releases);
}

#[tokio::test(start_paused = true)]
async fn a_call_the_breaker_would_refuse_does_not_wait_for_a_slot() {
    let (guard, _) = shared(GuardConfig {
        breaker: Some(BreakerConfig {
            open_ms: 0,
            ..small_breaker()
        }),
        ..fixed(1, 10_000)
    });
    for _ in 0..2 {
        guard.call(async { GatewayAnswer::NotSent }).await.unwrap();
    }
    // Half-open: the next call is its one probe, and holds the only slot.
    let (_release, _probe) = held_call(&guard);
    until_in_flight(&guard, 1).await;
    let started = Instant::now();
    assert_eq!(
        guard.call(async { approved() }).await,
        Err(Refusal::CircuitOpen)
    );
    assert_eq!(started.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn an_operator_forcing_the_breaker_open_refuses_the_calls_waiting() {
    let (guard, _) = shared(GuardConfig {
        breaker: Some(BreakerConfig::default()),
        ..fixed(1, 10_000)
    });
    let (_release, _first) = held_call(&guard);
    until_in_flight(&guard, 1).await;
    let sent = Arc::new(AtomicU32::new(0));
    let waiting = counted_call(&guard, &sent);
    until_waiting(&guard, 1).await;
    guard.apply_control(BreakerControl {
        mode: BreakerMode::ForcedOpen,
        reason: "the PG said so".into(),
        by: "127.0.0.1".into(),
        at_ms: 0,
        version: 1,
    });
    assert_eq!(waiting.await.unwrap(), Err(Refusal::CircuitOpen));
    assert_eq!(sent.load(Ordering::SeqCst), 0);
}

/// A PG that answers look-ups while `up`, and nothing otherwise.
#[derive(Default)]
struct LookUps {
    up: AtomicBool,
    asked: AtomicU32,
}

#[async_trait]
impl Gateway for LookUps {
    fn provider(&self) -> Provider {
        Provider::Toss
    }

    fn currency(&self) -> &str {
        "KRW"
    }

    async fn confirm(&self, _order: &Order<'_>) -> Confirmed {
        unreachable!("a probe never confirms")
    }

    async fn look_up(&self, _order: &Order<'_>) -> GatewayStatus {
        unreachable!("a probe asks whether the PG answers")
    }

    async fn answers(&self, probe_id: &str) -> bool {
        assert!(probe_id.starts_with("probe-"), "{probe_id}");
        self.asked.fetch_add(1, Ordering::SeqCst);
        if self.up.load(Ordering::SeqCst) {
            true
        } else {
            std::future::pending().await
        }
    }

    async fn answers_confirm(&self, probe_id: &str) -> bool {
        self.answers(probe_id).await
    }

    async fn cancel(&self, _order: &Order<'_>, _reason: &str) -> CancelAnswer {
        unreachable!("a probe never cancels")
    }

    fn webhook(&self, _: &HeaderMap, _: &[u8], _: i64) -> Result<Option<Hint>, WebhookRefusal> {
        Ok(None)
    }
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_probes_the_pg_with_look_ups_not_payments() {
    let (guard, _) = shared(GuardConfig {
        timeout: Duration::from_millis(500),
        breaker: Some(BreakerConfig {
            open_ms: 1_000,
            ..small_breaker()
        }),
        ..GuardConfig::default()
    });
    let pg = Arc::new(LookUps::default());
    let probing = guard.start_probing(pg.clone()).unwrap();
    for _ in 0..2 {
        guard.call(async { GatewayAnswer::NotSent }).await.unwrap();
    }
    let state = || guard.view().breaker.state.map(|s| s.state);
    assert_eq!(state(), Some(BreakerState::Open));
    // Past the open wait, the PG still down: the probe goes unanswered, and payments
    // are still refused unsent.
    tokio::time::sleep(Duration::from_millis(1_700)).await;
    assert_eq!(pg.asked.load(Ordering::SeqCst), 1);
    assert_eq!(state(), Some(BreakerState::Open));
    let sent = AtomicU32::new(0);
    let payment = guard.call(async {
        sent.fetch_add(1, Ordering::SeqCst);
        approved()
    });
    assert_eq!(payment.await, Err(Refusal::CircuitOpen));
    // The PG back: the next probe, a wait after the last, turns the breaker half-open,
    // and a payment then closes it.
    pg.up.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    assert_eq!(pg.asked.load(Ordering::SeqCst), 2);
    assert_eq!(state(), Some(BreakerState::HalfOpen));
    let payment = guard.call(async {
        sent.fetch_add(1, Ordering::SeqCst);
        approved()
    });
    assert_eq!(payment.await, Ok(approved()));
    assert_eq!(sent.load(Ordering::SeqCst), 1);
    assert_eq!(state(), Some(BreakerState::Closed));
    probing.abort();
}
