//! The merchant's HTTP apart from the payments: the webhooks' requests — connecting,
//! the TLS handshake, waiting for the answer and reading it — run on one thread and
//! runtime of their own, so no poll of theirs holds up a confirm on the API's runtime.
//! A receiver that hangs, fails at once or answers 100 MB costs that thread, and the
//! machine's cores as any process would; the loop that decides what to send, and every
//! write of the store, stay where they were.
//!
//! The thread ends when its [`Apart`] is dropped, and a request when the caller waiting
//! for it is; a request abandoned so has its event delivered again once its lease runs
//! out, as after a crash.

use std::future::Future;

use tokio::runtime::{Builder, Handle};
use tokio::sync::oneshot;

use crate::owned_task::OwnedTask;

/// A thread and runtime for the merchant's HTTP, until dropped.
pub struct Apart {
    handle: Handle,
    /// Dropped with this: the thread's runtime stops, and the thread ends.
    _stop: oneshot::Sender<()>,
}

impl Apart {
    /// Starts the thread `name`.
    pub fn start(name: &str) -> std::io::Result<Self> {
        let runtime = Builder::new_current_thread().enable_all().build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    let _ = stopped.await;
                });
            })?;
        Ok(Self {
            handle,
            _stop: stop,
        })
    }

    /// Runs `work` on the thread; `None` when it was abandoned there (the thread has
    /// stopped) or panicked. Dropped before it is done, the work is abandoned there too.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl Future<Output = T> + Send + 'static,
    ) -> Option<T> {
        let running = self.handle.spawn(work);
        let _abandoned_if_dropped = OwnedTask::of(&running);
        running.await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_runs_on_the_thread_and_is_abandoned_when_it_stops() {
        let apart = Apart::start("apart-test").unwrap();
        let name = apart
            .run(async { std::thread::current().name().map(str::to_owned) })
            .await;
        assert_eq!(name, Some(Some("apart-test".to_owned())));
        assert_ne!(std::thread::current().name(), Some("apart-test"));

        let (started, waits) = oneshot::channel::<()>();
        let handle = apart.handle.clone();
        let forever = handle.spawn(async move {
            let _ = started.send(());
            std::future::pending::<()>().await;
        });
        waits.await.unwrap();
        drop(apart);
        assert!(forever.await.is_err(), "abandoned when the thread stops");
        assert!(
            handle.spawn(async {}).await.is_err(),
            "the thread has stopped"
        );
    }

    #[tokio::test]
    async fn work_is_abandoned_when_its_caller_is_dropped() {
        let apart = Apart::start("apart-test").unwrap();
        // Tells, by being dropped, that the work holding it was.
        let (held, dropped) = oneshot::channel::<()>();
        let (started, waits) = oneshot::channel::<()>();
        let mut caller = Box::pin(apart.run(async move {
            let _held = held;
            let _ = started.send(());
            std::future::pending::<()>().await;
        }));
        tokio::select! {
            _ = &mut caller => panic!("the work never ends"),
            started = waits => started.unwrap(),
        }
        drop(caller);
        assert!(dropped.await.is_err(), "the work was dropped on the thread");
        // The thread serves on.
        assert_eq!(apart.run(async { 7 }).await, Some(7));
    }
}
