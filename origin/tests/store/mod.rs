//! The store's contract, run on both stores: every case in [`on_both_stores!`] runs on
//! a SQLite file and on a throwaway PostgreSQL server, each opened by `store::open`.
//! Then what only PostgreSQL has: several instances sharing one database, and its
//! transient errors.
//!
//! One test binary, a module per concept: each module lists its own cases in
//! `on_both_stores!` (tests `module::sqlite::case` and `module::postgres::case`);
//! `postgres_only` holds what runs on PostgreSQL alone.

pub(crate) use crate::support::keys;

use std::sync::Arc;
use std::time::Duration;

use harness::postgres::TestPostgres;
use origin::store::{self, Store};

pub(crate) const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// A store on a new SQLite file, and the folder that holds it (deleted on drop).
pub(crate) async fn sqlite() -> (Arc<dyn Store>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("store.sqlite3").display());
    let store = store::open(&url, ACQUIRE_TIMEOUT, keys::cipher("v1"))
        .await
        .unwrap();
    (store, dir)
}

/// A store on a new PostgreSQL server, and the server (stopped on drop).
pub(crate) async fn postgres() -> (Arc<dyn Store>, TestPostgres) {
    let server = TestPostgres::start();
    let store = store::open(server.url(), ACQUIRE_TIMEOUT, keys::cipher("v1"))
        .await
        .unwrap();
    (store, server)
}

/// One `#[tokio::test]` per case and store: `sqlite::case` and `postgres::case`, in the
/// module that invokes it (defined before the `mod` lines so they can).
macro_rules! on_both_stores {
    ($($case:ident),+ $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $case() {
                    let (store, _database) = crate::store::sqlite().await;
                    super::$case(store.as_ref()).await;
                }
            )+
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $case() {
                    let (store, _database) = crate::store::postgres().await;
                    super::$case(store.as_ref()).await;
                }
            )+
        }
    };
}

mod events;
mod idempotency;
mod outbox;
mod payments;
mod postgres_only;
mod recovery;
mod settlement;
mod upgrade;
