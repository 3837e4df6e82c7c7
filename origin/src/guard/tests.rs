//! The guard's devices put together, with the PG call mocked by a future.

use std::sync::atomic::{AtomicU32, Ordering};

use rules::sliding_window::Rate;
use tokio::sync::oneshot;

use super::*;
use crate::gateway::GatewayAnswer;

/// A PG's approval, as the guard's tests answer with it.
pub(super) fn approved() -> GatewayAnswer {
    GatewayAnswer::Approved(crate::gateway::Approval {
        order_id: "order-1".into(),
        amount: 1,
        currency: "KRW".into(),
        approved_at: Some(1),
        reference: None,
    })
}

pub(super) fn guard(config: GuardConfig) -> (GatewayGuard, Arc<Metrics>) {
    let metrics = Arc::new(Metrics::default());
    (
        GatewayGuard::new("approve", config, metrics.clone()),
        metrics,
    )
}

pub(super) fn small_breaker() -> BreakerConfig {
    BreakerConfig {
        window: 4,
        min_calls: 2,
        open_ms: 60_000,
        half_open_calls: 1,
        ..BreakerConfig::default()
    }
}

/// A call through `guard` that the PG approves once `release` is sent or dropped.
pub(super) fn held_call(
    guard: &Arc<GatewayGuard>,
) -> (
    oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<GatewayAnswer, Refusal>>,
) {
    let (release, held) = oneshot::channel::<()>();
    let guard = guard.clone();
    let call = tokio::spawn(async move {
        guard
            .call(async move {
                let _ = held.await;
                approved()
            })
            .await
    });
    (release, call)
}

/// A call that counts whether it ran.
async fn counted(calls: &AtomicU32, answer: GatewayAnswer) -> GatewayAnswer {
    calls.fetch_add(1, Ordering::SeqCst);
    answer
}

#[tokio::test(start_paused = true)]
async fn a_call_past_the_timeout_is_unknown_and_counts_as_a_failure() {
    let (guard, metrics) = guard(GuardConfig {
        timeout: Duration::from_millis(20),
        breaker: Some(small_breaker()),
        ..GuardConfig::default()
    });
    for _ in 0..2 {
        let answer = guard.call(std::future::pending::<GatewayAnswer>()).await;
        assert!(
            matches!(answer, Ok(GatewayAnswer::Unknown { .. })),
            "{answer:?}"
        );
    }
    let calls = AtomicU32::new(0);
    assert_eq!(
        guard.call(counted(&calls, approved())).await,
        Err(Refusal::CircuitOpen)
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "a refused call is never made"
    );
    assert_eq!(metrics.guard_refusals("approve", "CIRCUIT_OPEN"), 1);
    assert_eq!(metrics.gateway_in_flight("approve"), 0);
}

#[tokio::test(start_paused = true)]
async fn declines_and_business_rejections_keep_the_breaker_closed() {
    let (guard, _) = guard(GuardConfig {
        breaker: Some(small_breaker()),
        ..GuardConfig::default()
    });
    for answer in [
        GatewayAnswer::Declined {
            code: "REJECT_CARD_PAYMENT".into(),
        },
        GatewayAnswer::Rejected {
            status: 400,
            code: "INVALID_REQUEST".into(),
        },
        GatewayAnswer::Declined {
            code: "REJECT_CARD_PAYMENT".into(),
        },
    ] {
        assert_eq!(guard.call(async { answer.clone() }).await, Ok(answer));
    }
    let view = guard.view();
    assert_eq!(
        view.breaker.state.map(|s| s.state),
        Some(breaker::BreakerState::Closed)
    );
}

#[tokio::test(start_paused = true)]
async fn connection_errors_5xx_and_refusals_for_our_rate_open_the_breaker() {
    for failure in [
        GatewayAnswer::NotSent,
        GatewayAnswer::Unknown {
            cause: "500".into(),
        },
        GatewayAnswer::Throttled {
            code: "rate_limit".into(),
        },
    ] {
        let (guard, _) = guard(GuardConfig {
            breaker: Some(small_breaker()),
            ..GuardConfig::default()
        });
        for _ in 0..2 {
            let answer = failure.clone();
            guard.call(async move { answer }).await.unwrap();
        }
        assert_eq!(
            guard.call(async { approved() }).await,
            Err(Refusal::CircuitOpen),
            "{failure:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_full_bulkhead_refuses_at_once_and_a_finished_call_frees_its_slot() {
    let (guard, metrics) = guard(GuardConfig {
        bulkhead: 2,
        concurrency: LimitMode::Off,
        ..GuardConfig::default()
    });
    let guard = Arc::new(guard);
    let (releases, calls): (Vec<_>, Vec<_>) = (0..2).map(|_| held_call(&guard)).unzip();
    while metrics.gateway_in_flight("approve") < 2 {
        tokio::task::yield_now().await;
    }
    let ran = AtomicU32::new(0);
    assert_eq!(
        guard.call(counted(&ran, approved())).await,
        Err(Refusal::BulkheadFull)
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(guard.view().bulkhead.available, 0);
    drop(releases);
    for call in calls {
        assert_eq!(call.await.unwrap(), Ok(approved()));
    }
    assert_eq!(guard.view().bulkhead.available, 2);
    assert_eq!(guard.call(async { approved() }).await, Ok(approved()));
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_probe_gives_its_slot_back() {
    let (guard, _) = guard(GuardConfig {
        breaker: Some(BreakerConfig {
            open_ms: 0,
            ..small_breaker()
        }),
        ..GuardConfig::default()
    });
    for _ in 0..2 {
        guard.call(async { GatewayAnswer::NotSent }).await.unwrap();
    }
    // Open with no wait: the next call is the one half-open probe. Drop it mid-call.
    let probe = guard.call(std::future::pending::<GatewayAnswer>());
    let cancelled = tokio::time::timeout(Duration::from_millis(10), probe).await;
    assert!(cancelled.is_err());
    assert_eq!(guard.call(async { approved() }).await, Ok(approved()));
    let view = guard.view();
    assert_eq!(
        view.breaker.state.map(|s| s.state),
        Some(breaker::BreakerState::Closed)
    );
    assert_eq!(view.bulkhead.available, 50);
}

#[tokio::test(start_paused = true)]
async fn the_limiter_refuses_past_its_rate_and_counts_only_sent_calls() {
    let one_per_minute = Rate {
        limit: 1,
        window_ms: 60_000,
    };
    for limiter in [
        LimiterConfig::TokenBucket(one_per_minute),
        LimiterConfig::SlidingWindow(one_per_minute),
    ] {
        let (guard, metrics) = guard(GuardConfig {
            limiter,
            ..GuardConfig::default()
        });
        assert_eq!(guard.call(async { approved() }).await, Ok(approved()));
        assert_eq!(
            guard.call(async { approved() }).await,
            Err(Refusal::RateLimited)
        );
        assert_eq!(metrics.guard_refusals("approve", "RATE_LIMITED"), 1);
    }
}

/// The sliding window counts a call while it is in flight and for a window after it
/// is over, answered or abandoned, so the PG's own clock never sees more than the limit;
/// a refused call counts nothing and ends nothing.
#[tokio::test(start_paused = true)]
async fn the_sliding_window_counts_a_call_until_a_window_after_it_is_over() {
    let window = Duration::from_secs(1);
    let past_the_window = window + window / 4;
    let (guard, metrics) = guard(GuardConfig {
        limiter: LimiterConfig::SlidingWindow(Rate {
            limit: 1,
            window_ms: window.as_millis() as i64,
        }),
        ..GuardConfig::default()
    });
    let guard = Arc::new(guard);
    let (release, slow) = held_call(&guard);
    while metrics.gateway_in_flight("approve") < 1 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        guard.call(async { approved() }).await,
        Err(Refusal::RateLimited)
    );
    tokio::time::sleep(past_the_window).await;
    assert_eq!(
        guard.call(async { approved() }).await,
        Err(Refusal::RateLimited),
        "a call in flight longer than the window still counts, and a refusal ended nothing"
    );
    drop(release);
    assert_eq!(slow.await.unwrap(), Ok(approved()));
    assert_eq!(
        guard.call(async { approved() }).await,
        Err(Refusal::RateLimited),
        "an answered call counts for a window after its answer"
    );
    tokio::time::sleep(past_the_window).await;

    let abandoned = tokio::time::timeout(
        window / 10,
        guard.call(std::future::pending::<GatewayAnswer>()),
    )
    .await;
    assert!(abandoned.is_err(), "the caller gave up on the call");
    assert_eq!(
        guard.call(async { approved() }).await,
        Err(Refusal::RateLimited),
        "an abandoned call may have reached the PG"
    );
    tokio::time::sleep(past_the_window).await;
    assert_eq!(guard.call(async { approved() }).await, Ok(approved()));
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_refuses_before_the_bulkhead_or_limiter_are_asked() {
    let (guard, _) = guard(GuardConfig {
        bulkhead: 1,
        breaker: Some(small_breaker()),
        limiter: LimiterConfig::SlidingWindow(Rate {
            limit: 2,
            window_ms: 60_000,
        }),
        ..GuardConfig::default()
    });
    for _ in 0..2 {
        guard.call(async { GatewayAnswer::NotSent }).await.unwrap();
    }
    assert_eq!(
        guard.call(async { approved() }).await,
        Err(Refusal::CircuitOpen)
    );
    assert_eq!(guard.view().bulkhead.available, 1);
}

#[tokio::test(start_paused = true)]
async fn everything_off_lets_every_call_through() {
    let (guard, _) = guard(GuardConfig {
        bulkhead: 0,
        breaker: None,
        ..GuardConfig::default()
    });
    for _ in 0..30 {
        guard.call(async { GatewayAnswer::NotSent }).await.unwrap();
    }
    let view = guard.view();
    assert!(!view.bulkhead.enabled && !view.breaker.enabled);
}

/// Calls still out at the slow-call threshold open the breaker then — a threshold after
/// the stall began, with no call having come back — not when they time out.
#[tokio::test(start_paused = true)]
async fn calls_out_past_the_slow_threshold_open_the_breaker_before_any_times_out() {
    let config = GuardConfig {
        timeout: Duration::from_secs(3),
        breaker: Some(BreakerConfig {
            window: 4,
            min_calls: 2,
            slow_call_ms: 1_000,
            slow_call_rate: 50,
            ..BreakerConfig::default()
        }),
        ..GuardConfig::default()
    };
    let guard = Arc::new(guard(config).0);
    let stalled: Vec<_> = (0..2)
        .map(|_| {
            let guard = guard.clone();
            tokio::spawn(async move { guard.call(std::future::pending::<GatewayAnswer>()).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(999)).await;
    assert_eq!(
        guard.view().breaker.state.unwrap().state,
        breaker::BreakerState::Closed
    );
    tokio::time::sleep(Duration::from_millis(2)).await;
    assert_eq!(
        guard.view().breaker.state.unwrap().state,
        breaker::BreakerState::Open,
        "open a threshold in, while both calls are still out"
    );
    let refused = guard.call(async { approved() }).await;
    assert_eq!(refused, Err(Refusal::CircuitOpen));
    for call in stalled {
        let answer = call.await.unwrap().unwrap();
        assert!(
            matches!(answer, GatewayAnswer::Unknown { .. }),
            "{answer:?}"
        );
    }
}
