//! End to end: a room restored from its storage after the edge restarts. A room stored
//! before its line was kept as a bitmap (entries, no blocks) has its blocks written from
//! its entries the first time it starts, and keeps everyone's place.

use crate::support;

use reqwest::StatusCode;
use serde_json::Value;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions as _, Connection as _};
use support::room::{enter, leave, start, status};

const EVENT: &str = "drop-restore";

/// What the room's one SQLite file runs `sql` to, as a count.
async fn count(file: &std::path::Path, sql: &str) -> i64 {
    let mut db = SqliteConnectOptions::new()
        .filename(file)
        .connect()
        .await
        .expect("the room's SQLite file");
    let (count,): (i64,) = sqlx::query_as(sql)
        .fetch_one(&mut db)
        .await
        .expect("a count");
    db.close().await.expect("closed");
    count
}

async fn positions(system: &support::System, tokens: &[String]) -> Vec<Option<u64>> {
    let mut seen = Vec::new();
    for token in tokens {
        let answer = status(system, token, EVENT).await;
        seen.push(match answer.status() {
            StatusCode::OK => answer.json::<Value>().await.expect("JSON")["position"].as_u64(),
            _ => None,
        });
    }
    seen
}

#[tokio::test]
async fn a_room_stored_before_its_bitmap_keeps_every_place_after_a_restart() {
    let mut system = start(&[("QUEUE_ADMIT_LIMIT", "1"), ("GATED_EVENTS", EVENT)]).await;
    let tokens: Vec<String> = (0..6)
        .map(|n| system.token(&format!("user-{n}"), 600))
        .collect();
    for token in &tokens {
        enter(&system, token, EVENT).await;
    }
    leave(&system, &tokens[2], EVENT).await;
    let before = positions(&system, &tokens).await;
    assert_eq!(
        before,
        [Some(1), Some(2), None, Some(3), Some(4), Some(5)],
        "user-2 left"
    );

    // The room as a version before the bitmap stored it: its entries, no blocks.
    system.kill("edge");
    let (room, mut db) = system.only_object_db("WaitingRoom").await;
    sqlx::query("DELETE FROM presence")
        .execute(&mut db)
        .await
        .expect("the blocks deleted");
    db.close().await.expect("closed");
    assert_eq!(count(&room, "SELECT COUNT(*) FROM entries").await, 5);

    system.start_edge_again().await;
    assert_eq!(positions(&system, &tokens).await, before);
    let newcomer = system.token("user-6", 600);
    assert_eq!(enter(&system, &newcomer, EVENT).await["position"], 6);

    system.kill("edge");
    assert!(
        count(&room, "SELECT COUNT(*) FROM presence").await > 0,
        "the blocks were written from the entries"
    );
    system.start_edge_again().await;
    let mut everyone = tokens.clone();
    everyone.push(newcomer);
    let mut expected = before.clone();
    expected.push(Some(6));
    assert_eq!(positions(&system, &everyone).await, expected);
}
