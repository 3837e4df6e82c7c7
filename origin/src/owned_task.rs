//! A spawned task that lives no longer than what owns it: the store's checkpoints and
//! its writer's committer, a request on the merchant's thread.

use std::future::Future;

use tokio::task::{AbortHandle, JoinHandle};

/// Aborts its task when dropped (nothing, once the task is done).
#[derive(Debug)]
pub struct OwnedTask(AbortHandle);

impl OwnedTask {
    /// Spawns `task` on the current runtime, owned by what holds this.
    pub fn spawn<T: Send + 'static>(task: impl Future<Output = T> + Send + 'static) -> Self {
        Self::of(&tokio::spawn(task))
    }

    /// Owns the task `handle` joins; the handle may still be awaited.
    pub fn of<T>(handle: &JoinHandle<T>) -> Self {
        Self(handle.abort_handle())
    }
}

impl Drop for OwnedTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_task_ends_with_its_owner() {
        let forever = tokio::spawn(std::future::pending::<()>());
        let owner = OwnedTask::of(&forever);
        drop(owner);
        assert!(forever.await.unwrap_err().is_cancelled());

        let (held, dropped) = tokio::sync::oneshot::channel::<()>();
        let owner = OwnedTask::spawn(async move {
            let _held = held;
            std::future::pending::<()>().await;
        });
        drop(owner);
        assert!(dropped.await.is_err(), "the spawned task was dropped");

        let done = tokio::spawn(async { 7 });
        let owner = OwnedTask::of(&done);
        assert_eq!(done.await.unwrap(), 7);
        drop(owner);
    }
}
