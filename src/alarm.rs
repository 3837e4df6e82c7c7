//! Durable Object alarms, set at a time. workers-rs reads a bare `i64` given to
//! `set_alarm` as milliseconds *from now*, so an epoch time there schedules the alarm
//! decades late and nothing it was for ever happens; every alarm here goes through
//! [`Alarm::no_later_than`], which hands the runtime a date.
//!
//! An object keeps its alarm's time in memory: it reads it from storage once, when it
//! first sets one after starting, and then knows it, since nothing but its own calls
//! sets an alarm and a fired one is spent ([`Alarm::fired`]). So a change it persists
//! asks storage nothing to keep its alarm, and sets one only when the time moves earlier.
//!
//! An alarm is never set at or before the present millisecond: when an alarm's handler
//! ends, the runtime deletes the alarm set at the very time that alarm was for (it takes
//! it for the one just handled), and the clock inside a handler can read exactly that
//! time — so a handler that set the next alarm "now" would, now and then, end its chain.

use std::cell::Cell;

use worker::js_sys::{Date, Number};
use worker::{Result, ScheduledTime, Storage};

/// One object's alarm, as its instance knows it.
#[derive(Default)]
pub struct Alarm {
    /// `None`: not read since the object started; `Some(None)`: no alarm set.
    known: Cell<Option<Option<i64>>>,
}

impl Alarm {
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes sure the object's alarm fires no later than `at_ms` (epoch ms): an alarm set
    /// at or before it is kept.
    pub async fn no_later_than(&self, storage: &Storage, at_ms: i64) -> Result<()> {
        let at_ms = at_ms.max(crate::clock::now_ms() + 1);
        let current = match self.known.get() {
            Some(known) => known,
            None => storage.get_alarm().await?,
        };
        if current.is_some_and(|current| current <= at_ms) {
            self.known.set(Some(current));
            return Ok(());
        }
        // Epoch milliseconds are exact in an f64 until the year 287,396.
        let date = Date::new(&Number::from(at_ms as f64));
        storage.set_alarm(ScheduledTime::new(date)).await?;
        self.known.set(Some(Some(at_ms)));
        Ok(())
    }

    /// The alarm fired: it is spent, so none is set until the handler sets the next.
    pub fn fired(&self) {
        self.known.set(Some(None));
    }
}
