//! The concurrency limit's window: calls offered and healthy latencies over the last
//! [`WINDOW_MS`], in ten buckets, and the latest mean kept for when it is empty; and the
//! most calls offered over one window, for each of the last [`PEAK_WINDOWS`].

use super::{PEAK_WINDOWS, WINDOW_MS};

const BUCKETS: usize = 10;
const BUCKET_MS: u64 = WINDOW_MS / BUCKETS as u64;
const PEAKS: usize = PEAK_WINDOWS as usize;

#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    /// The bucket's number since the clock's origin: which 100 ms it counts.
    index: u64,
    offered: u64,
    healthy: u64,
    latency_sum_ms: u64,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Window {
    buckets: [Bucket; BUCKETS],
    /// The mean healthy latency when last measured, for a window without any.
    latest_latency_ms: Option<u64>,
    /// The most calls offered over one window, with the window's number (`now / WINDOW_MS`)
    /// it was counted in: one entry for each of the last [`PEAKS`].
    peaks: [(u64, u64); PEAKS],
}

impl Window {
    pub(super) fn arrived(&mut self, now_ms: u64) {
        self.bucket(now_ms).offered += 1;
        let offered = self.offered(now_ms);
        let second = now_ms / WINDOW_MS;
        let peak = &mut self.peaks[(second % PEAKS as u64) as usize];
        if peak.0 != second {
            *peak = (second, 0);
        }
        peak.1 = peak.1.max(offered);
    }

    /// The most calls offered over one window, of those counted in this window's second
    /// or the [`PEAKS`] − 1 before it: a peak is remembered 4–5 s.
    pub(super) fn peak_offered(&self, now_ms: u64) -> u64 {
        let second = now_ms / WINDOW_MS;
        self.peaks
            .iter()
            .filter(|(at, _)| *at <= second && second - at < PEAKS as u64)
            .map(|(_, offered)| *offered)
            .max()
            .unwrap_or(0)
    }

    pub(super) fn healthy(&mut self, now_ms: u64, latency_ms: u64) {
        let bucket = self.bucket(now_ms);
        bucket.healthy += 1;
        bucket.latency_sum_ms = bucket.latency_sum_ms.saturating_add(latency_ms);
        self.latest_latency_ms = self.latency_ms(now_ms);
    }

    /// Calls offered over the last window (a second's worth).
    pub(super) fn offered(&self, now_ms: u64) -> u64 {
        self.live(now_ms).map(|bucket| bucket.offered).sum()
    }

    /// The mean latency of the healthy calls over the window, or the latest measured.
    pub(super) fn latency_ms(&self, now_ms: u64) -> Option<u64> {
        let (calls, sum) = self.live(now_ms).fold((0, 0u64), |(calls, sum), bucket| {
            (
                calls + bucket.healthy,
                sum.saturating_add(bucket.latency_sum_ms),
            )
        });
        match calls {
            0 => self.latest_latency_ms,
            _ => Some(sum.div_ceil(calls)),
        }
    }

    /// The buckets within the window ending at `now_ms`.
    fn live(&self, now_ms: u64) -> impl Iterator<Item = &Bucket> {
        let current = now_ms / BUCKET_MS;
        self.buckets.iter().filter(move |bucket| {
            bucket.index <= current && current - bucket.index < BUCKETS as u64
        })
    }

    /// The bucket `now_ms` falls in, emptied if it last counted an older stretch.
    fn bucket(&mut self, now_ms: u64) -> &mut Bucket {
        let index = now_ms / BUCKET_MS;
        let bucket = &mut self.buckets[(index % BUCKETS as u64) as usize];
        if bucket.index != index {
            *bucket = Bucket {
                index,
                ..Bucket::default()
            };
        }
        bucket
    }
}
