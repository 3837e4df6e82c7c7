//! The `WaitingRoom` Durable Object (class name in `wrangler.toml`): one per event.
//!
//! SQLite is the truth: every change the queue rules report is written before the
//! answer leaves. The in-memory index (`rules::queue::EventQueue`, order statistics in
//! O(log n)) is rebuilt from the table when the object starts, so a poll never scans
//! the line. An alarm set at the earliest pass expiry removes users whose pass ran out
//! unused and admits the next — whether or not anyone polls. A pass backs one payment
//! at a time (`claims`): two concurrent confirms cannot both spend it. Once the event
//! sells out, a row in `sold_out` says so, and the restored line turns newcomers away.
//! While the origin says payments are paused (its PG breaker is open), the room holds:
//! no new pass, live passes extended, confirms refused (`paused`, `rules::queue`).

use std::cell::RefCell;

use rules::paused::{self, MAX_PAUSE_MS};
use rules::queue::eta::{advice, AdmissionRate};
use rules::queue::{Change, EventQueue, QueueConfig, StoredEntry, Ticket};
use serde::Deserialize;
use worker::{durable_object, DurableObject, Env, Request, Response, Result, SqlStorage, State};

use super::protocol::{PassClaim, Placement, RoomRequest};
use crate::alarm;
use crate::clock::now_ms;
use crate::config::EdgeConfig;
use crate::durable_call::{read_call, reply};

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
";

#[durable_object]
pub struct WaitingRoom {
    state: State,
    env: Env,
    sql: SqlStorage,
    /// Built from storage on the first call after the object starts.
    line: RefCell<Option<EventQueue>>,
    rate: RefCell<AdmissionRate>,
}

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

impl DurableObject for WaitingRoom {
    fn new(state: State, env: Env) -> Self {
        let sql = state.storage().sql();
        if let Err(err) = sql.exec(SCHEMA, None) {
            worker::console_error!("waiting room schema: {err}");
        }
        Self {
            state,
            env,
            sql,
            line: RefCell::new(None),
            rate: RefCell::new(AdmissionRate::new()),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let request: RoomRequest = read_call(&req)?;
        let now = now_ms();
        let config = self.config()?;
        let (response, changes) = {
            let mut guard = self.line.borrow_mut();
            let line = match guard.as_mut() {
                Some(line) => line,
                None => guard.insert(self.restore(config)?),
            };
            // Passes that ran out are gone before anyone is answered, even if the alarm
            // has not fired yet.
            let mut changes = line.expire(now);
            let (response, more) = match request {
                RoomRequest::Enter { user } => {
                    let (ticket, changes) = line.enter(&user, now);
                    let placement = self.placement(ticket.as_ref(), config, line, now);
                    (reply(&placement), changes)
                }
                RoomRequest::Status { user } => {
                    let (ticket, changes) = line.status(&user, now);
                    let placement =
                        ticket.map(|ticket| self.placement(Some(&ticket), config, line, now));
                    (reply(&placement), changes)
                }
                RoomRequest::Leave { user } | RoomRequest::Consume { user } => (
                    Response::empty().map(|r| r.with_status(204)),
                    line.leave(&user, now),
                ),
                RoomRequest::ClaimPass { user, order_id } => {
                    let claim = if let Some(until) = line.paused_until(now) {
                        PassClaim::Paused { until }
                    } else if line.has_live_pass(&user, now) {
                        self.claim(&user, &order_id)?
                    } else {
                        PassClaim::NoPass
                    };
                    (reply(&claim), Vec::new())
                }
                RoomRequest::ReleaseClaim { user, order_id } => {
                    self.sql.exec(
                        "DELETE FROM claims WHERE user = ? AND order_id = ?",
                        vec![user.into(), order_id.into()],
                    )?;
                    (Response::empty().map(|r| r.with_status(204)), Vec::new())
                }
                RoomRequest::MarkSoldOut => (
                    Response::empty().map(|r| r.with_status(204)),
                    line.mark_sold_out(),
                ),
                RoomRequest::PausePayments { for_ms } => {
                    let for_ms = i64::try_from(for_ms.min(MAX_PAUSE_MS)).unwrap_or(0);
                    (
                        Response::empty().map(|r| r.with_status(204)),
                        line.pause(now, now.saturating_add(for_ms)),
                    )
                }
            };
            changes.extend(more);
            (response, changes)
        };
        self.persist(&changes, now).await?;
        response
    }

    async fn alarm(&self) -> Result<Response> {
        let now = now_ms();
        let config = self.config()?;
        let changes = {
            let mut guard = self.line.borrow_mut();
            let line = match guard.as_mut() {
                Some(line) => line,
                None => guard.insert(self.restore(config)?),
            };
            line.expire(now)
        };
        self.persist(&changes, now).await?;
        // A fired alarm is spent: it is set again for the next pass even when nothing
        // expired (the pass it was set for left early), or the chain would stop until
        // someone polls.
        self.keep_alarm().await?;
        Response::empty()
    }
}

#[derive(Deserialize)]
struct ClaimRow {
    order_id: String,
}

impl WaitingRoom {
    /// Gives a live pass to `order_id` unless another order holds it. Claims are read
    /// from storage, which is small (one row per admitted user at most).
    fn claim(&self, user: &str, order_id: &str) -> Result<PassClaim> {
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

    fn config(&self) -> Result<QueueConfig> {
        let config =
            EdgeConfig::of(&self.env).map_err(|err| worker::Error::RustError(err.to_string()))?;
        Ok(QueueConfig {
            admit_limit: config.queue_admit_limit,
            pass_ttl_ms: config.queue_pass_ttl_secs * 1000,
        })
    }

    fn restore(&self, config: QueueConfig) -> Result<EventQueue> {
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

    /// The answer for `ticket`, or for a newcomer turned away from a sold-out line
    /// (`None`: position 0, not admitted), at `now`.
    fn placement(
        &self,
        ticket: Option<&Ticket>,
        config: QueueConfig,
        line: &EventQueue,
        now: i64,
    ) -> Placement {
        let sold_out = line.is_sold_out();
        let paused_until = line.paused_until(now);
        let (position, admitted, pass_expires_at) = ticket.map_or((0, false, None), |ticket| {
            (ticket.position, ticket.admitted, ticket.pass_expires_at)
        });
        let advice = advice(
            position,
            config.admit_limit,
            admitted,
            sold_out,
            self.rate.borrow().per_second(),
        );
        // While paused, the next news is the pause's end.
        let poll_after_seconds = paused_until.map_or(advice.poll_after_seconds, |until| {
            paused::retry_after_seconds(until - now).min(advice.poll_after_seconds.max(1))
        });
        Placement {
            position,
            admitted,
            pass_expires_at,
            eta_seconds: advice.eta_seconds,
            poll_after_seconds,
            sold_out,
            paused: paused_until.is_some(),
            paused_until,
        }
    }

    /// Writes `changes` in order, feeds the admission rate, and keeps the alarm at the
    /// earliest pass expiry.
    async fn persist(&self, changes: &[Change], now: i64) -> Result<()> {
        let mut freed_slots = 0;
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
                    freed_slots += 1;
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
                    self.sql.exec(
                        "DELETE FROM claims WHERE user = ?",
                        vec![user.as_str().into()],
                    )?;
                }
                Change::SoldOut => {
                    self.sql.exec(
                        "INSERT INTO sold_out (id) VALUES (0) ON CONFLICT (id) DO NOTHING",
                        None,
                    )?;
                }
            }
        }
        if changes.iter().any(|c| matches!(c, Change::Removed { .. })) && freed_slots > 0 {
            self.rate.borrow_mut().record(now, freed_slots);
        }
        // Only a change can move the earliest expiry: a plain poll touches no storage.
        if changes.is_empty() {
            return Ok(());
        }
        self.keep_alarm().await
    }

    fn set_pass(&self, user: &str, expires_at: i64) -> Result<()> {
        self.sql.exec(
            "UPDATE entries SET pass_expires_at = ? WHERE user = ?",
            vec![expires_at.into(), user.into()],
        )?;
        Ok(())
    }

    /// Keeps the alarm at the earliest pass expiry, or the end of a pause that holds
    /// passes back.
    async fn keep_alarm(&self) -> Result<()> {
        let next = self.line.borrow().as_ref().and_then(EventQueue::next_wake);
        match next {
            Some(at) => alarm::no_later_than(&self.state.storage(), at).await,
            None => Ok(()),
        }
    }
}
