//! The breaker's settings and their defaults.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerConfig {
    /// How many of the latest outcomes the closed state judges by.
    pub window: u32,
    /// Fewer calls than this in the window, counting those still out, never open the
    /// breaker.
    pub min_calls: u32,
    /// Percent of failed calls that opens it (1–100).
    pub failure_rate: u8,
    /// A call that takes this long or longer is slow, whatever its outcome.
    pub slow_call_ms: u64,
    /// Percent of slow calls that opens it (1–100).
    pub slow_call_rate: u8,
    /// How long it stays open before letting probes through.
    pub open_ms: u64,
    /// Probes, one after another, that must come back well before it closes.
    pub half_open_calls: u32,
}

impl Default for BreakerConfig {
    /// The defaults (`docs/design/guard.md`). The seed's were a 2 s threshold at a 100 %
    /// slow-call rate: 20 slow calls in a row before it opens, which a stalled gateway at
    /// 10 calls a second takes 4 s to supply, every one of them UNKNOWN. Counted in flight,
    /// a call is slow a threshold after it left; at 1 s and 10 % (2 of the last 20) a stall
    /// opens it 1.1 s in at that load. A healthy gateway's latency (the simulator's, 0–300
    /// ms) never comes near 1 s, so jitter never opens it.
    fn default() -> Self {
        Self {
            window: 20,
            min_calls: 10,
            failure_rate: 50,
            slow_call_ms: 1_000,
            slow_call_rate: 10,
            open_ms: 10_000,
            half_open_calls: 3,
        }
    }
}
