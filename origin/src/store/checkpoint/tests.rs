use std::time::{Duration, Instant};

use super::*;
use crate::store::sqlite::in_folder;

#[tokio::test]
async fn a_commit_leaves_the_wal_to_the_task_which_copies_it_back_within_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = in_folder(&dir, "origin.sqlite3", Duration::from_secs(1)).await;
    let size = || std::fs::metadata(&path).map(|meta| meta.len()).unwrap_or(0);
    let before = size();
    // 2,000 pages in one commit: twice the mark at which the commit itself would copy
    // them into the database file with SQLite's default automatic checkpoints.
    sqlx::query("CREATE TABLE filler (b BLOB)")
        .execute(&store.pool)
        .await
        .unwrap();
    sqlx::query("INSERT INTO filler VALUES (zeroblob(8000000))")
        .execute(&store.pool)
        .await
        .unwrap();
    assert!(
        size() < before + 1_000_000,
        "the commit copied its pages into the database file: {} → {}",
        before,
        size()
    );
    let deadline = Instant::now() + 20 * EVERY;
    while size() < 8_000_000 {
        assert!(Instant::now() < deadline, "no checkpoint in 20 passes");
        tokio::time::sleep(EVERY / 5).await;
    }
    let copied = checkpoint(&store.pool).await.unwrap();
    assert_eq!(copied.copied, copied.in_wal, "{copied:?}");
}
