//! Sliding windows kept by a Durable Object: the per-user windows in `UserSession`, the
//! global ones in `GlobalLimiter`. The rule is `rules::sliding_window`; this is its
//! storage.
//!
//! SQLite is the truth, so an object that is evicted and started again forgets nothing
//! and the bound holds across restarts; memory holds the same windows to decide without
//! reading. An admission is one write. Storage stays bounded without an alarm: every L
//! admissions of a key, the ones that have left its window are deleted in one statement,
//! so at most 2L rows per key remain.

use std::cell::RefCell;
use std::collections::HashMap;

use rules::sliding_window::{Decision, Rate, SlidingWindow};
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
    windows: RefCell<HashMap<String, Kept>>,
}

/// A window in memory, and how many rows it has written since its last sweep.
struct Kept {
    window: SlidingWindow,
    unswept: u32,
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
            windows: RefCell::new(HashMap::new()),
        }
    }

    /// Decides one request at `now_ms` and records it when admitted.
    pub fn check(&self, check: &WindowCheck, now_ms: i64) -> Result<WindowAnswer> {
        let rate = Rate {
            limit: check.limit,
            window_ms: check.window_ms,
        };
        let mut windows = self.windows.borrow_mut();
        if windows
            .get(&check.key)
            .is_none_or(|kept| kept.window.rate() != rate)
        {
            let stored = self.stored(&check.key)?;
            let kept = Kept {
                unswept: u32::try_from(stored.len()).unwrap_or(u32::MAX),
                window: SlidingWindow::with_admissions(rate, stored),
            };
            windows.insert(check.key.clone(), kept);
        }
        let kept = windows
            .get_mut(&check.key)
            .ok_or_else(|| worker::Error::RustError("a window just stored is missing".into()))?;
        let window = &mut kept.window;
        let answer = match window.check(now_ms) {
            Decision::Limited { retry_after_ms } => {
                return Ok(WindowAnswer::Limited { retry_after_ms })
            }
            Decision::Admitted {
                remaining,
                reset_ms,
            } => {
                let at_ms = window.latest().unwrap_or(now_ms);
                WindowAnswer::Admitted {
                    remaining,
                    reset_ms,
                    at_ms,
                }
            }
        };
        if let WindowAnswer::Admitted { at_ms, .. } = answer {
            if kept.unswept >= check.limit {
                self.sql.exec(
                    "DELETE FROM rate_admissions WHERE key = ? AND at <= ?",
                    vec![check.key.as_str().into(), (at_ms - check.window_ms).into()],
                )?;
                kept.unswept = 0;
            }
            kept.unswept += 1;
            self.sql.exec(
                "INSERT INTO rate_admissions (key, at) VALUES (?, ?)",
                vec![check.key.as_str().into(), at_ms.into()],
            )?;
        }
        Ok(answer)
    }

    /// Takes back the admission at `at_ms`: a later stage refused the request.
    pub fn release(&self, key: &str, at_ms: i64) -> Result<()> {
        if let Some(kept) = self.windows.borrow_mut().get_mut(key) {
            kept.window.release(at_ms);
        }
        self.sql.exec(
            "DELETE FROM rate_admissions WHERE rowid IN \
             (SELECT rowid FROM rate_admissions WHERE key = ? AND at = ? LIMIT 1)",
            vec![key.into(), at_ms.into()],
        )?;
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
        self.windows
            .borrow_mut()
            .retain(|_, kept| kept.window.latest().is_some_and(|at| at > cutoff_ms));
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
