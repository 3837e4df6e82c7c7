//! A drop an operator defined at run time, in its room: the settings the origin hands it
//! (applied at once, kept, never an older version after a newer), the prequeue before the
//! opening, and the room's report for operators.
//!
//! Before `opensAt`, whoever enters from `prequeueFrom` on is kept in the prequeue —
//! entering twice is one place — and told the opening; before `prequeueFrom` (or with
//! none), nobody is taken (`NOT_OPEN_YET`). At `opensAt` — the room's alarm, or the first
//! call after it — the draw begins (`draw.rs`): the prequeue is placed, in batches, in
//! the order `rules::queue::draw::order` derives from the seed, behind anyone already in
//! line; everyone later joins behind them.
//!
//! A room may have a line before its drop has an opening (an event in `GATED_EVENTS`,
//! or defined first without one). The first update that sets an opening moves that line
//! into the prequeue — places, passes and claims alike — so nobody who came before the
//! opening existed stands ahead of the draw; and no pass is claimed before the opening.
//!
//! The draw keeps its people in their drawn order beside the seed, for operators: anyone
//! with the two checks that the order is `rules::queue::draw::order` of the seed and
//! the list.

use rules::drop::{RoomState, RoomUpdate};
use rules::queue::QueueConfig;
use worker::{Response, Result};

use super::object::{Unplaced, WaitingRoom};
use super::protocol::{Configured, DrawList, Entered, NotOpen, Placement, Report};
use crate::durable_call::reply;

impl WaitingRoom {
    /// The opening, while it is ahead and the prequeue undrawn.
    pub(super) fn opening_ahead(&self) -> Result<Option<i64>> {
        self.with_drop(|drop| {
            Ok(match drop.draw {
                Some(_) => None,
                None => drop.update.as_ref().and_then(|u| u.settings.opens_at),
            })
        })
    }

    pub(super) fn event_name(&self) -> Option<String> {
        self.with_drop(|drop| Ok(drop.update.as_ref().and_then(|u| u.settings.name.clone())))
            .ok()
            .flatten()
    }

    /// Begins the draw once `opensAt` has come.
    pub(super) async fn open_if_due(&self, now: i64) -> Result<()> {
        if self.opening_ahead()?.is_none_or(|opens_at| opens_at > now) {
            return Ok(());
        }
        self.start_draw(now)?;
        self.changed();
        self.keep_alarm().await
    }

    /// The answer to an enter or a poll before the opening, if it is ahead.
    pub(super) fn before_opening(
        &self,
        user: &str,
        entering: bool,
        now: i64,
    ) -> Result<Option<Unplaced>> {
        let Some(opens_at) = self.opening_ahead()? else {
            return Ok(None);
        };
        if self.storage.seq_of(user)?.is_some() {
            return Ok(None);
        }
        let prequeue_from =
            self.with_drop(|drop| Ok(drop.update.as_ref().and_then(|u| u.settings.prequeue_from)))?;
        let mut prequeued = Placement::prequeued(opens_at, now);
        prequeued.event_name = self.event_name();
        if !entering {
            let placement = self.storage.is_prequeued(user)?.then_some(prequeued);
            return Ok(Some(Unplaced::Status(placement)));
        }
        let open_for_prequeue = prequeue_from.is_some_and(|from| from <= now);
        if open_for_prequeue {
            self.storage.prequeue(user, now)?;
        }
        let entered = Entered {
            placement: prequeued,
            seq: None,
            room: self.storage.identity()?,
            not_open: (!open_for_prequeue).then_some(NotOpen {
                opens_at,
                prequeue_from,
            }),
        };
        Ok(Some(Unplaced::Entered(entered)))
    }

    /// Applies `update` unless one as new or newer was: stored, then the line's new
    /// limits, hold and closing. Nobody in line moves.
    pub(super) async fn configure(&self, update: &RoomUpdate, now: i64) -> Result<Response> {
        let (stored, drawn) =
            self.with_drop(|drop| Ok((drop.update.clone(), drop.draw.is_some())))?;
        let stored_opens_at = stored.as_ref().and_then(|u| u.settings.opens_at);
        let refused = |field: &'static str, message: &'static str| {
            reply(&Configured::Refused {
                field: field.to_owned(),
                message: message.to_owned(),
            })
        };
        if stored.as_ref().is_some_and(|s| s.version >= update.version) {
            return reply(&Configured::Stale {
                version: stored.map_or(0, |s| s.version),
            });
        }
        if let Err(err) = update.settings.check(now, stored_opens_at) {
            return refused(err.field, err.message);
        }
        if drawn && update.settings.opens_at != stored_opens_at {
            return refused("opensAt", "the prequeue was drawn already");
        }
        let stored_shards = stored.as_ref().map_or(1, |s| s.settings.shard_count());
        if stored_shards != update.settings.shard_count() && self.has_anyone()? {
            return refused("shards", "fixed once anyone entered the room");
        }
        let was_closed = stored
            .as_ref()
            .is_some_and(|s| s.state == RoomState::Closed);
        if was_closed && update.state != RoomState::Closed {
            return refused("state", "a closed drop stays closed");
        }
        if stored_opens_at.is_none() && update.settings.opens_at.is_some() {
            // The first opening: a line that stood before it is no head start.
            self.storage.line_to_prequeue(now)?;
            self.forget_line();
        }
        self.storage.store_update(update)?;
        self.with_drop(|drop| {
            drop.update = Some(update.clone());
            Ok(())
        })?;
        let config = self.config()?;
        let changes = self.with_line(config, |line| {
            let mut changes = line.configure(config, now);
            changes.extend(line.hold(update.state == RoomState::Paused, now));
            if update.state == RoomState::Closed {
                changes.extend(line.close());
            }
            Ok(changes)
        })?;
        self.persist(&changes, &[], now).await?;
        // A new opening may be the next thing to wake for.
        self.keep_alarm().await?;
        self.open_if_due(now).await?;
        reply(&Configured::Applied(self.report_of(config, now)?))
    }

    /// Whether anyone is in the line or the prequeue.
    fn has_anyone(&self) -> Result<bool> {
        let config = self.config()?;
        let in_line = self.with_line(config, |line| Ok(!line.is_empty()))?;
        Ok(in_line || self.storage.prequeued()? > 0)
    }

    /// The draw for audit: the seed, and `limit` of its people in order from `from`.
    pub(super) fn draw_list(&self, from: u64, limit: u32) -> Result<Response> {
        let draw = self.with_drop(|drop| Ok(drop.draw.clone()))?;
        reply(&DrawList {
            draw_seed: draw.as_ref().map(|d| d.seed.clone()),
            drawn_at: draw.as_ref().map(|d| d.drawn_at),
            drawn: draw.as_ref().map(|d| d.drawn),
            drawing: self.is_drawing()?,
            from,
            people: self.storage.drawn_people(from, limit)?,
        })
    }

    pub(super) fn report(&self, config: QueueConfig, now: i64) -> Result<Response> {
        reply(&self.report_of(config, now)?)
    }

    fn report_of(&self, config: QueueConfig, now: i64) -> Result<Report> {
        let (line, live, issued, sold_out, held, closed, payments_paused_until) =
            self.with_line(config, |line| {
                let live = line.passes_live(now) as u64;
                Ok((
                    line.len() as u64,
                    live,
                    line.issued_last_minute(now) as u64,
                    line.is_sold_out(),
                    line.is_held(),
                    line.is_closed(),
                    line.paused_until(now),
                ))
            })?;
        let (version, opens_at, draw, batches) = self.with_drop(|drop| {
            let update = drop.update.as_ref();
            Ok((
                update.map_or(0, |u| u.version),
                update.and_then(|u| u.settings.opens_at),
                drop.draw.clone(),
                drop.progress.as_ref().map(|progress| progress.batches),
            ))
        })?;
        Ok(Report {
            waiting: line.saturating_sub(live),
            prequeued: self.storage.prequeued()?,
            passes_live: live,
            passes_issued_last_minute: issued,
            admissions_per_minute: self.rate.borrow().per_second().map(|rate| rate * 60.0),
            sold_out,
            paused: held,
            closed,
            payments_paused_until,
            admit_limit: config.admit_limit,
            admit_per_minute: config.admit_per_minute,
            pass_ttl_seconds: (config.pass_ttl_ms / 1_000).unsigned_abs(),
            opens_at,
            draw_seed: draw.as_ref().map(|d| d.seed.clone()),
            drawn_at: draw.as_ref().map(|d| d.drawn_at),
            drawn: draw.as_ref().map(|d| d.drawn),
            drawing: self.is_drawing()?,
            draw_batches: batches,
            late_arrivals: self.storage.late_arrivals()?,
            version,
        })
    }
}
