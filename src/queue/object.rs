//! The `WaitingRoom` Durable Object (class name in `wrangler.toml`): one per event.
//!
//! SQLite is the truth (`storage.rs`): every change the queue rules report is written
//! before the answer leaves. The in-memory index (`rules::queue::EventQueue`, order
//! statistics in O(log n)) is rebuilt from the table when the object starts, so a poll
//! never scans the line. An alarm set at the earliest pass expiry removes users whose
//! pass ran out unused and admits the next — whether or not anyone polls. A pass backs
//! one payment at a time (claims): two concurrent confirms cannot both spend it. Once
//! the event sells out, the restored line turns newcomers away. While the origin says
//! payments are paused (its PG breaker is open), the room holds: no new pass, live passes
//! extended, confirms refused. Its line is published as a snapshot
//! (`rules::queue::snapshot`), rebuilt only after a change, from which the Worker answers
//! ticket holders' polls without calling the room. A drop an operator defined at run
//! time (`opening.rs`) brings its own limits, a prequeue drawn at its opening, and holds
//! and closes.

use std::cell::{Cell, RefCell};

use rules::paused::MAX_PAUSE_MS;
use rules::queue::eta::AdmissionRate;
use rules::queue::snapshot::{Snapshot, SnapshotOf};
use rules::queue::{Change, EventQueue, QueueConfig, Ticket};
use worker::{durable_object, DurableObject, Env, Request, Response, Result, State};

use super::protocol::{Entered, LineState, PassClaim, Placement, RoomRequest};
use super::storage::{DropState, RoomStorage};
use crate::alarm::Alarm;
use crate::clock::now_ms;
use crate::config::EdgeConfig;
use crate::durable_call::{is_call_in_body, read_call, read_call_in_body, reply};

/// An arrival number nobody holds: what the line is asked about for someone not in it.
const NOBODY: u64 = u64::MAX;

/// What a room answers someone it does not number yet: before the opening, or while the
/// draw runs.
pub(super) enum Unplaced {
    Entered(Entered),
    Status(Option<Placement>),
}

impl Unplaced {
    pub(super) fn reply(&self) -> Result<Response> {
        match self {
            Unplaced::Entered(entered) => reply(entered),
            Unplaced::Status(placement) => reply(placement),
        }
    }
}

#[durable_object]
pub struct WaitingRoom {
    state: State,
    /// Its alarm's time, kept in memory.
    alarm: Alarm,
    pub(super) env: Env,
    pub(super) storage: RoomStorage,
    /// Built from storage on the first call after the object starts.
    line: RefCell<Option<EventQueue>>,
    pub(super) rate: RefCell<AdmissionRate>,
    /// Grows with every change written: the snapshot's version.
    version: Cell<u64>,
    /// The latest snapshot, while no change has been written since.
    snapshot: RefCell<Option<Snapshot>>,
    /// The drop's settings and draw, read from storage on the first call.
    pub(super) drop: RefCell<Option<DropState>>,
}

impl DurableObject for WaitingRoom {
    fn new(state: State, env: Env) -> Self {
        let storage = RoomStorage::new(state.storage().sql());
        Self {
            state,
            alarm: Alarm::new(),
            env,
            storage,
            line: RefCell::new(None),
            rate: RefCell::new(AdmissionRate::new()),
            version: Cell::new(0),
            snapshot: RefCell::new(None),
            drop: RefCell::new(None),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let request: RoomRequest = match is_call_in_body(&req) {
            true => read_call_in_body(&mut req).await?,
            false => read_call(&req)?,
        };
        let now = now_ms();
        let config = self.config()?;
        self.open_if_due(now).await?;
        match &request {
            RoomRequest::Snapshot => return self.snapshot(config, now).await,
            RoomRequest::Configure { update } => return self.configure(update, now).await,
            RoomRequest::Report => return self.report(config, now),
            RoomRequest::DrawList { from, limit } => return self.draw_list(*from, *limit),
            RoomRequest::Batch { users, left } => {
                return self.batch(config, users, left, now).await
            }
            RoomRequest::Enter { user } | RoomRequest::Status { user } => {
                let entering = matches!(request, RoomRequest::Enter { .. });
                if let Some(answer) = self.before_opening(user, entering, now)? {
                    return answer.reply();
                }
                if let Some(answer) = self.while_drawing(config, user, entering, now)? {
                    return answer.reply();
                }
            }
            _ => {}
        }
        let entrant = match &request {
            RoomRequest::Enter { user } => Some(user.clone()),
            _ => None,
        };
        let (response, changes) = self.with_line(config, |line| {
            // Passes that ran out are gone before anyone is answered, even if the alarm
            // has not fired yet.
            let mut changes = line.expire(now);
            let (response, more) = self.answer(request, line, config, now)?;
            changes.extend(more);
            Ok((response, changes))
        })?;
        let entrant = entrant.as_deref();
        self.persist(&changes, entrant.as_slice(), now).await?;
        response
    }

    async fn alarm(&self) -> Result<Response> {
        self.alarm.fired();
        let now = now_ms();
        let config = self.config()?;
        self.open_if_due(now).await?;
        self.draw_batch(config, now)?;
        let changes = self.with_line(config, |line| Ok(line.expire(now)))?;
        self.persist(&changes, &[], now).await?;
        // A fired alarm is spent: it is set again for the next pass even when nothing
        // expired (the pass it was set for left early), or the chain would stop until
        // someone polls.
        self.keep_alarm().await?;
        Response::empty()
    }
}

impl WaitingRoom {
    /// Runs `f` on the line, restored from storage first if the object just started.
    pub(super) fn with_line<T>(
        &self,
        config: QueueConfig,
        f: impl FnOnce(&mut EventQueue) -> Result<T>,
    ) -> Result<T> {
        let mut guard = self.line.borrow_mut();
        let line = match guard.as_mut() {
            Some(line) => line,
            None => guard.insert(self.storage.restore(config)?),
        };
        f(line)
    }

    /// Drops the line from memory: it is restored from storage on the next call.
    pub(super) fn forget_line(&self) {
        *self.line.borrow_mut() = None;
        self.changed();
    }

    /// One call's answer, and the changes it made.
    fn answer(
        &self,
        request: RoomRequest,
        line: &mut EventQueue,
        config: QueueConfig,
        now: i64,
    ) -> Result<(Result<Response>, Vec<Change>)> {
        let done = || Response::empty().map(|r| r.with_status(204));
        // Who holds which arrival number is the storage's to say; nobody holds NOBODY.
        let seq_of = |user: &str| self.storage.seq_of(user);
        Ok(match request {
            RoomRequest::Enter { user } => {
                let (ticket, changes) = line.enter(seq_of(&user)?, now);
                let entered = Entered {
                    placement: self.placement(ticket.as_ref(), config, line, now),
                    seq: ticket.map(|ticket| ticket.seq),
                    room: self.storage.identity()?,
                    not_open: None,
                };
                (reply(&entered), changes)
            }
            RoomRequest::Status { user } => {
                let (ticket, changes) = line.status(seq_of(&user)?.unwrap_or(NOBODY), now);
                let placement =
                    ticket.map(|ticket| self.placement(Some(&ticket), config, line, now));
                (reply(&placement), changes)
            }
            RoomRequest::Leave { user } | RoomRequest::Consume { user } => {
                self.leave_draw(&user)?;
                (done(), line.leave(seq_of(&user)?.unwrap_or(NOBODY), now))
            }
            RoomRequest::ClaimPass { user, order_id } => {
                // A line that stood before the drop had an opening holds no valid pass.
                let claim = if let Some(opens_at) = self.opening_ahead()? {
                    PassClaim::NotOpen { opens_at }
                } else if let Some(until) = line.paused_until(now) {
                    PassClaim::Paused { until }
                } else if line.has_live_pass(seq_of(&user)?.unwrap_or(NOBODY), now) {
                    self.storage.claim(&user, &order_id)?
                } else {
                    PassClaim::NoPass
                };
                (reply(&claim), Vec::new())
            }
            RoomRequest::ReleaseClaim { user, order_id } => {
                self.storage.release(&user, &order_id)?;
                (done(), Vec::new())
            }
            RoomRequest::UntieClaim { user, order_id } => {
                self.storage.untie(&user, &order_id)?;
                (done(), Vec::new())
            }
            RoomRequest::MarkSoldOut => (done(), line.mark_sold_out()),
            RoomRequest::PausePayments { for_ms } => {
                let for_ms = i64::try_from(for_ms.min(MAX_PAUSE_MS)).unwrap_or(0);
                (done(), line.pause(now, now.saturating_add(for_ms)))
            }
            // Answered before the line is asked (`fetch`).
            RoomRequest::Snapshot
            | RoomRequest::Configure { .. }
            | RoomRequest::Report
            | RoomRequest::DrawList { .. }
            | RoomRequest::Batch { .. } => (
                Err(worker::Error::RustError("answered apart".into())),
                Vec::new(),
            ),
        })
    }

    /// The line's snapshot as of `now`, encoded: rebuilt when a change was written since
    /// the last one, or the pause it shows has ended.
    pub(super) async fn snapshot(&self, config: QueueConfig, now: i64) -> Result<Response> {
        let changes = self.with_line(config, |line| Ok(line.expire(now)))?;
        self.persist(&changes, &[], now).await?;
        let mut cached = self.snapshot.borrow_mut();
        let stale = cached.as_ref().is_none_or(|snapshot| {
            snapshot.version != self.version.get()
                || snapshot.paused_until.is_some_and(|until| until <= now)
        });
        if stale {
            let of = SnapshotOf {
                room: self.storage.identity()?,
                version: self.version.get(),
                as_of: now,
                rate_per_second: self.rate.borrow().per_second(),
            };
            *cached = Some(self.with_line(config, |line| Ok(line.snapshot(of)))?);
        }
        let snapshot = cached.as_mut().map(|snapshot| {
            // Nothing changed since it was built: it is exact now too.
            snapshot.as_of = now;
            snapshot.encode()
        });
        Response::from_bytes(snapshot.unwrap_or_default())
    }

    /// The line's limits: the drop's settings, else the edge's defaults.
    pub(super) fn config(&self) -> Result<QueueConfig> {
        let config =
            EdgeConfig::of(&self.env).map_err(|err| worker::Error::RustError(err.to_string()))?;
        let settings =
            self.with_drop(|drop| Ok(drop.update.as_ref().map(|u| u.settings.clone())))?;
        let settings = settings.unwrap_or_default();
        Ok(QueueConfig {
            admit_limit: settings.admit_limit.unwrap_or(config.queue_admit_limit),
            pass_ttl_ms: settings
                .pass_ttl_seconds
                .map_or(config.queue_pass_ttl_secs, i64::from)
                * 1000,
            admit_per_minute: settings.admit_per_minute,
        })
    }

    /// Runs `f` on the drop's state, read from storage first if the object just started.
    pub(super) fn with_drop<T>(&self, f: impl FnOnce(&mut DropState) -> Result<T>) -> Result<T> {
        let mut guard = self.drop.borrow_mut();
        let drop = match guard.as_mut() {
            Some(drop) => drop,
            None => guard.insert(self.storage.drop_state()?),
        };
        f(drop)
    }

    /// The answer for `ticket`, or for a newcomer turned away from a sold-out line
    /// (`None`: position 0, not admitted), at `now`.
    pub(super) fn placement(
        &self,
        ticket: Option<&Ticket>,
        config: QueueConfig,
        line: &EventQueue,
        now: i64,
    ) -> Placement {
        let (position, admitted, pass_expires_at) = ticket.map_or((0, false, None), |ticket| {
            (ticket.position, ticket.admitted, ticket.pass_expires_at)
        });
        let state = LineState {
            admit_limit: config.admit_limit,
            sold_out: line.is_sold_out(),
            paused_until: line.paused_until(now),
            held: line.is_held(),
            closed: line.is_closed(),
            rate_per_second: self.rate.borrow().per_second(),
        };
        let mut placement = Placement::of(position, admitted, pass_expires_at, state, now);
        placement.event_name = self.event_name();
        placement
    }

    /// Writes `changes` (`entrants` took the arrival numbers of the newcomers among them,
    /// in order), feeds the admission rate, and keeps the alarm at the earliest pass
    /// expiry.
    pub(super) async fn persist(
        &self,
        changes: &[Change],
        entrants: &[&str],
        now: i64,
    ) -> Result<()> {
        // Only a change can move the earliest expiry: a plain poll touches no storage.
        if changes.is_empty() {
            return Ok(());
        }
        let issued = {
            let line = self.line.borrow();
            let line = line
                .as_ref()
                .ok_or_else(|| worker::Error::RustError("changes of no line".into()))?;
            self.storage.write(changes, entrants, line, now)?
        };
        self.changed();
        if changes.iter().any(|c| matches!(c, Change::Removed { .. })) && issued > 0 {
            self.rate.borrow_mut().record(now, issued);
        }
        self.keep_alarm().await
    }

    /// A change was written: the snapshot is to be rebuilt.
    pub(super) fn changed(&self) {
        self.version.set(self.version.get() + 1);
    }

    /// Keeps the alarm at the earliest pass expiry, the moment passes held back may flow,
    /// or the drop's opening, whichever is first — and at once while the draw runs.
    pub(super) async fn keep_alarm(&self) -> Result<()> {
        let now = now_ms();
        let wake = self
            .line
            .borrow()
            .as_ref()
            .and_then(|line| line.next_wake(now));
        let draw = if self.is_drawing()? {
            Some(now)
        } else {
            self.opening_ahead()?
        };
        let next = match (wake, draw) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match next {
            Some(at) => self.alarm.no_later_than(&self.state.storage(), at).await,
            None => Ok(()),
        }
    }
}
