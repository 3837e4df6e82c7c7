//! Durable Object alarms, set at a time. workers-rs reads a bare `i64` given to
//! `set_alarm` as milliseconds *from now*, so an epoch time there schedules the alarm
//! decades late and nothing it was for ever happens; every alarm here goes through
//! [`no_later_than`], which hands the runtime a date.
//!
//! An alarm is never set at or before the present millisecond: when an alarm's handler
//! ends, the runtime deletes the alarm set at the very time that alarm was for (it takes
//! it for the one just handled), and the clock inside a handler can read exactly that
//! time — so a handler that set the next alarm "now" would, now and then, end its chain.

use worker::js_sys::{Date, Number};
use worker::{Result, ScheduledTime, Storage};

/// Makes sure the object's alarm fires no later than `at_ms` (epoch ms): an alarm set at
/// or before it is kept. (Inside the alarm's own handler none reads as set: a fired
/// alarm is spent, so the handler sets the next one here like any other caller.)
pub async fn no_later_than(storage: &Storage, at_ms: i64) -> Result<()> {
    let at_ms = at_ms.max(crate::clock::now_ms() + 1);
    match storage.get_alarm().await? {
        Some(current) if current <= at_ms => Ok(()),
        _ => {
            // Epoch milliseconds are exact in an f64 until the year 287,396.
            let date = Date::new(&Number::from(at_ms as f64));
            storage.set_alarm(ScheduledTime::new(date)).await
        }
    }
}
