//! Work on the money path that must not die silently: the recovery loop runs each cycle
//! in a task of its own, so a cycle that panics is caught, logged where logging still
//! works, counted (`origin_task_panics_total{task}`), and the next cycle runs on time —
//! whatever that cycle was working on is left as it stands, for the next one to claim
//! (its lease expires). Each completed cycle stamps a [`Heartbeat`], which `/readyz`
//! reads: a loop that has stopped completing cycles makes the process not ready, so an
//! orchestrator can restart it.

use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::clock::now_ms;
use crate::metrics::Metrics;

/// When a loop last completed a cycle.
#[derive(Debug)]
pub struct Heartbeat(AtomicI64);

impl Heartbeat {
    /// A heartbeat as of `at_ms` (a loop that has not run yet is given until its first
    /// cycles are due).
    pub fn new(at_ms: i64) -> Self {
        Self(AtomicI64::new(at_ms))
    }

    pub fn beat(&self, at_ms: i64) {
        self.0.fetch_max(at_ms, Ordering::Relaxed);
    }

    /// Whether the last cycle completed no longer than `max_age_ms` before `now_ms`.
    pub fn fresh(&self, now_ms: i64, max_age_ms: i64) -> bool {
        now_ms - self.0.load(Ordering::Relaxed) <= max_age_ms
    }
}

/// Runs `cycle()` every `interval`, each in a task of its own, for as long as it is
/// polled: a panic is counted as `task` and the loop goes on; each cycle that completes
/// beats `heartbeat`.
pub async fn every<F, Fut>(
    task: &'static str,
    interval: Duration,
    metrics: Arc<Metrics>,
    heartbeat: Arc<Heartbeat>,
    mut cycle: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match tokio::spawn(cycle()).await {
            Ok(()) => heartbeat.beat(now_ms()),
            Err(err) if err.is_panic() => {
                metrics.task_panicked(task);
                tracing::error!(task, "a cycle panicked; the next one runs on time");
            }
            // Cancelled: the runtime is shutting down.
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU32;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_cycle_that_panics_is_counted_and_the_next_runs_on_time() {
        let metrics = Arc::new(Metrics::default());
        let heartbeat = Arc::new(Heartbeat::new(0));
        let runs = Arc::new(AtomicU32::new(0));
        let looping = {
            let (metrics, heartbeat, runs) = (metrics.clone(), heartbeat.clone(), runs.clone());
            tokio::spawn(every(
                "recovery",
                Duration::from_secs(1),
                metrics,
                heartbeat,
                move || {
                    let run = runs.fetch_add(1, Ordering::Relaxed);
                    async move {
                        assert!(run != 1, "the second cycle fails");
                    }
                },
            ))
        };
        tokio::time::sleep(Duration::from_millis(3_500)).await;
        assert_eq!(runs.load(Ordering::Relaxed), 4, "cycles at 0, 1, 2 and 3 s");
        assert_eq!(metrics.task_panics("recovery"), 1);
        assert!(heartbeat.fresh(now_ms(), 1_000), "later cycles completed");
        assert!(!looping.is_finished());
        looping.abort();
    }

    #[test]
    fn a_heartbeat_older_than_its_bound_is_stale() {
        let heartbeat = Heartbeat::new(1_000);
        assert!(heartbeat.fresh(4_000, 3_000));
        assert!(!heartbeat.fresh(4_001, 3_000));
        heartbeat.beat(4_000);
        heartbeat.beat(2_000);
        assert!(heartbeat.fresh(7_000, 3_000), "a beat never moves it back");
    }
}
