//! The PG guard's own cost per call — permit, timeout, record — with the PG call
//! mocked by a future that is ready at once. Beside a network call (milliseconds) it
//! should not register: single-digit microseconds at most. The concurrency limit's own
//! share is the difference between "defaults" and "defaults, limit off" (issue 36: at
//! most 1 µs).
//!
//! `cargo bench -p origin --bench guard`

use std::hint::black_box;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use criterion::{criterion_group, criterion_main, Criterion};
use origin::gateway::{Approval, GatewayAnswer};
use origin::guard::{GatewayGuard, GuardConfig};
use origin::metrics::Metrics;
use origin::policy::breaker::BreakerConfig;
use origin::policy::concurrency::LimitMode;
use origin::policy::limiter::LimiterConfig;
use rules::sliding_window::Rate;

/// Runs `future`, which never waits, to its end with one poll.
fn run_ready<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the mocked call never waits"),
    }
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let _context = runtime.enter();
    let approved = || async {
        GatewayAnswer::Approved(Approval {
            order_id: "order-1".into(),
            amount: 1,
            currency: "KRW".into(),
            approved_at: Some(1),
            reference: None,
        })
    };
    let unlimited = Rate {
        limit: u32::MAX,
        window_ms: 1,
    };
    let configs = [
        (
            "timeout only",
            GuardConfig {
                bulkhead: 0,
                breaker: None,
                ..GuardConfig::default()
            },
        ),
        (
            "defaults, limit off (timeout, bulkhead, breaker)",
            GuardConfig {
                concurrency: LimitMode::Off,
                ..GuardConfig::default()
            },
        ),
        (
            "defaults (timeout, breaker, adaptive limit, bulkhead)",
            GuardConfig::default(),
        ),
        (
            "defaults, fixed limit",
            GuardConfig {
                concurrency: LimitMode::Fixed(50),
                ..GuardConfig::default()
            },
        ),
        (
            "everything, token bucket",
            GuardConfig {
                limiter: LimiterConfig::TokenBucket(unlimited),
                ..GuardConfig::default()
            },
        ),
        (
            "everything, sliding window",
            GuardConfig {
                // Never refuses at this loop's pace; keeps the last millisecond's calls.
                limiter: LimiterConfig::SlidingWindow(Rate {
                    limit: 1_000_000,
                    window_ms: 1,
                }),
                ..GuardConfig::default()
            },
        ),
    ];
    let mut group = c.benchmark_group("guard call");
    for (name, config) in configs {
        let guard = GatewayGuard::new("bench", config, Arc::new(Metrics::default()));
        for _ in 0..100_000 {
            let answer = run_ready(guard.call(approved()));
            assert!(
                answer.is_ok(),
                "{name}: the mocked call was refused: {answer:?}"
            );
        }
        group.bench_function(name, |b| {
            b.iter(|| black_box(run_ready(guard.call(approved()))))
        });
    }
    let open = GatewayGuard::new(
        "bench",
        GuardConfig {
            breaker: Some(BreakerConfig {
                window: 1,
                min_calls: 1,
                open_ms: u64::MAX / 2,
                ..BreakerConfig::default()
            }),
            ..GuardConfig::default()
        },
        Arc::new(Metrics::default()),
    );
    let _ = run_ready(open.call(async { GatewayAnswer::NotSent }));
    group.bench_function("refused (breaker open)", |b| {
        b.iter(|| black_box(run_ready(open.call(approved()))))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
