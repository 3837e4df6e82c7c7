//! Waiting for a condition a test cannot await directly (another process's state): one
//! helper instead of a deadline loop in every test.

use std::future::Future;
use std::time::{Duration, Instant};

/// Asks `probe` again every `every` until it answers `Ok`, and returns that; past
/// `within`, panics with `what` and the last `Err` it answered (what it saw instead).
pub async fn eventually<T, F, Fut>(what: &str, within: Duration, every: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = Instant::now() + within;
    loop {
        match probe().await {
            Ok(value) => return value,
            Err(seen) => assert!(
                Instant::now() < deadline,
                "{what}: not so after {within:?}; last seen: {seen}"
            ),
        }
        tokio::time::sleep(every).await;
    }
}
