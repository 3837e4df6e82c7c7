//! What a `WaitingRoom` keeps in its SQLite storage, the truth its line is rebuilt from:
//! the entries (arrival number, user, pass expiry — the only place a user's name is
//! kept), the line's bitmap in blocks of [`BLOCK_SEQS`] arrival numbers, the claims of
//! passes by orders (`claims.rs`), the arrival counter, the room's identity, one-row
//! marks for sold out and a pause, the drop's settings, prequeue and outflow (`drop.rs`),
//! and its draw (`draw.rs`). A restart reads the blocks and the passes — about a thousand rows for a
//! million people — not an entry per person.

use std::cell::Cell;

use rules::queue::{Change, EventQueue, QueueConfig, Stored};
use serde::Deserialize;
use worker::{Result, SqlStorage};

mod claims;
mod draw;
mod drop;

pub use draw::{Draw, DrawProgress, DrawStep};
pub use drop::DropState;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS entries (
    seq             INTEGER PRIMARY KEY,
    user            TEXT    NOT NULL UNIQUE,
    pass_expires_at INTEGER
);
CREATE TABLE IF NOT EXISTS claims (
    user     TEXT PRIMARY KEY,
    order_id TEXT NOT NULL,
    grants   INTEGER NOT NULL DEFAULT 1
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
CREATE TABLE IF NOT EXISTS presence (
    block INTEGER PRIMARY KEY,
    bits  TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_passes ON entries (pass_expires_at)
    WHERE pass_expires_at IS NOT NULL;
";

/// Arrival numbers per stored block of the line's bitmap: 16 words, kept as hex — SQLite's
/// integers reach Rust through JavaScript numbers, exact only to 2^53, so not as words.
const BLOCK_WORDS: usize = 16;
pub const BLOCK_SEQS: u64 = BLOCK_WORDS as u64 * 64;

#[derive(Deserialize)]
struct SeqRow {
    seq: i64,
}

#[derive(Deserialize)]
struct PassRow {
    seq: i64,
    pass_expires_at: i64,
}

#[derive(Deserialize)]
struct BlockRow {
    block: i64,
    bits: String,
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

/// A room's storage.
pub struct RoomStorage {
    sql: SqlStorage,
    /// The room's identity once read.
    identity: Cell<Option<u64>>,
}

impl RoomStorage {
    pub fn new(sql: SqlStorage) -> Self {
        for schema in [SCHEMA, drop::SCHEMA, draw::SCHEMA] {
            if let Err(err) = sql.exec(schema, None) {
                worker::console_error!("waiting room schema: {err}");
            }
        }
        claims::add_grants(&sql);
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

    /// The arrival number `user` holds, if they are in line.
    pub fn seq_of(&self, user: &str) -> Result<Option<u64>> {
        let rows: Vec<SeqRow> = self
            .sql
            .exec("SELECT seq FROM entries WHERE user = ?", vec![user.into()])?
            .to_array()?;
        Ok(rows.first().map(|row| row.seq.unsigned_abs()))
    }

    /// The line as stored. A room stored before the bitmap was has its blocks written
    /// from its entries, once.
    pub fn restore(&self, config: QueueConfig) -> Result<EventQueue> {
        let mut blocks: Vec<BlockRow> = self
            .sql
            .exec("SELECT block, bits FROM presence ORDER BY block", None)?
            .to_array()?;
        if blocks.is_empty() {
            blocks = self.blocks_from_entries()?;
        }
        let base_block = blocks.first().map_or(0, |row| row.block.unsigned_abs());
        let mut words = Vec::new();
        for row in &blocks {
            let at = (row.block.unsigned_abs() - base_block) as usize * BLOCK_WORDS;
            words.resize(at, 0);
            words.extend(block_words(&row.bits)?);
        }
        let passes: Vec<PassRow> = self
            .sql
            .exec(
                "SELECT seq, pass_expires_at FROM entries WHERE pass_expires_at IS NOT NULL",
                None,
            )?
            .to_array()?;
        let counter: Vec<CounterRow> = self
            .sql
            .exec("SELECT next_seq FROM counter WHERE id = 0", None)?
            .to_array()?;
        let sold_out: Vec<CountRow> = self
            .sql
            .exec("SELECT COUNT(*) AS count FROM sold_out", None)?
            .to_array()?;
        let paused: Vec<PausedRow> = self
            .sql
            .exec("SELECT until FROM paused WHERE id = 0", None)?
            .to_array()?;
        let outflow = self.outflow()?;
        let stored = Stored {
            base: base_block * BLOCK_SEQS,
            words,
            next_seq: counter
                .first()
                .map_or(0, |row| row.next_seq.max(0).unsigned_abs()),
            passes: passes
                .iter()
                .map(|row| (row.seq.unsigned_abs(), row.pass_expires_at))
                .collect(),
            sold_out: sold_out.first().is_some_and(|row| row.count > 0),
            paused_until: paused.first().map_or(0, |row| row.until),
            issued_at: outflow.issued_at,
            held: outflow.held,
            closed: outflow.closed,
        };
        Ok(EventQueue::restore(config, stored))
    }

    /// The blocks of a room stored before the bitmap was, from its entries, written.
    fn blocks_from_entries(&self) -> Result<Vec<BlockRow>> {
        let seqs: Vec<SeqRow> = self
            .sql
            .exec("SELECT seq FROM entries ORDER BY seq", None)?
            .to_array()?;
        let mut blocks: Vec<(u64, [u64; BLOCK_WORDS])> = Vec::new();
        for seq in seqs.iter().map(|row| row.seq.unsigned_abs()) {
            let block = seq / BLOCK_SEQS;
            if blocks.last().is_none_or(|(last, _)| *last != block) {
                blocks.push((block, [0; BLOCK_WORDS]));
            }
            if let Some((_, words)) = blocks.last_mut() {
                let offset = seq % BLOCK_SEQS;
                words[(offset / 64) as usize] |= 1 << (offset % 64);
            }
        }
        let rows: Vec<BlockRow> = blocks
            .iter()
            .map(|(block, words)| BlockRow {
                block: *block as i64,
                bits: block_text(words),
            })
            .collect();
        for row in &rows {
            self.put_block(row.block, &row.bits)?;
        }
        Ok(rows)
    }

    /// Writes `changes` in order, and the blocks of the line's bitmap they touched as
    /// `line` now has them; `entrants` took the arrival numbers of the
    /// [`Change::Entered`] among them, in order. How many passes they issued.
    pub fn write(
        &self,
        changes: &[Change],
        entrants: &[&str],
        line: &EventQueue,
        now_ms: i64,
    ) -> Result<u32> {
        let mut issued = 0;
        let mut touched = Vec::new();
        let mut entrants = entrants.iter();
        let mut next_seq = None;
        for change in changes {
            match change {
                Change::Entered { seq } => {
                    let user = entrants.next().ok_or_else(|| {
                        worker::Error::RustError("an arrival without its entrant".into())
                    })?;
                    let seq = sql_int(*seq)?;
                    // A row the bitmap had lost is replaced, not kept beside the new one.
                    self.sql.exec(
                        "INSERT INTO entries (seq, user) VALUES (?, ?) ON CONFLICT (user) \
                         DO UPDATE SET seq = excluded.seq, pass_expires_at = NULL",
                        vec![seq.into(), (*user).into()],
                    )?;
                    next_seq = Some(seq + 1);
                    touched.push(seq.unsigned_abs() / BLOCK_SEQS);
                }
                Change::PassIssued { seq, expires_at } => {
                    self.set_pass(*seq, *expires_at)?;
                    self.record_issued(now_ms)?;
                    issued += 1;
                }
                Change::Held { .. } | Change::Closed => {
                    self.set_outflow(line.is_held(), line.is_closed())?;
                }
                Change::PassExtended { seq, expires_at } => self.set_pass(*seq, *expires_at)?,
                Change::Paused { until } => {
                    self.sql.exec(
                        "INSERT INTO paused (id, until) VALUES (0, ?) \
                         ON CONFLICT (id) DO UPDATE SET until = excluded.until",
                        vec![(*until).into()],
                    )?;
                }
                Change::Removed { seq } => {
                    let seq = sql_int(*seq)?;
                    self.sql.exec(
                        "DELETE FROM claims WHERE user IN (SELECT user FROM entries WHERE seq = ?)",
                        vec![seq.into()],
                    )?;
                    self.sql
                        .exec("DELETE FROM entries WHERE seq = ?", vec![seq.into()])?;
                    touched.push(seq.unsigned_abs() / BLOCK_SEQS);
                }
                Change::SoldOut => {
                    self.sql.exec(
                        "INSERT INTO sold_out (id) VALUES (0) ON CONFLICT (id) DO NOTHING",
                        None,
                    )?;
                }
            }
        }
        if let Some(next_seq) = next_seq {
            self.sql.exec(
                "INSERT INTO counter (id, next_seq) VALUES (0, ?) \
                 ON CONFLICT (id) DO UPDATE SET next_seq = excluded.next_seq",
                vec![next_seq.into()],
            )?;
        }
        touched.sort_unstable();
        touched.dedup();
        for block in touched {
            self.write_block(block, line)?;
        }
        Ok(issued)
    }

    /// Stores block `block` of `line`'s bitmap as it is now; an empty block is deleted.
    fn write_block(&self, block: u64, line: &EventQueue) -> Result<()> {
        let (base, words) = line.words();
        let mut bits = [0u64; BLOCK_WORDS];
        for (at, word) in bits.iter_mut().enumerate() {
            let seq = block * BLOCK_SEQS + at as u64 * 64;
            if let Some(index) = seq.checked_sub(base).map(|offset| (offset / 64) as usize) {
                *word = words.get(index).copied().unwrap_or(0);
            }
        }
        let block = sql_int(block)?;
        if bits.iter().all(|word| *word == 0) {
            self.sql
                .exec("DELETE FROM presence WHERE block = ?", vec![block.into()])?;
            return Ok(());
        }
        self.put_block(block, &block_text(&bits))
    }

    fn put_block(&self, block: i64, bits: &str) -> Result<()> {
        self.sql.exec(
            "INSERT INTO presence (block, bits) VALUES (?, ?) \
             ON CONFLICT (block) DO UPDATE SET bits = excluded.bits",
            vec![block.into(), bits.into()],
        )?;
        Ok(())
    }

    fn set_pass(&self, seq: u64, expires_at: i64) -> Result<()> {
        self.sql.exec(
            "UPDATE entries SET pass_expires_at = ? WHERE seq = ?",
            vec![expires_at.into(), sql_int(seq)?.into()],
        )?;
        Ok(())
    }
}

impl RoomStorage {
    /// The count a `SELECT COUNT(*) AS count …` answers.
    fn count(&self, query: &str, bindings: Vec<worker::SqlStorageValue>) -> Result<u64> {
        let rows: Vec<CountRow> = self.sql.exec(query, bindings)?.to_array()?;
        Ok(rows.first().map_or(0, |row| row.count.unsigned_abs()))
    }
}

pub(super) fn sql_int(value: u64) -> Result<i64> {
    i64::try_from(value).map_err(|err| worker::Error::RustError(err.to_string()))
}

/// A block's words as stored: 16 hex digits each, little end first.
fn block_text(words: &[u64; BLOCK_WORDS]) -> String {
    words.iter().map(|word| format!("{word:016x}")).collect()
}

fn block_words(text: &str) -> Result<[u64; BLOCK_WORDS]> {
    let bad =
        || worker::Error::RustError(format!("a stored block that is not {BLOCK_WORDS} words"));
    if text.len() != BLOCK_WORDS * 16 || !text.is_ascii() {
        return Err(bad());
    }
    let mut words = [0u64; BLOCK_WORDS];
    for (at, word) in words.iter_mut().enumerate() {
        *word = u64::from_str_radix(&text[at * 16..at * 16 + 16], 16).map_err(|_| bad())?;
    }
    Ok(words)
}
