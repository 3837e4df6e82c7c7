//! The one place the edge reads the runtime's clock: epoch milliseconds, as the Worker
//! and every object see them. `Date.now()` directly, with no `Date` object made for it.

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    // An f64 of milliseconds holds every date to come exactly; `as` saturates.
    worker::js_sys::Date::now() as i64
}
