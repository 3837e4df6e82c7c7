//! The native simulation of a sharded drop: the rules' own state machines — each
//! shard's `Batcher`, the head's `enter_batch` on its `EventQueue` — driven in one process on
//! simulated time, at the full rate, with every request each object receives counted
//! by the second. What the simulation assumes of the platform (a call's time, a
//! restart's, a client's retry) is in the constants; what it checks it checks against
//! a reference kept apart from the rules: a count of who is in line, and who holds
//! which number.

mod reference;
mod restart;
mod scenario;
mod timeline;

use std::collections::{HashMap, HashSet};

use rules::queue::arrivals::{
    enter_batch, flush_interval_ms, shard_of, Batch, BatchNumbered, Batcher,
};
use rules::queue::{Change, EventQueue, QueueConfig};

use reference::{max_inversion, Reference};
pub use scenario::*;
use timeline::{SplitMix, Timeline};

const KEY: &[u8] = b"the edge's ticket key";
const EVENT: &str = "drop";

const CONFIG: QueueConfig = QueueConfig {
    admit_limit: 100,
    pass_ttl_ms: 600_000,
    admit_per_minute: None,
};

#[derive(Debug, Clone)]
enum Ev {
    Arrive(u32),
    Flush(u32),
    Answer { shard: u32, batch: u64, epoch: u32 },
    Leave(u32),
    Claim(u32),
    Down,
    Up,
}

struct Sim {
    scenario: Scenario,
    timeline: Timeline<Ev>,
    shard_of_user: Vec<u32>,
    arrived_at: Vec<i64>,
    seq_of_user: Vec<Option<u64>>,
    user_of_seq: HashMap<u64, u32>,
    batchers: Vec<Batcher>,
    in_flight: Vec<bool>,
    flush_at: Vec<Option<i64>>,
    epoch: Vec<u32>,
    /// Leaves a shard stored and the head has not taken yet.
    stored_leaves: Vec<Vec<u64>>,
    unanswered: Vec<HashSet<u32>>,
    line: EventQueue,
    reference: Reference,
    shard_down: Option<u32>,
    head_down: bool,
    lost_at: Option<(i64, HashSet<u32>)>,
    random: SplitMix,
    out: Outcome,
}

pub fn run(scenario: Scenario) -> Outcome {
    let mut sim = Sim::new(scenario);
    sim.go();
    sim.finish()
}

impl Sim {
    fn new(scenario: Scenario) -> Self {
        let n = scenario.shards as usize;
        let users = scenario.arrivals as usize;
        // One shard is one room, today's: every enter numbered as it comes.
        let interval_ms = match scenario.shards {
            1 => 0,
            shards => flush_interval_ms(shards),
        };
        let seconds = (scenario.over_ms / 1000 + 120) as usize;
        let mut sim = Sim {
            scenario,
            timeline: Timeline::new(),
            shard_of_user: (0..scenario.arrivals)
                .map(|u| shard_of(KEY, EVENT, &format!("u{u}"), scenario.shards))
                .collect(),
            arrived_at: vec![0; users],
            seq_of_user: vec![None; users],
            user_of_seq: HashMap::with_capacity(users),
            batchers: (0..n)
                .map(|_| Batcher::restore(interval_ms, 0, None))
                .collect(),
            in_flight: vec![false; n],
            flush_at: vec![None; n],
            epoch: vec![0; n],
            stored_leaves: vec![Vec::new(); n],
            unanswered: vec![HashSet::new(); n],
            line: EventQueue::new(CONFIG),
            reference: Reference::default(),
            shard_down: None,
            head_down: false,
            lost_at: None,
            random: SplitMix(11),
            out: Outcome {
                shard_rps: vec![vec![0; seconds]; n],
                head_rps: vec![0; seconds],
                shard_enters: vec![0; n],
                ..Outcome::default()
            },
        };
        let mut random = SplitMix(7);
        for user in 0..scenario.arrivals {
            let at = random.below(scenario.over_ms as u64) as i64;
            sim.arrived_at[user as usize] = at;
            sim.at(at, Ev::Arrive(user));
            if random.below(50) == 0 {
                let after = 5_000 + random.below(45_000) as i64;
                sim.at(at + after, Ev::Leave(user));
            }
        }
        if let Some(restart) = scenario.restart {
            let at = match restart {
                Restart::Shard { at_ms, .. } | Restart::Head { at_ms } => at_ms,
            };
            sim.at(at, Ev::Down);
            sim.at(at + RESTART_MS, Ev::Up);
        }
        sim
    }

    fn at(&mut self, time: i64, ev: Ev) {
        self.timeline.at(time, ev);
    }

    fn count_shard(&mut self, shard: u32, now: i64) {
        let second = (now / 1000) as usize;
        if let Some(slot) = self.out.shard_rps[shard as usize].get_mut(second) {
            *slot += 1;
        }
    }

    fn count_head(&mut self, now: i64) {
        if let Some(slot) = self.out.head_rps.get_mut((now / 1000) as usize) {
            *slot += 1;
        }
    }

    fn go(&mut self) {
        let mut next_second = 0;
        while let Some((now, ev)) = self.timeline.next() {
            while next_second * 1000 <= now && next_second * 1000 <= self.scenario.over_ms {
                // The data centres' snapshot fetches, and a check of every place in it.
                if !self.head_down {
                    for _ in 0..DATA_CENTRES {
                        self.count_head(next_second * 1000);
                    }
                }
                if next_second == self.scenario.over_ms / 2000 {
                    self.check_snapshot(now);
                }
                next_second += 1;
            }
            self.handle(now, ev);
        }
    }

    fn handle(&mut self, now: i64, ev: Ev) {
        match ev {
            Ev::Arrive(user) => self.arrive(user, now),
            Ev::Flush(shard) => self.flush(shard, now),
            Ev::Answer {
                shard,
                batch,
                epoch,
            } => self.answered(shard, batch, epoch, now),
            Ev::Leave(user) => self.leave(user, now),
            Ev::Claim(user) => {
                let shard = self.shard_of_user[user as usize];
                if self.shard_down == Some(shard) || self.head_down {
                    self.at(now + CLIENT_RETRY_MS, Ev::Claim(user));
                    return;
                }
                // The claim goes to the head (it knows who holds which number); the
                // payment's consume leaves through the shard.
                self.count_head(now);
                self.leave(user, now);
            }
            Ev::Down => self.down(now),
            Ev::Up => self.up(now),
        }
    }

    fn arrive(&mut self, user: u32, now: i64) {
        let shard = self.shard_of_user[user as usize];
        if self.shard_down == Some(shard) {
            self.at(now + CLIENT_RETRY_MS, Ev::Arrive(user));
            return;
        }
        self.count_shard(shard, now);
        self.out.shard_enters[shard as usize] += 1;
        if self.seq_of_user[user as usize].is_some() {
            self.answer(shard, user, now);
            return;
        }
        self.unanswered[shard as usize].insert(user);
        if self.scenario.shards == 1 {
            // One room: every enter is numbered by the room itself, at once.
            self.batchers[0].arrive(&format!("u{user}"), now);
            self.flush_now(0, now, true);
            return;
        }
        self.batchers[shard as usize].arrive(&format!("u{user}"), now);
        self.schedule_flush(shard);
    }

    fn schedule_flush(&mut self, shard: u32) {
        let Some(due) = self.batchers[shard as usize].due_at() else {
            return;
        };
        if self.in_flight[shard as usize]
            || self.flush_at[shard as usize].is_some_and(|at| at <= due)
        {
            return;
        }
        self.flush_at[shard as usize] = Some(due);
        self.at(due, Ev::Flush(shard));
    }

    fn flush(&mut self, shard: u32, now: i64) {
        if self.flush_at[shard as usize].is_some_and(|at| at > now) {
            return;
        }
        self.flush_at[shard as usize] = None;
        if self.shard_down == Some(shard) || self.in_flight[shard as usize] {
            return;
        }
        self.flush_now(shard, now, false);
    }

    fn flush_now(&mut self, shard: u32, now: i64, direct: bool) {
        let Some(batch) = self.batchers[shard as usize].to_send(now) else {
            self.schedule_flush(shard);
            return;
        };
        if self.head_down {
            self.flush_at[shard as usize] = Some(now + SHARD_RETRY_MS);
            self.at(now + SHARD_RETRY_MS, Ev::Flush(shard));
            return;
        }
        self.number(&batch, now);
        if direct {
            // One room numbers its own enters: no batch, no call.
            self.batchers[0].numbered(batch.id);
            for user in &batch.users {
                self.answer(0, user_id(user), now);
            }
            return;
        }
        self.count_head(now);
        self.in_flight[shard as usize] = true;
        let epoch = self.epoch[shard as usize];
        self.at(
            now + HEAD_CALL_MS,
            Ev::Answer {
                shard,
                batch: batch.id,
                epoch,
            },
        );
    }

    /// The head's work on a batch, checked against the reference.
    fn number(&mut self, batch: &Batch, now: i64) {
        let held: Vec<Option<u64>> = batch
            .users
            .iter()
            .map(|user| self.seq_of_user[user_id(user) as usize])
            .collect();
        let retry = held.iter().any(Option::is_some);
        let first_seq = self.line.next_seq();
        let BatchNumbered { tickets, changes } =
            enter_batch(&mut self.line, &held, &batch.left, now);
        for seq in &batch.left {
            self.reference.left(*seq);
        }
        for (at, ticket) in tickets.iter().enumerate() {
            let Some(ticket) = ticket else { continue };
            let user = user_id(&batch.users[at]);
            if retry {
                continue;
            }
            self.out.checked += 1;
            if ticket.position != self.reference.next_position()
                || ticket.seq != first_seq + at as u64
            {
                self.out.wrong += 1;
            }
            if self.user_of_seq.insert(ticket.seq, user).is_some()
                || self.seq_of_user[user as usize]
                    .replace(ticket.seq)
                    .is_some()
            {
                self.out.twice += 1;
            }
            self.reference.numbered(ticket.seq);
        }
        for change in changes {
            if let Change::PassIssued { seq, .. } = change {
                if let Some(user) = self.user_of_seq.get(&seq).copied() {
                    let after = PAYS_AFTER_MS / 2 + self.random.below(PAYS_AFTER_MS as u64) as i64;
                    self.at(now + after, Ev::Claim(user));
                }
            }
        }
    }

    fn answered(&mut self, shard: u32, batch: u64, epoch: u32, now: i64) {
        self.in_flight[shard as usize] = false;
        if self.epoch[shard as usize] != epoch || self.shard_down == Some(shard) {
            return;
        }
        if let Some(batch) = self.batchers[shard as usize].numbered(batch) {
            self.stored_leaves[shard as usize].retain(|seq| !batch.left.contains(seq));
            for user in &batch.users {
                self.answer(shard, user_id(user), now);
            }
        }
        self.schedule_flush(shard);
    }

    fn answer(&mut self, shard: u32, user: u32, now: i64) {
        if self.unanswered[shard as usize].remove(&user) {
            self.out.waits_ms.push(now - self.arrived_at[user as usize]);
        }
        if let Some((lost_at, waiting)) = &mut self.lost_at {
            if waiting.remove(&user) {
                let back = now - *lost_at;
                self.out.back_within_ms = Some(self.out.back_within_ms.unwrap_or(0).max(back));
            }
        }
    }

    fn leave(&mut self, user: u32, now: i64) {
        let shard = self.shard_of_user[user as usize];
        if self.shard_down == Some(shard) {
            self.at(now + CLIENT_RETRY_MS, Ev::Leave(user));
            return;
        }
        let Some(seq) = self.seq_of_user[user as usize] else {
            return;
        };
        self.count_shard(shard, now);
        if !self.reference.is_in_line(seq) {
            return;
        }
        if self.scenario.shards == 1 {
            self.batchers[0].leave(seq, now);
            self.flush_now(0, now, true);
            return;
        }
        self.stored_leaves[shard as usize].push(seq);
        self.batchers[shard as usize].leave(seq, now);
        self.schedule_flush(shard);
    }

    /// Every place in the head's snapshot against the reference.
    fn check_snapshot(&mut self, now: i64) {
        let (checked, wrong) = self.reference.check(&self.line, now);
        self.out.checked += checked;
        self.out.wrong += wrong;
    }

    fn finish(mut self) -> Outcome {
        self.check_snapshot(i64::MAX / 2);
        self.out.lost = self.seq_of_user.iter().filter(|seq| seq.is_none()).count() as u64;
        let mut seqs: Vec<(&u64, &u32)> = self.user_of_seq.iter().collect();
        seqs.sort_unstable();
        self.out.max_inversion_ms = max_inversion(
            seqs.into_iter()
                .map(|(_, user)| self.arrived_at[*user as usize]),
        );
        self.out.waits_ms.sort_unstable();
        self.out
    }
}

fn user_id(user: &str) -> u32 {
    user.trim_start_matches('u').parse().unwrap_or(u32::MAX)
}
