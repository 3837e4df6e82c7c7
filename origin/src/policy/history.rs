//! The last minutes, for the operator console's charts: samples kept in a bounded ring,
//! the PG calls' latencies of one interval in a log-bucketed histogram, and counters
//! turned into what happened since the last sample. No clock and no I/O: the sampler
//! (`crate::history`) hands in the facts and the time.

use std::collections::{BTreeMap, VecDeque};

use serde::Serialize;

use super::breaker::BreakerState;

/// How often the sampler takes a sample.
pub const INTERVAL_MS: i64 = 5_000;
/// How far back the charts go.
pub const WINDOW_MS: i64 = 15 * 60_000;
/// The samples one series keeps: the window's, and one more for its left edge.
pub const SAMPLES: usize = (WINDOW_MS / INTERVAL_MS) as usize + 1;

/// The last `capacity` items pushed, oldest first.
#[derive(Debug, Clone)]
pub struct Ring<T> {
    items: VecDeque<T>,
    capacity: usize,
}

impl<T> Ring<T> {
    pub fn new(capacity: usize) -> Self {
        Self {
            items: VecDeque::with_capacity(capacity),
            capacity,
        }
    }

    /// Keeps `item`, forgetting the oldest when full.
    pub fn push(&mut self, item: T) {
        if self.items.len() == self.capacity {
            self.items.pop_front();
        }
        self.items.push_back(item);
    }

    /// Forgets the oldest items while `old` says so.
    pub fn forget_while(&mut self, old: impl Fn(&T) -> bool) {
        while self.items.front().is_some_and(&old) {
            self.items.pop_front();
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// Buckets per doubling: a quantile is within 2^(1/32) − 1 ≈ 2.2 % of the truth.
const PER_DOUBLING: f64 = 16.0;
/// From under 1 ms to 2^20 ms (17 minutes): longer calls are counted in the last.
const BUCKETS: usize = 20 * PER_DOUBLING as usize + 1;

/// Call durations of one interval, in buckets of equal ratio.
#[derive(Debug, Clone)]
pub struct Latencies {
    counts: Vec<u32>,
    total: u64,
}

impl Default for Latencies {
    fn default() -> Self {
        Self {
            counts: vec![0; BUCKETS],
            total: 0,
        }
    }
}

impl Latencies {
    pub fn record(&mut self, ms: f64) {
        let bucket = if ms < 1.0 {
            0
        } else {
            ((ms.log2() * PER_DOUBLING) as usize + 1).min(BUCKETS - 1)
        };
        self.counts[bucket] = self.counts[bucket].saturating_add(1);
        self.total += 1;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// The `q` quantile (0 < q ≤ 1), in ms: the middle of the bucket it falls in; `None`
    /// with no call.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        let bucket = self.counts.iter().position(|&count| {
            seen += u64::from(count);
            seen >= rank
        })?;
        Some(match bucket {
            0 => 0.5,
            b => ((b as f64 - 0.5) / PER_DOUBLING).exp2(),
        })
    }
}

/// What each of `now`'s counters gained since `before`, those that gained nothing left
/// out (a counter that went down, as at a restart, counts from 0).
pub fn gained<K: Ord + Clone>(
    before: &BTreeMap<K, u64>,
    now: &BTreeMap<K, u64>,
) -> BTreeMap<K, u64> {
    now.iter()
        .filter_map(|(key, &count)| {
            let was = before.get(key).copied().unwrap_or(0);
            let gain = if count >= was { count - was } else { count };
            (gain > 0).then(|| (key.clone(), gain))
        })
        .collect()
}

/// The PG guard at one sample: the interval's calls and their latency, what waits on
/// the PG now, what the guard refused in the interval, and the breaker's state.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardSample {
    pub at_ms: i64,
    /// Calls answered (or timed out) in the interval.
    pub calls: u64,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub in_flight: i64,
    /// Calls refused in the interval, by reason; reasons with none left out.
    pub refusals: BTreeMap<&'static str, u64>,
    /// Absent when the breaker is off.
    pub breaker: Option<BreakerState>,
}

/// A drop at one sample: its room as the edge reported it (absent when the edge could
/// not be read), and the confirms answered in the interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DropSample {
    pub at_ms: i64,
    pub waiting: Option<u64>,
    pub prequeued: Option<u64>,
    pub passes_live: Option<u64>,
    pub issued_last_minute: Option<u64>,
    #[serde(flatten)]
    pub confirms: Confirms,
}

/// Confirms answered, by outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Confirms {
    pub approved: u64,
    pub failed: u64,
    pub unknown: u64,
}

#[cfg(test)]
mod tests;
