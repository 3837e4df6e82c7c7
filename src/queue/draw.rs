//! The draw at a drop's opening, in batches. At `opensAt` — the room's alarm, or the
//! first call after it — the room takes a seed from the runtime's CSPRNG and records it;
//! from then on its alarm runs one batch after another, each of at most
//! `QUEUE_DRAW_BATCH` people, so no call holds the room long however many prequeued:
//!
//! 1. **rank** the prequeue, in user order: each user's rank under the seed
//!    (`rules::queue::draw::rank`) needs nobody else's;
//! 2. **place** the ranked in rank order: into the line, behind anyone already in it,
//!    and into the kept list (`storage/draw.rs`);
//! 3. **place who arrived while it ran**, in their order of arrival.
//!
//! Meanwhile whoever is not placed yet is told the draw is under way: the prequeued keep
//! their chance, a newcomer waits behind all of them, and a leave takes either out of it.
//! Each batch is one call's writes, so a batch cut short (the isolate lost) is redone
//! whole by the alarm's retry. Once the draw is done, everyone later joins the line
//! directly, first come first served.

use rules::queue::draw::{self, SEED_BYTES};
use rules::queue::QueueConfig;
use worker::Result;

use super::object::{Unplaced, WaitingRoom};
use super::protocol::{Entered, Placement};
use super::storage::{DrawProgress, DrawStep};
use crate::config::EdgeConfig;

impl WaitingRoom {
    /// The draw's seed and progress, while it runs.
    fn drawing(&self) -> Result<Option<([u8; SEED_BYTES], DrawProgress, i64)>> {
        let running = self.with_drop(|drop| {
            Ok(match (&drop.draw, &drop.progress) {
                (Some(draw), Some(progress)) if progress.step != DrawStep::Done => {
                    Some((draw.seed.clone(), progress.clone(), draw.drawn))
                }
                _ => None,
            })
        })?;
        let Some((seed_hex, progress, drawn)) = running else {
            return Ok(None);
        };
        let mut seed = [0u8; SEED_BYTES];
        hex::decode_to_slice(&seed_hex, &mut seed)
            .map_err(|err| worker::Error::RustError(format!("the stored seed: {err}")))?;
        Ok(Some((seed, progress, drawn)))
    }

    pub(super) fn is_drawing(&self) -> Result<bool> {
        Ok(self.drawing()?.is_some())
    }

    /// Takes the seed and begins the draw: the batches are the alarm's.
    pub(super) fn start_draw(&self, now: i64) -> Result<()> {
        let mut seed = [0u8; SEED_BYTES];
        getrandom::fill(&mut seed).map_err(|err| worker::Error::RustError(err.to_string()))?;
        let seed = hex::encode(seed);
        self.storage.start_draw(&seed, now)?;
        worker::console_log!("the draw began, seed {seed}");
        // Read back as stored: the seed, and the first step.
        *self.drop.borrow_mut() = None;
        Ok(())
    }

    /// One batch of the draw, if it runs: up to `QUEUE_DRAW_BATCH` people ranked or placed.
    pub(super) fn draw_batch(&self, config: QueueConfig, now: i64) -> Result<()> {
        let Some((seed, mut progress, mut drawn)) = self.drawing()? else {
            return Ok(());
        };
        let edge =
            EdgeConfig::of(&self.env).map_err(|err| worker::Error::RustError(err.to_string()))?;
        let mut budget = edge.queue_draw_batch;
        while budget > 0 && progress.step != DrawStep::Done {
            let (handled, next) = match &progress.step {
                DrawStep::Rank { after } => {
                    let users = self
                        .storage
                        .rank_prequeue(after.as_deref(), budget, |user| draw::rank(&seed, user))?;
                    let next = match users.last() {
                        Some(last) if users.len() as u64 == budget => DrawStep::Rank {
                            after: Some(last.clone()),
                        },
                        _ => DrawStep::Place { after: None },
                    };
                    (users.len(), next)
                }
                DrawStep::Place { after } => {
                    let ranked = self.storage.ranked_after(after.as_ref(), budget)?;
                    let users: Vec<String> = ranked.iter().map(|(_, user)| user.clone()).collect();
                    self.place(config, &users, now)?;
                    self.storage.record_placed(drawn, &users)?;
                    drawn += i64::try_from(users.len()).unwrap_or(i64::MAX);
                    let next = match ranked.last() {
                        Some(last) if users.len() as u64 == budget => DrawStep::Place {
                            after: Some(last.clone()),
                        },
                        _ => DrawStep::Late { after: 0 },
                    };
                    (users.len(), next)
                }
                DrawStep::Late { after } => {
                    let late = self.storage.late_after(*after, budget)?;
                    let users: Vec<String> = late.iter().map(|(_, user)| user.clone()).collect();
                    self.place(config, &users, now)?;
                    let next = match late.last() {
                        Some((seq, _)) if users.len() as u64 == budget => {
                            DrawStep::Late { after: *seq }
                        }
                        _ => DrawStep::Done,
                    };
                    (users.len(), next)
                }
                DrawStep::Done => (0, DrawStep::Done),
            };
            budget = budget.saturating_sub(handled as u64);
            progress.step = next;
        }
        progress.batches += 1;
        self.storage.set_draw_progress(&progress)?;
        if progress.step == DrawStep::Done {
            worker::console_log!(
                "the prequeue was drawn: {drawn} people placed in {} batches",
                progress.batches
            );
        }
        self.with_drop(|drop| {
            drop.progress = Some(progress);
            if let Some(draw) = drop.draw.as_mut() {
                draw.drawn = drawn;
            }
            Ok(())
        })?;
        self.changed();
        Ok(())
    }

    /// Enters `users` at the back of the line, in this order (a closed or sold-out line
    /// turns them away, as it would anyone).
    fn place(&self, config: QueueConfig, users: &[String], now: i64) -> Result<()> {
        self.with_line(config, |line| {
            let mut changes = Vec::new();
            let mut entrants = Vec::new();
            for user in users {
                let (ticket, entered) = line.enter(None, now);
                if ticket.is_some() {
                    entrants.push(user.as_str());
                }
                changes.extend(entered);
            }
            self.storage.write(&changes, &entrants, line, now)?;
            Ok(())
        })
    }

    /// The answer to an enter or a poll from someone not in line while the draw runs:
    /// the prequeued wait for their place, and so does a newcomer, behind them.
    pub(super) fn while_drawing(
        &self,
        config: QueueConfig,
        user: &str,
        entering: bool,
        now: i64,
    ) -> Result<Option<Unplaced>> {
        if !self.is_drawing()? || self.storage.seq_of(user)?.is_some() {
            return Ok(None);
        }
        let prequeued = self.storage.is_prequeued(user)?;
        let mut waiting = prequeued || self.storage.is_late(user)?;
        let turning_away =
            self.with_line(config, |line| Ok(line.is_sold_out() || line.is_closed()))?;
        if entering && !waiting && !turning_away {
            self.storage.arrive_late(user)?;
            waiting = true;
        }
        if !waiting {
            return Ok(None);
        }
        let opens_at = self.with_drop(|drop| {
            Ok(drop
                .update
                .as_ref()
                .and_then(|u| u.settings.opens_at)
                .unwrap_or(now))
        })?;
        let mut placement = Placement::drawing(prequeued, opens_at);
        placement.event_name = self.event_name();
        if !entering {
            return Ok(Some(Unplaced::Status(Some(placement))));
        }
        Ok(Some(Unplaced::Entered(Entered {
            placement,
            seq: None,
            room: self.storage.identity()?,
            not_open: None,
        })))
    }

    /// `user` leaves whatever of the draw they wait in.
    pub(super) fn leave_draw(&self, user: &str) -> Result<()> {
        let rank = self.drawing()?.map(|(seed, _, _)| draw::rank(&seed, user));
        self.storage.leave_draw(user, rank)
    }
}
