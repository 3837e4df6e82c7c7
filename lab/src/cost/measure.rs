//! One row of the cost table: a closed loop of requests against one workerd process at a
//! fixed concurrency, and what it cost that process.
//!
//! The figure that survives this shared, noisy machine is workerd's own CPU time per
//! answered request (from `/proc`, all its threads): a busy neighbour makes requests
//! wait, not cost more. Requests/s and latencies are given beside it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Requests in flight at once, in every row.
pub const CONCURRENCY: usize = 16;

/// What one route cost.
pub struct Measured {
    /// How many of each status came back.
    pub statuses: BTreeMap<u16, u64>,
    /// How many the edge refused from its isolate's memory, where it says.
    pub from_memory: Option<u64>,
    /// Each answer's latency, sorted.
    latencies: Vec<Duration>,
    elapsed: Duration,
    /// workerd's CPU time over the row.
    cpu: Duration,
}

impl Measured {
    /// The row `seen` (each answer's status, 0 for none, and latency) makes, sent over
    /// `elapsed` at a cost of `cpu` to workerd.
    fn new(seen: &[(u16, Duration)], elapsed: Duration, cpu: Duration) -> anyhow::Result<Self> {
        let mut statuses = BTreeMap::new();
        for (status, _) in seen {
            *statuses.entry(*status).or_insert(0) += 1;
        }
        let latencies = seen.iter().map(|(_, latency)| *latency).collect();
        Self::summed(statuses, latencies, elapsed, cpu)
    }

    /// `rows` as one: their requests, time and CPU summed, their latencies pooled.
    pub fn merged(rows: Vec<Measured>) -> anyhow::Result<Self> {
        let (mut statuses, mut latencies) = (BTreeMap::new(), Vec::new());
        let (mut elapsed, mut cpu) = (Duration::ZERO, Duration::ZERO);
        for row in rows {
            for (status, count) in row.statuses {
                *statuses.entry(status).or_insert(0) += count;
            }
            latencies.extend(row.latencies);
            elapsed += row.elapsed;
            cpu += row.cpu;
        }
        Self::summed(statuses, latencies, elapsed, cpu)
    }

    fn summed(
        statuses: BTreeMap<u16, u64>,
        mut latencies: Vec<Duration>,
        elapsed: Duration,
        cpu: Duration,
    ) -> anyhow::Result<Self> {
        if latencies.is_empty() {
            anyhow::bail!("no request was sent");
        }
        latencies.sort();
        Ok(Measured {
            statuses,
            from_memory: None,
            latencies,
            elapsed,
            cpu,
        })
    }

    /// How many requests were answered (or failed).
    pub fn requests(&self) -> u64 {
        self.latencies.len() as u64
    }

    pub fn per_second(&self) -> f64 {
        self.requests() as f64 / self.elapsed.as_secs_f64()
    }

    pub fn p50_ms(&self) -> f64 {
        self.quantile_ms(0.50)
    }

    pub fn p99_ms(&self) -> f64 {
        self.quantile_ms(0.99)
    }

    fn quantile_ms(&self, q: f64) -> f64 {
        let rank =
            ((q * self.latencies.len() as f64).ceil() as usize).clamp(1, self.latencies.len());
        self.latencies[rank - 1].as_secs_f64() * 1e3
    }

    /// workerd's CPU time over the requests, per request, in µs.
    pub fn cpu_us(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.requests() as f64
    }

    /// How long the row took.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// `201 ×2000`, `429 ×1990 · 201 ×10`: what the route answered (0: no answer).
    pub fn answers(&self) -> String {
        let mut statuses: Vec<(&u16, &u64)> = self.statuses.iter().collect();
        statuses.sort_by(|a, b| b.1.cmp(a.1));
        statuses
            .iter()
            .map(|(status, count)| format!("{status} ×{count}"))
            .collect::<Vec<_>>()
            .join(" · ")
    }
}

/// Sends `total` requests, `request(i)` for i in `first..first + total`, [`CONCURRENCY`]
/// at a time, each as soon as the one before it on its connection was answered; `cpu`
/// reads the process's CPU time before and after.
pub async fn closed_loop<F>(
    cpu: impl Fn() -> Option<Duration>,
    first: u64,
    total: u64,
    request: F,
) -> anyhow::Result<Measured>
where
    F: Fn(u64) -> reqwest::RequestBuilder + Send + Sync + 'static,
{
    let request = Arc::new(request);
    let next = Arc::new(AtomicU64::new(first));
    let end = first + total;
    let cpu_before = cpu().ok_or_else(|| anyhow::anyhow!("workerd's CPU time is unreadable"))?;
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..CONCURRENCY {
        let (request, next) = (request.clone(), next.clone());
        workers.spawn(async move {
            let mut seen = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= end {
                    return seen;
                }
                let sent = Instant::now();
                let status = match request(i).send().await {
                    Ok(answer) => {
                        let status = answer.status().as_u16();
                        // The body is read, so the connection goes back to the pool.
                        if answer.bytes().await.is_ok() {
                            status
                        } else {
                            0
                        }
                    }
                    Err(_) => 0,
                };
                seen.push((status, sent.elapsed()));
            }
        });
    }
    let mut seen = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    while let Some(worker) = workers.join_next().await {
        seen.extend(worker?);
    }
    let elapsed = started.elapsed();
    let cpu_after = cpu().ok_or_else(|| anyhow::anyhow!("workerd's CPU time is unreadable"))?;
    Measured::new(&seen, elapsed, cpu_after.saturating_sub(cpu_before))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_rows_sum_their_requests_time_and_cpu_and_pool_their_latencies() {
        let ms = Duration::from_millis;
        let row = |seen: &[(u16, Duration)], elapsed, cpu| {
            Measured::new(seen, elapsed, cpu).expect("a row of answers")
        };
        let fast = row(&[(200, ms(1)), (200, ms(2))], ms(100), ms(4));
        let slow = row(&[(200, ms(9)), (429, ms(7))], ms(300), ms(12));
        let both = Measured::merged(vec![fast, slow]).expect("two rows");
        assert_eq!(both.requests(), 4);
        assert_eq!(both.statuses, BTreeMap::from([(200, 3), (429, 1)]));
        assert!(
            (both.per_second() - 10.0).abs() < 1e-9,
            "{}",
            both.per_second()
        );
        assert!((both.cpu_us() - 4_000.0).abs() < 1e-6, "{}", both.cpu_us());
        assert!((both.p50_ms() - 2.0).abs() < 1e-9, "{}", both.p50_ms());
        assert!((both.p99_ms() - 9.0).abs() < 1e-9, "{}", both.p99_ms());
        assert_eq!(both.elapsed(), ms(400));
    }

    #[test]
    fn a_row_without_answers_is_an_error() {
        assert!(Measured::new(&[], Duration::from_secs(1), Duration::ZERO).is_err());
        assert!(Measured::merged(Vec::new()).is_err());
    }
}
