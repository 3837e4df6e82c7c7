//! The snapshots a data centre's isolates share through the Cache API (`caches.default`):
//! the isolate that fetched a room's snapshot puts it there for a second, so one fetch
//! serves every isolate of the data centre, not one per isolate. Each copy is judged by
//! its own `asOf`, whoever stored it. Where the runtime has no cache (a bare workerd),
//! the first failure says so once and the isolate goes on without it.

use std::cell::Cell;

use rules::queue::snapshot::Snapshot;
use worker::{Cache, Headers, Response};

thread_local! {
    /// Set once the runtime has refused a cache call: this isolate asks no more.
    static ABSENT: Cell<bool> = const { Cell::new(false) };
}

/// A copy is shared for as long as it is used at all.
const CACHE_CONTROL: &str = "public, max-age=1";

/// The cache key of `event_id`'s snapshot: a URL no request reaches.
fn key(event_id: &str) -> String {
    format!("https://queue-snapshots.invalid/{event_id}")
}

/// The shared copy of `event_id`'s snapshot, if there is one exact at most `max_age_ms`
/// before `now_ms`.
pub async fn read(event_id: &str, now_ms: i64, max_age_ms: i64) -> Option<Snapshot> {
    if ABSENT.with(Cell::get) {
        return None;
    }
    let mut found = Cache::default()
        .get(key(event_id), false)
        .await
        .map_err(refused)
        .ok()??;
    let bytes = found.bytes().await.ok()?;
    Snapshot::decode(&bytes).filter(|copy| now_ms - copy.as_of < max_age_ms)
}

/// Shares `bytes`, `event_id`'s snapshot just fetched from its room.
pub async fn write(event_id: &str, bytes: &[u8]) {
    if ABSENT.with(Cell::get) {
        return;
    }
    let headers = Headers::new();
    let shared = headers
        .set("cache-control", CACHE_CONTROL)
        .and_then(|()| headers.set("content-type", "application/octet-stream"))
        .and_then(|()| Response::from_bytes(bytes.to_vec()))
        .map(|response| response.with_headers(headers));
    let stored = match shared {
        Ok(response) => Cache::default().put(key(event_id), response).await,
        Err(err) => Err(err),
    };
    if let Err(err) = stored {
        refused(err);
    }
}

fn refused(err: worker::Error) {
    ABSENT.with(|absent| absent.set(true));
    worker::console_log!("queue snapshots are not shared through the Cache API here: {err}");
}
