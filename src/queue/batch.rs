//! A batch from one of the event's arrival shards (`crate::arrivals`): the head takes
//! its leavers out of the line, then answers each of its newcomers as a lone enter would
//! be — prequeued before the opening, waiting while the draw runs, else numbered behind
//! everyone in the batch's order (`rules::queue::arrivals::enter_batch`), whoever holds a
//! number keeping it. So a batch sent again is answered with the numbers it got. A batch
//! it can never take — past `MAX_BATCH` — it refuses for good (422), and the shard gives
//! it up rather than send it again.

use rules::queue::arrivals::{enter_batch, BatchNumbered, MAX_BATCH};
use rules::queue::QueueConfig;
use worker::{Response, Result};

use super::object::{Unplaced, WaitingRoom};
use super::protocol::{Batched, Entered};
use crate::durable_call::{refuse_in_body, reply_in_body};

impl WaitingRoom {
    pub(super) async fn batch(
        &self,
        config: QueueConfig,
        users: &[String],
        left: &[u64],
        now: i64,
    ) -> Result<Response> {
        if users.len() + left.len() > MAX_BATCH {
            let size = users.len() + left.len();
            return refuse_in_body(&format!("a batch of {size}, past {MAX_BATCH}"));
        }
        let changes = self.with_line(config, |line| {
            let mut changes = line.expire(now);
            changes.extend(enter_batch(line, &[], left, now).changes);
            Ok(changes)
        })?;
        self.persist(&changes, &[], now).await?;
        let mut entered = Vec::with_capacity(users.len());
        let mut numbered = Vec::new();
        let mut held = Vec::new();
        for user in users {
            let early = match self.before_opening(user, true, now)? {
                Some(answer) => Some(answer),
                None => self.while_drawing(config, user, true, now)?,
            };
            match early {
                Some(Unplaced::Entered(answer)) => entered.push(Some(answer)),
                Some(Unplaced::Status(_)) => return refuse_in_body("an enter answered as a poll"),
                None => {
                    held.push(self.storage.seq_of(user)?);
                    numbered.push((entered.len(), user.as_str()));
                    entered.push(None);
                }
            }
        }
        let (tickets, changes) = self.with_line(config, |line| {
            let BatchNumbered { tickets, changes } = enter_batch(line, &held, &[], now);
            Ok((tickets, changes))
        })?;
        let entrants: Vec<&str> = numbered
            .iter()
            .zip(&held)
            .zip(&tickets)
            .filter(|((_, held), ticket)| held.is_none() && ticket.is_some())
            .map(|(((_, user), _), _)| *user)
            .collect();
        self.persist(&changes, &entrants, now).await?;
        let room = self.storage.identity()?;
        for ((at, _), ticket) in numbered.iter().zip(&tickets) {
            let placement = self.with_line(config, |line| {
                Ok(self.placement(ticket.as_ref(), config, line, now))
            })?;
            entered[*at] = Some(Entered {
                placement,
                seq: ticket.as_ref().map(|ticket| ticket.seq),
                room,
                not_open: None,
            });
        }
        reply_in_body(&Batched {
            entered: entered.into_iter().flatten().collect(),
        })
    }
}
