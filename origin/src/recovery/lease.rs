//! A recovery lease that follows the work: short (a few PG timeouts), renewed while its
//! holder still works on the page, and given up payment by payment as each is recorded.
//! A crash therefore keeps a payment out of everyone's reach for at most one short
//! lease, never the whole page's worth of PG questions.
//!
//! The holder is a random token of one [`Recovery`](super::Recovery)'s life: a lease is
//! renewed only by the recovery that took it, so one that ran out and was claimed by
//! another instance is never taken back. A payment whose lease was lost (a renewal
//! that failed, or ran out before it was made) is not asked about: another recovery may
//! be asking. What stays open: a question already in flight when its lease is lost —
//! the holder stalled for two thirds of a lease — may overlap another instance's.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use crate::clock::now_ms;
use crate::metrics::Metrics;
use crate::store::transient::retry_transient;
use crate::store::{Lease, Store};

/// A lease is this many PG timeouts long.
const TIMEOUTS_PER_LEASE: u32 = 3;

/// The shortest lease, however fast the PG is said to time out.
const SHORTEST: Duration = Duration::from_secs(1);

/// How long a lease lasts for a PG whose calls time out after `gateway_timeout`.
pub fn length(gateway_timeout: Duration) -> Duration {
    (gateway_timeout * TIMEOUTS_PER_LEASE).max(SHORTEST)
}

/// A random token naming one recovery's life.
pub fn new_holder() -> String {
    let mut bytes = [0u8; 16];
    match getrandom::fill(&mut bytes) {
        Ok(()) => hex::encode(bytes),
        // Still unique enough to tell this process's leases from another's.
        Err(_) => format!("{}-{}", std::process::id(), now_ms()),
    }
}

/// The payments of one page this recovery still holds, each until when (by its own
/// clock: the claim's or the last renewal's time plus a lease).
pub struct Held {
    until_ms: Mutex<BTreeMap<i64, i64>>,
}

impl Held {
    pub fn new(payment_ids: impl IntoIterator<Item = i64>, until_ms: i64) -> Self {
        Held {
            until_ms: Mutex::new(payment_ids.into_iter().map(|id| (id, until_ms)).collect()),
        }
    }

    /// Whether `payment_id`'s lease is still this recovery's at `now_ms`.
    pub fn holds(&self, payment_id: i64, now_ms: i64) -> bool {
        self.map(|held| held.get(&payment_id).is_some_and(|until| *until > now_ms))
    }

    /// `payment_id` is recorded: its lease ended with the record.
    pub fn release(&self, payment_id: i64) {
        self.map(|held| held.remove(&payment_id));
    }

    fn ids(&self) -> Vec<i64> {
        self.map(|held| held.keys().copied().collect())
    }

    /// After a renewal: the ids renewed hold until `until_ms`, the others are lost.
    fn renewed(&self, renewed: &[i64], until_ms: i64) -> usize {
        self.map(|held| {
            let before = held.len();
            held.retain(|id, _| renewed.contains(id));
            for until in held.values_mut() {
                *until = until_ms;
            }
            before - held.len()
        })
    }

    fn map<T>(&self, f: impl FnOnce(&mut BTreeMap<i64, i64>) -> T) -> T {
        let mut held = self
            .until_ms
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut held)
    }
}

/// Who renews: the store, the holder's token, and how long a lease is.
pub struct Renewer<'a> {
    pub store: &'a dyn Store,
    pub metrics: &'a Metrics,
    pub holder: &'a str,
    pub length: Duration,
}

impl Renewer<'_> {
    /// Runs `work`, renewing the leases `held` still has every third of a lease (from
    /// `claimed`, when the claim was asked for) until it is done.
    pub async fn renewing<T>(
        &self,
        held: &Held,
        claimed: tokio::time::Instant,
        work: impl Future<Output = T>,
    ) -> T {
        let every = self.length / 3;
        let mut ticks = tokio::time::interval_at(claimed + every, every);
        tokio::pin!(work);
        loop {
            // The work goes on while a renewal waits for the store.
            let renewal = async {
                ticks.tick().await;
                self.renew(held).await;
            };
            tokio::select! {
                done = &mut work => return done,
                () = renewal => {}
            }
        }
    }

    async fn renew(&self, held: &Held) {
        let ids = held.ids();
        if ids.is_empty() {
            return;
        }
        let now = now_ms();
        let lease = Lease {
            holder: self.holder,
            until_ms: now + self.length.as_millis() as i64,
        };
        let renewed = retry_transient(self.metrics, "renew_recovery_leases", || {
            self.store.renew_recovery_leases(&ids, lease, now)
        })
        .await;
        match renewed {
            Ok(renewed) => {
                let lost = held.renewed(&renewed, lease.until_ms);
                if lost > 0 {
                    tracing::warn!(lost, "recovery leases not renewed (run out, or recorded a moment before): those payments are not asked about by this recovery");
                }
            }
            Err(err) => {
                tracing::warn!(error = %err, "recovery could not renew its leases; they run out at their time");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_is_a_few_pg_timeouts_and_never_shorter_than_a_second() {
        assert_eq!(length(Duration::from_secs(3)), Duration::from_secs(9));
        assert_eq!(length(Duration::from_millis(100)), SHORTEST);
    }

    #[test]
    fn held_until_its_time_released_when_recorded_lost_when_not_renewed() {
        let held = Held::new([1, 2, 3], 1_000);
        assert!(held.holds(1, 999));
        assert!(!held.holds(1, 1_000), "ran out");
        held.release(2);
        assert!(!held.holds(2, 0));
        assert_eq!(held.renewed(&[1], 5_000), 1, "3 was lost");
        assert!(held.holds(1, 4_999));
        assert!(!held.holds(3, 0));
        assert_eq!(held.ids(), [1]);
    }

    #[test]
    fn holders_are_distinct() {
        assert_ne!(new_holder(), new_holder());
    }
}
