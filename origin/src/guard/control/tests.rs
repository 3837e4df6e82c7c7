//! Following the stored setting, on paused time: what one instance reads of what another
//! stored.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;

use super::*;
use crate::guard::GuardConfig;
use crate::metrics::Metrics;

/// The database's setting as `follow` reads it; every read fails while `failing`.
#[derive(Default)]
struct Stored {
    control: Mutex<Option<BreakerControl>>,
    failing: AtomicBool,
    reads: AtomicU32,
}

impl Stored {
    fn set(&self, mode: BreakerMode, version: i64) {
        *self.control.lock().expect("not poisoned") = Some(BreakerControl {
            mode,
            reason: "PG incident".to_owned(),
            by: "127.0.0.1".to_owned(),
            at_ms: 0,
            version,
        });
    }

    fn read(&self) -> Result<Option<BreakerControl>, StoreError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        if self.failing.load(Ordering::SeqCst) {
            return Err(StoreError::Busy);
        }
        Ok(self.control.lock().expect("not poisoned").clone())
    }
}

/// A guard following `stored` from now on.
fn following(stored: &Arc<Stored>) -> Arc<GatewayGuard> {
    let metrics = Arc::new(Metrics::default());
    let guard = Arc::new(GatewayGuard::new(
        "approve",
        GuardConfig::default(),
        metrics,
    ));
    let reads = stored.clone();
    tokio::spawn(follow_reads(guard.clone(), move || {
        let stored = reads.clone();
        async move { stored.read() }
    }));
    guard
}

#[tokio::test(start_paused = true)]
async fn a_setting_stored_by_another_instance_is_in_force_here_within_one_period() {
    let stored = Arc::new(Stored::default());
    let guard = following(&stored);
    tokio::time::sleep(FOLLOW_EVERY / 2).await;
    assert_eq!(guard.mode(), BreakerMode::Auto, "nothing stored yet");
    assert_eq!(
        stored.reads.load(Ordering::SeqCst),
        1,
        "read once at the start"
    );

    stored.set(BreakerMode::ForcedOpen, 1);
    tokio::time::sleep(FOLLOW_EVERY).await;
    assert_eq!(guard.mode(), BreakerMode::ForcedOpen);
    assert_eq!(stored.reads.load(Ordering::SeqCst), 2, "one read a period");
}

#[tokio::test(start_paused = true)]
async fn a_failed_read_is_tried_again_at_the_next_period() {
    let stored = Arc::new(Stored::default());
    stored.failing.store(true, Ordering::SeqCst);
    stored.set(BreakerMode::Disabled, 1);
    let guard = following(&stored);
    tokio::time::sleep(FOLLOW_EVERY * 2 + FOLLOW_EVERY / 2).await;
    assert_eq!(guard.mode(), BreakerMode::Auto, "every read failed");
    assert_eq!(stored.reads.load(Ordering::SeqCst), 3);

    stored.failing.store(false, Ordering::SeqCst);
    tokio::time::sleep(FOLLOW_EVERY).await;
    assert_eq!(guard.mode(), BreakerMode::Disabled);
}
