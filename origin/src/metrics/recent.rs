//! The PG calls' durations since the console's sampler last took them, per guard: what
//! a histogram's buckets cannot give back (`crate::history` draws p50 and p95 from it).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::policy::history::Latencies;

#[derive(Default)]
pub(super) struct RecentCalls(Mutex<HashMap<&'static str, Latencies>>);

impl RecentCalls {
    pub(super) fn record(&self, guard: &'static str, took: Duration) {
        let mut calls = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        calls
            .entry(guard)
            .or_default()
            .record(took.as_secs_f64() * 1_000.0);
    }

    pub(super) fn take(&self, guard: &'static str) -> Latencies {
        let mut calls = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        calls.remove(guard).unwrap_or_default()
    }
}

impl super::Metrics {
    /// `guard`'s call durations since the last time they were taken.
    pub fn take_recent_calls(&self, guard: &'static str) -> crate::policy::history::Latencies {
        self.recent_calls.take(guard)
    }
}
