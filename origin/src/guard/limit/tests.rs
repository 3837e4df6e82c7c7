//! The guard on a shared budget, with the database played by a fake that can fail or be
//! slow: a budget that cannot answer refuses, a late slot is not used, and every slot used
//! is finished once its call is over, cancelled or not.

use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;
use rules::sliding_window::Rate;

use super::super::tests::{approved, held_call};
use super::super::{GatewayGuard, GuardConfig, Refusal};
use super::*;
use crate::gateway::GatewayAnswer;
use crate::metrics::Metrics;
use crate::policy::concurrency::LimitMode;

const RATE: Rate = Rate {
    limit: 2,
    window_ms: 1_000,
};

/// A budget that answers after `delay`, fails when `broken`, and counts what it was asked.
#[derive(Default)]
struct FakeBudget {
    broken: bool,
    delay: Duration,
    free: Mutex<Vec<i32>>,
    taken: AtomicU32,
    finished: Mutex<Vec<Slot>>,
}

#[async_trait]
impl SharedBudget for FakeBudget {
    async fn prepare_slots(&self, _: &str, rate: Rate) -> Result<(), StoreError> {
        *lock(&self.free) = (0..rate.limit as i32).collect();
        Ok(())
    }

    async fn take_slot(
        &self,
        _: &str,
        _: Rate,
        _: i64,
        holder: i64,
    ) -> Result<Option<Slot>, StoreError> {
        tokio::time::sleep(self.delay).await;
        if self.broken {
            return Err(StoreError::Database(sqlx::Error::PoolTimedOut));
        }
        self.taken.fetch_add(1, Ordering::SeqCst);
        Ok(lock(&self.free).pop().map(|slot| Slot { slot, holder }))
    }

    async fn finish_slot(&self, _: &str, slot: Slot, _: i64) -> Result<(), StoreError> {
        lock(&self.finished).push(slot);
        Ok(())
    }

    async fn prepare_bucket(&self, _: &str, _: Rate) -> Result<(), StoreError> {
        Ok(())
    }

    async fn take_token(&self, _: &str) -> Result<bool, StoreError> {
        Err(StoreError::Database(sqlx::Error::PoolTimedOut))
    }
}

async fn guard_on(budget: Arc<FakeBudget>, limiter: LimiterConfig) -> GatewayGuard {
    guard_with(
        budget,
        GuardConfig {
            limiter,
            breaker: None,
            ..GuardConfig::default()
        },
    )
    .await
}

async fn guard_with(budget: Arc<FakeBudget>, config: GuardConfig) -> GatewayGuard {
    let mut guard = GatewayGuard::new("approve", config, Arc::new(Metrics::default()));
    guard.share_budget(budget).await.unwrap();
    guard
}

/// Lets the spawned finishes run.
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_budget_the_database_cannot_answer_for_refuses_and_nothing_is_sent() {
    for limiter in [
        LimiterConfig::SlidingWindow(RATE),
        LimiterConfig::TokenBucket(RATE),
    ] {
        let budget = Arc::new(FakeBudget {
            broken: true,
            ..FakeBudget::default()
        });
        let guard = guard_on(budget, limiter).await;
        let sent = AtomicU32::new(0);
        let answer = guard
            .call(async {
                sent.fetch_add(1, Ordering::SeqCst);
                approved()
            })
            .await;
        assert_eq!(answer, Err(Refusal::RateLimited), "{limiter:?}");
        assert_eq!(sent.load(Ordering::SeqCst), 0);
    }
}

#[tokio::test(start_paused = true)]
async fn every_slot_used_is_finished_when_its_call_is_over_answered_or_cancelled() {
    let budget = Arc::new(FakeBudget::default());
    let guard = Arc::new(guard_on(budget.clone(), LimiterConfig::SlidingWindow(RATE)).await);
    assert_eq!(guard.call(async { approved() }).await, Ok(approved()));
    let cancelled = {
        let guard = guard.clone();
        tokio::spawn(async move { guard.call(std::future::pending::<GatewayAnswer>()).await })
    };
    settle().await;
    cancelled.abort();
    let _ = cancelled.await;
    settle().await;
    let finished = lock(&budget.finished).len();
    assert_eq!(
        finished, 2,
        "the answered call's slot and the cancelled one's"
    );
    assert!(guard.view().limiter.shared);
}

#[tokio::test(start_paused = true)]
async fn a_slot_the_database_granted_too_late_is_not_used() {
    let budget = Arc::new(FakeBudget {
        delay: TAKE_MARGIN + Duration::from_millis(1),
        ..FakeBudget::default()
    });
    let guard = guard_on(budget.clone(), LimiterConfig::SlidingWindow(RATE)).await;
    let answer = guard.call(async { approved() }).await;
    assert_eq!(answer, Err(Refusal::RateLimited));
    settle().await;
    assert_eq!(budget.taken.load(Ordering::SeqCst), 1);
    assert!(
        lock(&budget.finished).is_empty(),
        "it counts until its lease ends"
    );
}

#[tokio::test(start_paused = true)]
async fn the_budget_is_asked_only_for_calls_past_the_concurrency_limit_and_gives_their_slot_back() {
    let budget = Arc::new(FakeBudget::default());
    let config = GuardConfig {
        limiter: LimiterConfig::SlidingWindow(RATE),
        concurrency: LimitMode::Fixed(1),
        max_wait: Duration::from_secs(1),
        breaker: None,
        ..GuardConfig::default()
    };
    let guard = Arc::new(guard_with(budget.clone(), config).await);
    let (release, first) = held_call(&guard);
    while guard.view().concurrency.in_flight != 1 {
        tokio::task::yield_now().await;
    }
    // A call waiting for a slot takes no unit of the shared budget, nor does one the
    // limit refuses after its wait.
    let waited = guard.call(async { approved() }).await;
    assert_eq!(waited, Err(Refusal::ConcurrencyLimited));
    assert_eq!(
        budget.taken.load(Ordering::SeqCst),
        1,
        "the held call's only"
    );
    release.send(()).unwrap();
    assert_eq!(first.await.unwrap(), Ok(approved()));
    // The budget's last unit, then none: the call refused for the budget holds no slot.
    assert_eq!(guard.call(async { approved() }).await, Ok(approved()));
    assert_eq!(
        guard.call(async { approved() }).await,
        Err(Refusal::RateLimited)
    );
    let limit = guard.view().concurrency;
    assert_eq!((limit.in_flight, limit.waiting), (0, 0));
    assert_eq!(budget.taken.load(Ordering::SeqCst), 3);
}
