//! What a `WaitingRoom` keeps in its SQLite storage, the truth its line is rebuilt from:
//! the entries (arrival number, user, pass expiry), the claims of passes by orders, the
//! arrival counter, the room's identity, and one-row marks for sold out and a pause.

use std::cell::Cell;

use rules::queue::{Change, EventQueue, QueueConfig, StoredEntry};
use serde::Deserialize;
use worker::{Result, SqlStorage};

use super::protocol::PassClaim;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS entries (
    seq             INTEGER PRIMARY KEY,
    user            TEXT    NOT NULL UNIQUE,
    pass_expires_at INTEGER
);
CREATE TABLE IF NOT EXISTS claims (
    user     TEXT PRIMARY KEY,
    order_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS counter (
    id       INTEGER PRIMARY KEY CHECK (id = 0),
    next_seq INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS sold_out (
    id INTEGER PRIMARY KEY CHECK (id = 0)
);
CREATE TABLE IF NOT EXISTS paused (
    id    INTEGER PRIMARY KEY CHECK (id = 0),
    until INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS room (
    id       INTEGER PRIMARY KEY CHECK (id = 0),
    identity INTEGER NOT NULL
);
";

#[derive(Deserialize)]
struct EntryRow {
    seq: i64,
    user: String,
    pass_expires_at: Option<i64>,
}

#[derive(Deserialize)]
struct CounterRow {
    next_seq: i64,
}

#[derive(Deserialize)]
struct CountRow {
    count: i64,
}

#[derive(Deserialize)]
struct PausedRow {
    until: i64,
}

#[derive(Deserialize)]
struct RoomRow {
    identity: i64,
}

#[derive(Deserialize)]
struct ClaimRow {
    order_id: String,
}

/// A room's storage.
pub struct RoomStorage {
    sql: SqlStorage,
    /// The room's identity once read.
    identity: Cell<Option<u64>>,
}

impl RoomStorage {
    pub fn new(sql: SqlStorage) -> Self {
        if let Err(err) = sql.exec(SCHEMA, None) {
            worker::console_error!("waiting room schema: {err}");
        }
        Self {
            sql,
            identity: Cell::new(None),
        }
    }

    /// The room's identity, drawn from the runtime's CSPRNG the first time it is asked:
    /// a room whose storage was reset draws another, and the tickets of the old one name
    /// no one here.
    pub fn identity(&self) -> Result<u64> {
        if let Some(identity) = self.identity.get() {
            return Ok(identity);
        }
        let identity = self.read_or_draw_identity()?;
        self.identity.set(Some(identity));
        Ok(identity)
    }

    fn read_or_draw_identity(&self) -> Result<u64> {
        let rows: Vec<RoomRow> = self
            .sql
            .exec("SELECT identity FROM room WHERE id = 0", None)?
            .to_array()?;
        if let Some(row) = rows.first() {
            return Ok(row.identity.unsigned_abs());
        }
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).map_err(|err| worker::Error::RustError(err.to_string()))?;
        // 53 bits: SQLite's integers reach Rust through JavaScript numbers, exact only up
        // to 2^53.
        let identity = (u64::from_le_bytes(bytes) >> 11) as i64;
        self.sql.exec(
            "INSERT INTO room (id, identity) VALUES (0, ?)",
            vec![identity.into()],
        )?;
        Ok(identity.unsigned_abs())
    }

    /// The line as stored.
    pub fn restore(&self, config: QueueConfig) -> Result<EventQueue> {
        let rows: Vec<EntryRow> = self
            .sql
            .exec("SELECT seq, user, pass_expires_at FROM entries", None)?
            .to_array()?;
        let counter: Vec<CounterRow> = self
            .sql
            .exec("SELECT next_seq FROM counter WHERE id = 0", None)?
            .to_array()?;
        let next_seq = counter
            .first()
            .map_or(0, |row| row.next_seq.max(0).unsigned_abs());
        let sold_out: Vec<CountRow> = self
            .sql
            .exec("SELECT COUNT(*) AS count FROM sold_out", None)?
            .to_array()?;
        let sold_out = sold_out.first().is_some_and(|row| row.count > 0);
        let paused: Vec<PausedRow> = self
            .sql
            .exec("SELECT until FROM paused WHERE id = 0", None)?
            .to_array()?;
        let entries = rows
            .into_iter()
            .map(|row| StoredEntry {
                seq: row.seq.max(0).unsigned_abs(),
                user: row.user,
                pass_expires_at: row.pass_expires_at,
            })
            .collect();
        let paused_until = paused.first().map_or(0, |row| row.until);
        Ok(EventQueue::restore(config, entries, next_seq, sold_out).with_pause(paused_until))
    }

    /// Writes `changes` in order; how many passes they issued.
    pub fn write(&self, changes: &[Change]) -> Result<u32> {
        let mut issued = 0;
        for change in changes {
            match change {
                Change::Entered { user, seq } => {
                    let seq = i64::try_from(*seq)
                        .map_err(|err| worker::Error::RustError(err.to_string()))?;
                    self.sql.exec(
                        "INSERT INTO entries (seq, user) VALUES (?, ?)",
                        vec![seq.into(), user.as_str().into()],
                    )?;
                    self.sql.exec(
                        "INSERT INTO counter (id, next_seq) VALUES (0, ?) \
                         ON CONFLICT (id) DO UPDATE SET next_seq = excluded.next_seq",
                        vec![(seq + 1).into()],
                    )?;
                }
                Change::PassIssued { user, expires_at } => {
                    self.set_pass(user, *expires_at)?;
                    issued += 1;
                }
                Change::PassExtended { user, expires_at } => self.set_pass(user, *expires_at)?,
                Change::Paused { until } => {
                    self.sql.exec(
                        "INSERT INTO paused (id, until) VALUES (0, ?) \
                         ON CONFLICT (id) DO UPDATE SET until = excluded.until",
                        vec![(*until).into()],
                    )?;
                }
                Change::Removed { user } => {
                    self.sql.exec(
                        "DELETE FROM entries WHERE user = ?",
                        vec![user.as_str().into()],
                    )?;
                    self.release_all(user)?;
                }
                Change::SoldOut => {
                    self.sql.exec(
                        "INSERT INTO sold_out (id) VALUES (0) ON CONFLICT (id) DO NOTHING",
                        None,
                    )?;
                }
            }
        }
        Ok(issued)
    }

    fn set_pass(&self, user: &str, expires_at: i64) -> Result<()> {
        self.sql.exec(
            "UPDATE entries SET pass_expires_at = ? WHERE user = ?",
            vec![expires_at.into(), user.into()],
        )?;
        Ok(())
    }

    /// Gives a live pass to `order_id` unless another order holds it. Claims are read
    /// from storage, which is small (one row per admitted user at most).
    pub fn claim(&self, user: &str, order_id: &str) -> Result<PassClaim> {
        let held: Vec<ClaimRow> = self
            .sql
            .exec(
                "SELECT order_id FROM claims WHERE user = ?",
                vec![user.into()],
            )?
            .to_array()?;
        match held.first() {
            Some(claim) if claim.order_id != order_id => Ok(PassClaim::InUse),
            Some(_) => Ok(PassClaim::Granted),
            None => {
                self.sql.exec(
                    "INSERT INTO claims (user, order_id) VALUES (?, ?)",
                    vec![user.into(), order_id.into()],
                )?;
                Ok(PassClaim::Granted)
            }
        }
    }

    /// The claiming payment failed: the pass may back another order.
    pub fn release(&self, user: &str, order_id: &str) -> Result<()> {
        self.sql.exec(
            "DELETE FROM claims WHERE user = ? AND order_id = ?",
            vec![user.into(), order_id.into()],
        )?;
        Ok(())
    }

    fn release_all(&self, user: &str) -> Result<()> {
        self.sql
            .exec("DELETE FROM claims WHERE user = ?", vec![user.into()])?;
        Ok(())
    }
}
