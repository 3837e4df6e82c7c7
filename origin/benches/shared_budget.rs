//! What the PG's shared budget costs a call on PostgreSQL (`docs/design/guard.md`): the
//! sliding window's take and finish, and the bucket's take, each a statement on a
//! throwaway server over loopback — against the round trip of `SELECT 1` beside them.
//!
//! `cargo bench -p origin --bench shared_budget`

#[path = "../tests/support/keys.rs"]
mod keys;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use harness::postgres::TestPostgres;
use origin::store;
use rules::sliding_window::Rate;

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let server = TestPostgres::start();
    let store = runtime
        .block_on(store::open(
            server.url(),
            Duration::from_secs(3),
            keys::cipher("v1"),
        ))
        .expect("the store opens");
    let budget = store.shared_budget().expect("PostgreSQL shares the budget");
    // Never full at this loop's pace: a finished slot is free a millisecond later.
    let window = Rate {
        limit: 1_000,
        window_ms: 1,
    };
    let bucket = Rate {
        limit: 1_000_000,
        window_ms: 1,
    };
    runtime.block_on(async {
        budget.prepare_slots("bench", window).await.expect("slots");
        budget
            .prepare_bucket("bench", bucket)
            .await
            .expect("bucket");
    });
    let pool = runtime
        .block_on(sqlx::PgPool::connect(server.url()))
        .expect("a pool");

    let mut group = c.benchmark_group("shared budget per call");
    group.bench_function("SELECT 1 (the round trip)", |b| {
        b.to_async(&runtime).iter(|| async {
            let one: i32 = sqlx::query_scalar("SELECT 1")
                .fetch_one(&pool)
                .await
                .expect("one");
            one
        });
    });
    group.bench_function("sliding window: take and finish", |b| {
        b.to_async(&runtime).iter(|| async {
            let slot = budget.take_slot("bench", window, 10_000, 1).await;
            let slot = slot.expect("answered").expect("a free slot");
            budget
                .finish_slot("bench", slot, 1)
                .await
                .expect("finished");
        });
    });
    group.bench_function("token bucket: take", |b| {
        b.to_async(&runtime).iter(|| async {
            assert!(budget.take_token("bench").await.expect("answered"));
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
