//! What a room keeps of its drop: the settings the origin handed it (with their
//! version), the prequeue until its people are placed, when the last minute's passes
//! were issued (the rate), and whether an operator holds or closed the room. The draw
//! is `draw.rs`'s.

use rules::drop::RoomUpdate;
use rules::queue::outflow::MINUTE_MS;
use serde::Deserialize;
use worker::Result;

use super::{Draw, DrawProgress, RoomStorage};

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS settings (
    id      INTEGER PRIMARY KEY CHECK (id = 0),
    update_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS prequeue (
    user      TEXT    PRIMARY KEY,
    joined_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS issued (
    at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS outflow (
    id     INTEGER PRIMARY KEY CHECK (id = 0),
    held   INTEGER NOT NULL,
    closed INTEGER NOT NULL
);
";

/// The drop as stored: the last update applied, and the draw once begun.
pub struct DropState {
    pub update: Option<RoomUpdate>,
    pub draw: Option<Draw>,
    pub progress: Option<DrawProgress>,
}

#[derive(Deserialize)]
struct UpdateRow {
    update_json: String,
}

#[derive(Deserialize)]
struct AtRow {
    at: i64,
}

#[derive(Deserialize)]
struct OutflowRow {
    held: i64,
    closed: i64,
}

/// What the line's outflow was left at: the last minute's issue times, held, closed.
pub(super) struct Outflow {
    pub(super) issued_at: Vec<i64>,
    pub(super) held: bool,
    pub(super) closed: bool,
}

impl RoomStorage {
    pub fn drop_state(&self) -> Result<DropState> {
        let updates: Vec<UpdateRow> = self
            .sql
            .exec("SELECT update_json FROM settings WHERE id = 0", None)?
            .to_array()?;
        let update = match updates.first() {
            Some(row) => Some(
                serde_json::from_str(&row.update_json)
                    .map_err(|err| worker::Error::RustError(format!("stored settings: {err}")))?,
            ),
            None => None,
        };
        Ok(DropState {
            update,
            draw: self.draw()?,
            progress: self.draw_progress()?,
        })
    }

    pub fn store_update(&self, update: &RoomUpdate) -> Result<()> {
        let json = serde_json::to_string(update)
            .map_err(|err| worker::Error::RustError(err.to_string()))?;
        self.sql.exec(
            "INSERT INTO settings (id, update_json) VALUES (0, ?) \
             ON CONFLICT (id) DO UPDATE SET update_json = excluded.update_json",
            vec![json.into()],
        )?;
        Ok(())
    }

    /// Puts `user` in the prequeue (entering twice is one place in the draw).
    pub fn prequeue(&self, user: &str, now_ms: i64) -> Result<()> {
        self.sql.exec(
            "INSERT INTO prequeue (user, joined_at) VALUES (?, ?) ON CONFLICT (user) DO NOTHING",
            vec![user.into(), now_ms.into()],
        )?;
        Ok(())
    }

    /// Moves everyone in the line into the prequeue, as if they had entered it at
    /// `now_ms`: the drop's first opening was set while a line stood (a room used before
    /// it was defined). Their passes and claims go with their places; arrival numbers are
    /// not reused, so the old tickets name no one.
    pub fn line_to_prequeue(&self, now_ms: i64) -> Result<()> {
        self.sql.exec(
            "INSERT INTO prequeue (user, joined_at) SELECT user, ? FROM entries WHERE true \
             ON CONFLICT (user) DO NOTHING",
            vec![now_ms.into()],
        )?;
        for table in ["claims", "entries", "presence"] {
            self.sql.exec(&format!("DELETE FROM {table}"), None)?;
        }
        Ok(())
    }

    pub fn is_prequeued(&self, user: &str) -> Result<bool> {
        let query = "SELECT COUNT(*) AS count FROM prequeue WHERE user = ?";
        Ok(self.count(query, vec![user.into()])? > 0)
    }

    pub fn prequeued(&self) -> Result<u64> {
        self.count("SELECT COUNT(*) AS count FROM prequeue", Vec::new())
    }

    /// A pass was issued at `at`; what is past the rate's minute is forgotten.
    pub(super) fn record_issued(&self, at: i64) -> Result<()> {
        self.sql.exec(
            "DELETE FROM issued WHERE at <= ?",
            vec![(at - MINUTE_MS).into()],
        )?;
        self.sql
            .exec("INSERT INTO issued (at) VALUES (?)", vec![at.into()])?;
        Ok(())
    }

    pub(super) fn set_outflow(&self, held: bool, closed: bool) -> Result<()> {
        self.sql.exec(
            "INSERT INTO outflow (id, held, closed) VALUES (0, ?, ?) \
             ON CONFLICT (id) DO UPDATE SET held = excluded.held, closed = excluded.closed",
            vec![i64::from(held).into(), i64::from(closed).into()],
        )?;
        Ok(())
    }

    pub(super) fn outflow(&self) -> Result<Outflow> {
        let issued: Vec<AtRow> = self.sql.exec("SELECT at FROM issued", None)?.to_array()?;
        let flags: Vec<OutflowRow> = self
            .sql
            .exec("SELECT held, closed FROM outflow WHERE id = 0", None)?
            .to_array()?;
        let flags = flags.first();
        Ok(Outflow {
            issued_at: issued.into_iter().map(|row| row.at).collect(),
            held: flags.is_some_and(|row| row.held != 0),
            closed: flags.is_some_and(|row| row.closed != 0),
        })
    }
}
