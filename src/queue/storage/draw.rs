//! What a room keeps of its draw: the seed, when, and how many it placed so far; the
//! people in their drawn order, kept for audit; and, while the draw runs in batches,
//! its progress — the prequeue ranked under the seed, then placed in rank order, then
//! the arrivals that came while it ran, in their order.
//!
//! The prequeue (`drop.rs`) is frozen from the opening: nobody joins it, a leave takes
//! its user out of it and out of the ranked list. Placing someone moves them from the
//! prequeue to the line and the kept list in one batch, so the prequeue is always who is
//! still to be placed.

use rules::queue::draw::rank_text;
use serde::Deserialize;
use worker::Result;

use super::{sql_int, RoomStorage};

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS draw (
    id       INTEGER PRIMARY KEY CHECK (id = 0),
    seed     TEXT    NOT NULL,
    drawn_at INTEGER NOT NULL,
    drawn    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS drawn (
    place INTEGER PRIMARY KEY,
    user  TEXT    NOT NULL
);
CREATE TABLE IF NOT EXISTS ranked (
    rank TEXT NOT NULL,
    user TEXT NOT NULL,
    PRIMARY KEY (rank, user)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS late (
    seq  INTEGER PRIMARY KEY,
    user TEXT    NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS drawing (
    id         INTEGER PRIMARY KEY CHECK (id = 0),
    step       INTEGER NOT NULL,
    after_user TEXT,
    after_rank TEXT,
    after_late INTEGER NOT NULL,
    batches    INTEGER NOT NULL
);
";

/// The prequeue's draw, as recorded: enough to re-derive its order
/// (`rules::queue::draw::order` of the seed and the people drawn).
#[derive(Debug, Clone, Deserialize)]
pub struct Draw {
    /// The seed, hex.
    pub seed: String,
    pub drawn_at: i64,
    /// How many people it placed so far.
    pub drawn: i64,
}

/// Where a draw is: the step it is at, with the last one that step handled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DrawStep {
    /// Ranking the prequeue, in user order.
    Rank {
        after: Option<String>,
    },
    /// Placing the ranked, in rank order: the last placed's rank (as stored) and user.
    Place {
        after: Option<(String, String)>,
    },
    /// Placing who arrived while the draw ran, in arrival order.
    Late {
        after: i64,
    },
    Done,
}

/// A draw's progress, and how many batches it took so far.
#[derive(Debug, Clone)]
pub struct DrawProgress {
    pub step: DrawStep,
    pub batches: u64,
}

#[derive(Deserialize)]
struct ProgressRow {
    step: i64,
    after_user: Option<String>,
    after_rank: Option<String>,
    after_late: i64,
    batches: i64,
}

#[derive(Deserialize)]
struct UserRow {
    user: String,
}

#[derive(Deserialize)]
struct RankedRow {
    rank: String,
    user: String,
}

#[derive(Deserialize)]
struct LateRow {
    seq: i64,
    user: String,
}

impl RoomStorage {
    pub(super) fn draw(&self) -> Result<Option<Draw>> {
        let draws: Vec<Draw> = self
            .sql
            .exec("SELECT seed, drawn_at, drawn FROM draw WHERE id = 0", None)?
            .to_array()?;
        Ok(draws.into_iter().next())
    }

    /// Records the draw's seed and begins it: nobody placed yet.
    pub fn start_draw(&self, seed: &str, now_ms: i64) -> Result<()> {
        self.sql.exec(
            "INSERT INTO draw (id, seed, drawn_at, drawn) VALUES (0, ?, ?, 0)",
            vec![seed.into(), now_ms.into()],
        )?;
        self.set_draw_progress(&DrawProgress {
            step: DrawStep::Rank { after: None },
            batches: 0,
        })
    }

    /// The draw's progress; `None` before the draw, or for a draw made in one call
    /// before draws ran in batches (it is complete).
    pub fn draw_progress(&self) -> Result<Option<DrawProgress>> {
        let rows: Vec<ProgressRow> = self
            .sql
            .exec(
                "SELECT step, after_user, after_rank, after_late, batches FROM drawing \
                 WHERE id = 0",
                None,
            )?
            .to_array()?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        let step = match row.step {
            0 => DrawStep::Rank {
                after: row.after_user,
            },
            1 => DrawStep::Place {
                after: row.after_rank.zip(row.after_user),
            },
            2 => DrawStep::Late {
                after: row.after_late,
            },
            _ => DrawStep::Done,
        };
        Ok(Some(DrawProgress {
            step,
            batches: row.batches.unsigned_abs(),
        }))
    }

    pub fn set_draw_progress(&self, progress: &DrawProgress) -> Result<()> {
        let (step, user, rank, late) = match &progress.step {
            DrawStep::Rank { after } => (0, after.clone(), None, 0),
            DrawStep::Place { after } => {
                let (rank, user) = after.clone().unzip();
                (1, user, rank, 0)
            }
            DrawStep::Late { after } => (2, None, None, *after),
            DrawStep::Done => (3, None, None, 0),
        };
        self.sql.exec(
            "INSERT INTO drawing (id, step, after_user, after_rank, after_late, batches) \
             VALUES (0, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET step = excluded.step, \
             after_user = excluded.after_user, after_rank = excluded.after_rank, \
             after_late = excluded.after_late, batches = excluded.batches",
            vec![
                i64::from(step).into(),
                user.into(),
                rank.into(),
                late.into(),
                sql_int(progress.batches)?.into(),
            ],
        )?;
        if progress.step == DrawStep::Done {
            // Everyone ranked is placed and in the kept list; every late arrival is in line.
            self.sql.exec("DELETE FROM ranked", None)?;
            self.sql.exec("DELETE FROM late", None)?;
        }
        Ok(())
    }

    /// Ranks up to `limit` of the prequeue after `after` in user order, under `rank`;
    /// the users ranked.
    pub fn rank_prequeue(
        &self,
        after: Option<&str>,
        limit: u64,
        rank: impl Fn(&str) -> u64,
    ) -> Result<Vec<String>> {
        let limit = sql_int(limit)?;
        let rows: Vec<UserRow> = match after {
            Some(after) => self.sql.exec(
                "SELECT user FROM prequeue WHERE user > ? ORDER BY user LIMIT ?",
                vec![after.into(), limit.into()],
            )?,
            None => self.sql.exec(
                "SELECT user FROM prequeue ORDER BY user LIMIT ?",
                vec![limit.into()],
            )?,
        }
        .to_array()?;
        for row in &rows {
            self.sql.exec(
                "INSERT INTO ranked (rank, user) VALUES (?, ?) ON CONFLICT DO NOTHING",
                vec![rank_text(rank(&row.user)).into(), row.user.clone().into()],
            )?;
        }
        Ok(rows.into_iter().map(|row| row.user).collect())
    }

    /// Up to `limit` of the ranked after `after` (rank as stored, user), in rank order.
    pub fn ranked_after(
        &self,
        after: Option<&(String, String)>,
        limit: u64,
    ) -> Result<Vec<(String, String)>> {
        let limit = sql_int(limit)?;
        let rows: Vec<RankedRow> = match after {
            Some((rank, user)) => self.sql.exec(
                "SELECT rank, user FROM ranked WHERE (rank, user) > (?, ?) \
                 ORDER BY rank, user LIMIT ?",
                vec![rank.clone().into(), user.clone().into(), limit.into()],
            )?,
            None => self.sql.exec(
                "SELECT rank, user FROM ranked ORDER BY rank, user LIMIT ?",
                vec![limit.into()],
            )?,
        }
        .to_array()?;
        Ok(rows.into_iter().map(|row| (row.rank, row.user)).collect())
    }

    /// `users` were placed in the line, in this order, after the `drawn` placed before:
    /// kept in the draw's list, out of the prequeue.
    pub fn record_placed(&self, drawn: i64, users: &[String]) -> Result<()> {
        for (at, user) in users.iter().enumerate() {
            let place = drawn + i64::try_from(at).unwrap_or(i64::MAX);
            self.sql.exec(
                "INSERT INTO drawn (place, user) VALUES (?, ?)",
                vec![place.into(), user.clone().into()],
            )?;
            self.sql.exec(
                "DELETE FROM prequeue WHERE user = ?",
                vec![user.clone().into()],
            )?;
        }
        let drawn = drawn + i64::try_from(users.len()).unwrap_or(i64::MAX);
        self.sql
            .exec("UPDATE draw SET drawn = ? WHERE id = 0", vec![drawn.into()])?;
        Ok(())
    }

    /// Keeps `user`, who arrived while the draw ran, to be placed behind it.
    pub fn arrive_late(&self, user: &str) -> Result<()> {
        self.sql.exec(
            "INSERT INTO late (user) VALUES (?) ON CONFLICT (user) DO NOTHING",
            vec![user.into()],
        )?;
        Ok(())
    }

    pub fn is_late(&self, user: &str) -> Result<bool> {
        let query = "SELECT COUNT(*) AS count FROM late WHERE user = ?";
        Ok(self.count(query, vec![user.into()])? > 0)
    }

    pub fn late_arrivals(&self) -> Result<u64> {
        self.count("SELECT COUNT(*) AS count FROM late", Vec::new())
    }

    /// Up to `limit` late arrivals after arrival `after`, in arrival order.
    pub fn late_after(&self, after: i64, limit: u64) -> Result<Vec<(i64, String)>> {
        let rows: Vec<LateRow> = self
            .sql
            .exec(
                "SELECT seq, user FROM late WHERE seq > ? ORDER BY seq LIMIT ?",
                vec![after.into(), sql_int(limit)?.into()],
            )?
            .to_array()?;
        Ok(rows.into_iter().map(|row| (row.seq, row.user)).collect())
    }

    /// `user`, not yet placed, leaves the draw (ranked as `rank`, if the seed is drawn).
    pub fn leave_draw(&self, user: &str, rank: Option<u64>) -> Result<()> {
        self.sql
            .exec("DELETE FROM prequeue WHERE user = ?", vec![user.into()])?;
        self.sql
            .exec("DELETE FROM late WHERE user = ?", vec![user.into()])?;
        if let Some(rank) = rank {
            self.sql.exec(
                "DELETE FROM ranked WHERE rank = ? AND user = ?",
                vec![rank_text(rank).into(), user.into()],
            )?;
        }
        Ok(())
    }

    /// The people of the draw in its order, `limit` of them from place `from`.
    pub fn drawn_people(&self, from: u64, limit: u32) -> Result<Vec<String>> {
        let rows: Vec<UserRow> = self
            .sql
            .exec(
                "SELECT user FROM drawn WHERE place >= ? ORDER BY place LIMIT ?",
                vec![sql_int(from)?.into(), i64::from(limit).into()],
            )?
            .to_array()?;
        Ok(rows.into_iter().map(|row| row.user).collect())
    }
}
