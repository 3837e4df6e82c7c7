//! Sliding windows kept by a Durable Object: the per-user windows in `UserSession`, the
//! global ones in `GlobalLimiter`. The rule is `rules::sliding_window`; which window
//! lives where is `rules::rate_windows`; this is its storage.
//!
//! A window of at most `rules::rate_windows::IN_MEMORY_UP_TO_MS` (the routes' one-second
//! windows) lives in the object's memory only: admitting costs no durable write, and a
//! restart forgets at most one window's admissions. A longer one is in SQLite too, one row
//! an admission, so an object evicted and started again forgets nothing of it. Storage
//! stays bounded without an alarm: every L admissions of a key, the ones that have left
//! its window are deleted in one statement, so at most 2L rows per key remain.

use std::cell::RefCell;

use rules::rate_windows::{self, Checked};
use rules::sliding_window::{Decision, Rate};
use serde::{Deserialize, Serialize};
use worker::{Result, SqlStorage};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS rate_admissions (
    key TEXT    NOT NULL,
    at  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS rate_admissions_by_key ON rate_admissions (key, at);
";

/// A request to be counted against the window `key` under `limit` per `window_ms`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowCheck {
    pub key: String,
    pub limit: u32,
    pub window_ms: i64,
}

impl WindowCheck {
    fn rate(&self) -> Rate {
        Rate {
            limit: self.limit,
            window_ms: self.window_ms,
        }
    }

    /// Whether its window is stored, not in memory only: what it admits is written.
    pub fn is_stored(&self) -> bool {
        !rate_windows::in_memory(self.rate())
    }
}

/// The window's decision, with what the `RateLimit` headers and a later release need.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(
    tag = "decision",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum WindowAnswer {
    Admitted {
        remaining: u32,
        reset_ms: i64,
        at_ms: i64,
    },
    Limited {
        retry_after_ms: i64,
    },
}

#[derive(Deserialize)]
struct Admission {
    at: i64,
}

pub struct RateWindows {
    sql: SqlStorage,
    windows: RefCell<rate_windows::RateWindows>,
}

impl RateWindows {
    /// Windows in `sql`, creating their table when absent. A failure here is logged;
    /// every later check then fails too, and callers see the object as unavailable.
    pub fn new(sql: SqlStorage) -> Self {
        if let Err(err) = sql.exec(SCHEMA, None) {
            worker::console_error!("rate windows schema: {err}");
        }
        Self {
            sql,
            windows: RefCell::new(rate_windows::RateWindows::new()),
        }
    }

    /// Decides one request at `now_ms` and records it when admitted.
    pub fn check(&self, check: &WindowCheck, now_ms: i64) -> Result<WindowAnswer> {
        let rate = check.rate();
        let Checked {
            decision,
            at_ms,
            writes,
        } = self
            .windows
            .borrow_mut()
            .check(&check.key, rate, now_ms, || self.stored(&check.key))?;
        if let Some(cutoff) = writes.sweep_at_or_before {
            self.sql.exec(
                "DELETE FROM rate_admissions WHERE key = ? AND at <= ?",
                vec![check.key.as_str().into(), cutoff.into()],
            )?;
        }
        if let Some(at) = writes.insert_at {
            self.sql.exec(
                "INSERT INTO rate_admissions (key, at) VALUES (?, ?)",
                vec![check.key.as_str().into(), at.into()],
            )?;
        }
        Ok(match decision {
            Decision::Limited { retry_after_ms } => WindowAnswer::Limited { retry_after_ms },
            Decision::Admitted {
                remaining,
                reset_ms,
            } => WindowAnswer::Admitted {
                remaining,
                reset_ms,
                at_ms: at_ms.unwrap_or(now_ms),
            },
        })
    }

    /// Takes back the admission at `at_ms`: a later stage refused the request.
    pub fn release(&self, key: &str, at_ms: i64) -> Result<()> {
        if self.windows.borrow_mut().release(key, at_ms) {
            self.sql.exec(
                "DELETE FROM rate_admissions WHERE rowid IN \
                 (SELECT rowid FROM rate_admissions WHERE key = ? AND at = ? LIMIT 1)",
                vec![key.into(), at_ms.into()],
            )?;
        }
        Ok(())
    }

    /// Forgets every admission at or before `cutoff_ms` — once no window can still hold
    /// it — and the windows left with none, so keys that stopped being used (a login's
    /// refresh window, long after its last refresh) leave storage and memory.
    pub fn forget_before(&self, cutoff_ms: i64) -> Result<()> {
        self.sql.exec(
            "DELETE FROM rate_admissions WHERE at <= ?",
            vec![cutoff_ms.into()],
        )?;
        self.windows.borrow_mut().forget_before(cutoff_ms);
        Ok(())
    }

    /// Whether no admission is stored at all.
    pub fn is_empty(&self) -> Result<bool> {
        let rows: Vec<Admission> = self
            .sql
            .exec("SELECT at FROM rate_admissions LIMIT 1", None)?
            .to_array()?;
        Ok(rows.is_empty())
    }

    fn stored(&self, key: &str) -> Result<Vec<i64>> {
        let rows: Vec<Admission> = self
            .sql
            .exec(
                "SELECT at FROM rate_admissions WHERE key = ? ORDER BY at",
                vec![key.into()],
            )?
            .to_array()?;
        Ok(rows.into_iter().map(|row| row.at).collect())
    }
}
