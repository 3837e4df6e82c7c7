//! An object lost mid-drop and back: a shard loses what it gathered in memory — every
//! request waiting at it fails, and its client sends it again — and keeps what it
//! stored; the head answers nobody while it is down.

use std::collections::HashSet;

use super::{Ev, Restart, Sim, CLIENT_RETRY_MS};

impl Sim {
    pub(super) fn down(&mut self, now: i64) {
        match self.scenario.restart {
            Some(Restart::Shard { shard, .. }) => {
                self.shard_down = Some(shard);
                self.batchers[shard as usize].restart();
                self.epoch[shard as usize] += 1;
                self.in_flight[shard as usize] = false;
                // Every request waiting at the lost shard failed: its client sends it again.
                let waiting: HashSet<u32> = self.unanswered[shard as usize].drain().collect();
                for user in &waiting {
                    self.at(now + CLIENT_RETRY_MS, Ev::Arrive(*user));
                }
                self.out.affected = waiting.len() as u64;
                self.lost_at = Some((now, waiting));
            }
            Some(Restart::Head { .. }) => {
                self.head_down = true;
                let waiting: HashSet<u32> = self.unanswered.iter().flatten().copied().collect();
                self.out.affected = waiting.len() as u64;
                self.lost_at = Some((now, waiting));
            }
            None => {}
        }
    }

    pub(super) fn up(&mut self, now: i64) {
        if let Some(shard) = self.shard_down.take() {
            let stored = self.stored_leaves[shard as usize].clone();
            for seq in stored {
                self.batchers[shard as usize].leave(seq, now);
            }
            self.schedule_flush(shard);
            self.at(now, Ev::Flush(shard));
        }
        self.head_down = false;
    }
}
