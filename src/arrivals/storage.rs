//! What an `ArrivalShard` keeps in its SQLite storage: which event and how many shards
//! it is one of, the next batch's id, the arrival number each of its numbered users
//! holds, the batch sent to the head and not yet answered (stored before it is sent, so
//! a shard lost mid-call sends it again), and the numbers of those who left and whom the
//! head has not yet taken out.

use rules::queue::arrivals::Batch;
use serde::Deserialize;
use worker::{Result, SqlStorage};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS shard (
    id         INTEGER PRIMARY KEY CHECK (id = 0),
    event      TEXT    NOT NULL,
    shards     INTEGER NOT NULL,
    next_batch INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS entries (
    user TEXT    PRIMARY KEY,
    seq  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS sent (
    id    INTEGER PRIMARY KEY CHECK (id = 0),
    batch INTEGER NOT NULL,
    users TEXT    NOT NULL,
    left  TEXT    NOT NULL
);
CREATE TABLE IF NOT EXISTS leaving (
    seq INTEGER PRIMARY KEY
);
";

/// The shard's place: its event, how many shards the event has, its next batch's id.
#[derive(Debug, Clone, Deserialize)]
pub struct Place {
    pub event: String,
    pub shards: i64,
    pub next_batch: i64,
}

#[derive(Deserialize)]
struct SeqRow {
    seq: i64,
}

#[derive(Deserialize)]
struct SentRow {
    batch: i64,
    users: String,
    left: String,
}

pub struct ShardStorage {
    sql: SqlStorage,
}

fn int(value: u64) -> Result<i64> {
    i64::try_from(value).map_err(|err| worker::Error::RustError(err.to_string()))
}

fn text(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(|err| worker::Error::RustError(err.to_string()))
}

fn json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|err| worker::Error::RustError(format!("stored: {err}")))
}

impl ShardStorage {
    pub fn new(sql: SqlStorage) -> Self {
        if let Err(err) = sql.exec(SCHEMA, None) {
            worker::console_error!("arrival shard schema: {err}");
        }
        Self { sql }
    }

    pub fn place(&self) -> Result<Option<Place>> {
        let rows: Vec<Place> = self
            .sql
            .exec(
                "SELECT event, shards, next_batch FROM shard WHERE id = 0",
                None,
            )?
            .to_array()?;
        Ok(rows.into_iter().next())
    }

    /// The shard's first call: it is one of `shards` of `event`.
    pub fn settle(&self, event: &str, shards: u32) -> Result<()> {
        self.sql.exec(
            "INSERT INTO shard (id, event, shards, next_batch) VALUES (0, ?, ?, 0) \
             ON CONFLICT (id) DO NOTHING",
            vec![event.into(), i64::from(shards).into()],
        )?;
        Ok(())
    }

    pub fn seq_of(&self, user: &str) -> Result<Option<u64>> {
        let rows: Vec<SeqRow> = self
            .sql
            .exec("SELECT seq FROM entries WHERE user = ?", vec![user.into()])?
            .to_array()?;
        Ok(rows.first().map(|row| row.seq.unsigned_abs()))
    }

    /// The batch sent and not answered, if any.
    pub fn sent(&self) -> Result<Option<Batch>> {
        let rows: Vec<SentRow> = self
            .sql
            .exec("SELECT batch, users, left FROM sent WHERE id = 0", None)?
            .to_array()?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        Ok(Some(Batch {
            id: row.batch.unsigned_abs(),
            users: json(&row.users)?,
            left: json(&row.left)?,
        }))
    }

    /// `batch` is about to be sent (again).
    pub fn store_sent(&self, batch: &Batch) -> Result<()> {
        self.sql.exec(
            "INSERT INTO sent (id, batch, users, left) VALUES (0, ?, ?, ?) \
             ON CONFLICT (id) DO UPDATE SET batch = excluded.batch, users = excluded.users, \
             left = excluded.left",
            vec![
                int(batch.id)?.into(),
                text(&batch.users)?.into(),
                text(&batch.left)?.into(),
            ],
        )?;
        self.sql.exec(
            "UPDATE shard SET next_batch = MAX(next_batch, ?) WHERE id = 0",
            vec![int(batch.id + 1)?.into()],
        )?;
        Ok(())
    }

    /// The head answered `batch`: `numbered[i]` is the arrival number its i-th user holds
    /// now, if any. Their numbers are kept; the batch and its leavers are done.
    pub fn answered(&self, batch: &Batch, numbered: &[Option<u64>]) -> Result<()> {
        for (user, seq) in batch.users.iter().zip(numbered) {
            if let Some(seq) = seq {
                self.sql.exec(
                    "INSERT INTO entries (user, seq) VALUES (?, ?) \
                     ON CONFLICT (user) DO UPDATE SET seq = excluded.seq",
                    vec![user.clone().into(), int(*seq)?.into()],
                )?;
            }
        }
        for seq in &batch.left {
            self.sql
                .exec("DELETE FROM leaving WHERE seq = ?", vec![int(*seq)?.into()])?;
        }
        self.sql.exec("DELETE FROM sent WHERE id = 0", None)?;
        Ok(())
    }

    /// `user` left, holding `seq`: forgotten here, and kept until the head takes it out.
    pub fn leave(&self, user: &str, seq: u64) -> Result<()> {
        self.sql
            .exec("DELETE FROM entries WHERE user = ?", vec![user.into()])?;
        self.sql.exec(
            "INSERT INTO leaving (seq) VALUES (?) ON CONFLICT (seq) DO NOTHING",
            vec![int(seq)?.into()],
        )?;
        Ok(())
    }

    /// The users it holds a number for.
    pub fn holding(&self) -> Result<u64> {
        #[derive(Deserialize)]
        struct CountRow {
            count: i64,
        }
        let rows: Vec<CountRow> = self
            .sql
            .exec("SELECT COUNT(*) AS count FROM entries", None)?
            .to_array()?;
        Ok(rows.first().map_or(0, |row| row.count.unsigned_abs()))
    }

    /// The numbers of those who left and whom the head has not yet taken out.
    pub fn leaving(&self) -> Result<Vec<u64>> {
        let rows: Vec<SeqRow> = self.sql.exec("SELECT seq FROM leaving", None)?.to_array()?;
        Ok(rows.into_iter().map(|row| row.seq.unsigned_abs()).collect())
    }
}
