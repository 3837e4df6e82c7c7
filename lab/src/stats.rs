//! The figures the reports are made of: percentiles, and the most events in any window
//! of a given length.

use std::time::Duration;

use crate::load::Sample;

/// The `p`-th percentile (0–100, nearest rank) of the samples' latencies, in ms; 0 for
/// no samples.
pub fn percentile_ms(samples: &[&Sample], p: f64) -> f64 {
    percentile(samples.iter().map(|s| s.latency).collect(), p)
}

/// The `p`-th percentile (0–100, nearest rank) of `latencies`, in ms; 0 for none.
pub fn percentile(mut latencies: Vec<Duration>, p: f64) -> f64 {
    latencies.sort();
    if latencies.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * latencies.len() as f64).ceil().max(1.0) as usize;
    latencies[rank.min(latencies.len()) - 1].as_secs_f64() * 1e3
}

/// The most of `times` (ms, any order) inside any window `[t, t + window_ms)`.
pub fn max_in_any_window(times: &[u64], window_ms: u64) -> usize {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    let mut most = 0;
    let mut first = 0;
    for (last, &at) in sorted.iter().enumerate() {
        while sorted[first] + window_ms <= at {
            first += 1;
        }
        most = most.max(last + 1 - first);
    }
    most
}

/// `low–high` of a figure over runs, written as the seed writes it.
pub fn range(values: &[f64], decimals: usize) -> String {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if values.is_empty() {
        return "—".into();
    }
    let (low, high) = (format!("{low:.decimals$}"), format!("{high:.decimals$}"));
    if low == high {
        low
    } else {
        format!("{low}–{high}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_in_any_window_slides_over_every_start() {
        assert_eq!(max_in_any_window(&[], 1_000), 0);
        assert_eq!(max_in_any_window(&[0, 999, 1_000, 1_999], 1_000), 2);
        // Two bursts across a fixed boundary are one window's worth.
        let times: Vec<u64> = (900..1_000).chain(1_000..1_100).collect();
        assert_eq!(max_in_any_window(&times, 1_000), 200);
        assert_eq!(max_in_any_window(&times, 100), 100);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let samples: Vec<Sample> = (1..=100)
            .map(|ms| Sample {
                seq: ms,
                sent_at: Duration::ZERO,
                latency: Duration::from_millis(ms),
                status: 200,
                outcome: "OK".into(),
            })
            .collect();
        let all: Vec<&Sample> = samples.iter().collect();
        assert_eq!(percentile_ms(&all, 95.0), 95.0);
        assert_eq!(percentile_ms(&all, 50.0), 50.0);
        assert_eq!(percentile_ms(&[], 95.0), 0.0);
    }

    #[test]
    fn ranges_read_like_the_seeds() {
        assert_eq!(range(&[9.5, 10.2, 9.8], 1), "9.5–10.2");
        assert_eq!(range(&[0.0, 0.0], 0), "0");
        assert_eq!(range(&[3_002.2, 3_001.9], 0), "3002", "equal as written");
    }
}
