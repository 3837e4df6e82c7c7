//! Following the stored setting, on paused time: what one instance reads of what another
//! stored, and which of two settings is in force.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;

use super::*;
use crate::guard::GuardConfig;

fn setting(mode: BreakerMode, version: i64) -> BreakerControl {
    BreakerControl {
        mode,
        reason: format!("v{version}"),
        by: "127.0.0.1".to_owned(),
        at_ms: 0,
        version,
    }
}

fn guard() -> Arc<GatewayGuard> {
    Arc::new(crate::guard::tests::guard(GuardConfig::default()).0)
}

/// The database's setting as `follow` reads it: every read fails while `failing`, and
/// the next read takes `slow_next` when one is set.
#[derive(Default)]
struct Stored {
    control: Mutex<Option<BreakerControl>>,
    failing: AtomicBool,
    slow_next: Mutex<Option<Duration>>,
    reads: AtomicU32,
}

impl Stored {
    fn set(&self, mode: BreakerMode, version: i64) {
        *self.control.lock().expect("not poisoned") = Some(setting(mode, version));
    }

    fn reads(&self) -> u32 {
        self.reads.load(Ordering::SeqCst)
    }

    async fn read(&self) -> Result<Option<BreakerControl>, StoreError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        let slow = self.slow_next.lock().expect("not poisoned").take();
        if let Some(slow) = slow {
            tokio::time::sleep(slow).await;
        }
        if self.failing.load(Ordering::SeqCst) {
            return Err(StoreError::Busy);
        }
        Ok(self.control.lock().expect("not poisoned").clone())
    }
}

/// A guard following `stored` from now on.
fn following(stored: &Arc<Stored>) -> Arc<GatewayGuard> {
    let guard = guard();
    let reads = stored.clone();
    tokio::spawn(follow_reads(guard.clone(), move || {
        let stored = reads.clone();
        async move { stored.read().await }
    }));
    guard
}

#[tokio::test(start_paused = true)]
async fn a_setting_stored_by_another_instance_is_in_force_here_within_one_period() {
    // What the operators are told: in force everywhere within a second.
    assert!(FOLLOW_EVERY <= Duration::from_millis(500));
    let stored = Arc::new(Stored::default());
    let guard = following(&stored);
    tokio::time::sleep(FOLLOW_EVERY / 2).await;
    assert_eq!(guard.mode(), BreakerMode::Auto, "nothing stored yet");
    assert_eq!(stored.reads(), 1, "read once at the start");

    stored.set(BreakerMode::ForcedOpen, 1);
    tokio::time::sleep(FOLLOW_EVERY).await;
    assert_eq!(guard.mode(), BreakerMode::ForcedOpen);
    assert_eq!(stored.reads(), 2, "one read a period");
}

#[tokio::test(start_paused = true)]
async fn a_failed_read_is_tried_again_at_the_next_period() {
    let stored = Arc::new(Stored::default());
    stored.failing.store(true, Ordering::SeqCst);
    stored.set(BreakerMode::Disabled, 1);
    let guard = following(&stored);
    tokio::time::sleep(FOLLOW_EVERY * 2 + FOLLOW_EVERY / 2).await;
    assert_eq!(guard.mode(), BreakerMode::Auto, "every read failed");
    assert_eq!(stored.reads(), 3);

    stored.failing.store(false, Ordering::SeqCst);
    tokio::time::sleep(FOLLOW_EVERY).await;
    assert_eq!(guard.mode(), BreakerMode::Disabled);
}

#[tokio::test(start_paused = true)]
async fn a_slow_read_is_not_made_up_for_with_a_burst_of_reads() {
    let stored = Arc::new(Stored::default());
    *stored.slow_next.lock().expect("not poisoned") = Some(FOLLOW_EVERY * 5 / 2);
    let _guard = following(&stored);
    // The first read ends two and a half periods in; the next follows it at once, and
    // the one after a whole period later, not the two missed ones back to back.
    tokio::time::sleep(FOLLOW_EVERY * 3).await;
    assert_eq!(stored.reads(), 2);
    tokio::time::sleep(FOLLOW_EVERY).await;
    assert_eq!(stored.reads(), 3);
}

/// A setting read before a newer one was made arrives late: the newer stays in force.
#[test]
fn an_older_operator_setting_never_replaces_a_newer_one() {
    let guard = guard();
    guard.apply_control(setting(BreakerMode::ForcedOpen, 2));
    guard.apply_control(setting(BreakerMode::Auto, 1));
    assert_eq!(guard.mode(), BreakerMode::ForcedOpen);
    guard.apply_control(setting(BreakerMode::Auto, 3));
    assert_eq!(guard.mode(), BreakerMode::Auto);
}
