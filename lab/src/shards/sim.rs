//! The native simulation of a sharded drop: the rules' own state machines — each
//! shard's `Batcher`, the head's `enter_batch` on its `EventQueue` — driven in one process on
//! simulated time, at the full rate, with every request each object receives counted
//! by the second. What the simulation assumes of the platform (a call's time, a
//! restart's, a client's retry) is in the constants; what it checks it checks against
//! a reference kept apart from the rules: a count of who is in line, and who holds
//! which number.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use rules::queue::arrivals::{
    enter_batch, flush_interval_ms, shard_of, Batch, BatchNumbered, Batcher,
};
use rules::queue::snapshot::SnapshotOf;
use rules::queue::{Change, EventQueue, QueueConfig};

/// A shard's call to the head and its answer, the head's work included.
pub const HEAD_CALL_MS: i64 = 5;
/// From an object's loss to its first answer: workerd's, measured
/// (`docs/room-at-a-million.md`: 0.18 s).
pub const RESTART_MS: i64 = 180;
/// A client whose enter failed sends it again this much later.
pub const CLIENT_RETRY_MS: i64 = 300;
/// A shard whose call to the head failed calls again this much later.
pub const SHARD_RETRY_MS: i64 = 100;
/// The data centres the drop's people come through: each fetches the head's snapshot
/// once a second for the polls of everyone there (the Cache API shares it).
pub const DATA_CENTRES: u64 = 20;
/// An admitted person claims their pass (a confirm) and pays this long after it is
/// issued, give or take half; one in fifty of the rest gives up and leaves 5–50 s
/// after arriving.
pub const PAYS_AFTER_MS: i64 = 20_000;
const KEY: &[u8] = b"the edge's ticket key";
const EVENT: &str = "drop";

const CONFIG: QueueConfig = QueueConfig {
    admit_limit: 100,
    pass_ttl_ms: 600_000,
    admit_per_minute: None,
};

/// An object lost mid-drop, and when.
#[derive(Debug, Clone, Copy)]
pub enum Restart {
    Shard { shard: u32, at_ms: i64 },
    Head { at_ms: i64 },
}

#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    pub arrivals: u32,
    pub over_ms: i64,
    pub shards: u32,
    pub restart: Option<Restart>,
}

/// What one run saw.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Requests each shard received, by the second; the head's.
    pub shard_rps: Vec<Vec<u64>>,
    pub head_rps: Vec<u64>,
    /// Enters each shard received.
    pub shard_enters: Vec<u64>,
    /// Answers and final snapshots checked against the reference, and how many differed.
    pub checked: u64,
    pub wrong: u64,
    /// From arrival to the answer that numbered them, per person, ms.
    pub waits_ms: Vec<i64>,
    /// The most a person numbered ahead of another came after them, ms.
    pub max_inversion_ms: i64,
    /// Arrived and never numbered; numbered twice.
    pub lost: u64,
    pub twice: u64,
    /// Of the restarted object's people waiting at its loss, the longest until answered.
    pub back_within_ms: Option<i64>,
    pub affected: u64,
}

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
    events: BinaryHeap<Reverse<(i64, u64)>>,
    slab: Vec<Option<Ev>>,
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
    /// The reference: who is in line, by arrival number, and how many.
    present: Vec<bool>,
    in_line: u64,
    shard_down: Option<u32>,
    head_down: bool,
    lost_at: Option<(i64, HashSet<u32>)>,
    random: SplitMix,
    out: Outcome,
}

/// A small deterministic generator: the runs are the same every time.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
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
            events: BinaryHeap::new(),
            slab: Vec::new(),
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
            present: Vec::with_capacity(users),
            in_line: 0,
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
        self.events.push(Reverse((time, self.slab.len() as u64)));
        self.slab.push(Some(ev));
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
        while let Some(Reverse((now, id))) = self.events.pop() {
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
            let Some(ev) = self.slab[id as usize].take() else {
                continue;
            };
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
            if let Some(slot) = self.present.get_mut(*seq as usize) {
                if std::mem::replace(slot, false) {
                    self.in_line -= 1;
                }
            }
        }
        for (at, ticket) in tickets.iter().enumerate() {
            let Some(ticket) = ticket else { continue };
            let user = user_id(&batch.users[at]);
            if retry {
                continue;
            }
            self.out.checked += 1;
            if ticket.position != self.in_line + 1 || ticket.seq != first_seq + at as u64 {
                self.out.wrong += 1;
            }
            if self.user_of_seq.insert(ticket.seq, user).is_some()
                || self.seq_of_user[user as usize]
                    .replace(ticket.seq)
                    .is_some()
            {
                self.out.twice += 1;
            }
            if self.present.len() <= ticket.seq as usize {
                self.present.resize(ticket.seq as usize + 1, false);
            }
            self.present[ticket.seq as usize] = true;
            self.in_line += 1;
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
        if !self.present.get(seq as usize).copied().unwrap_or(false) {
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

    fn down(&mut self, now: i64) {
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

    fn up(&mut self, now: i64) {
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

    /// Every place in the head's snapshot against the reference.
    fn check_snapshot(&mut self, now: i64) {
        let snapshot = self.line.snapshot(SnapshotOf {
            room: 1,
            version: 1,
            as_of: now,
            rate_per_second: None,
        });
        let mut position = 0;
        for (seq, present) in self.present.iter().enumerate() {
            let place = snapshot.place(seq as u64).map(|p| p.position);
            if *present {
                position += 1;
            }
            self.out.checked += 1;
            if place != present.then_some(position) {
                self.out.wrong += 1;
            }
        }
    }

    fn finish(mut self) -> Outcome {
        self.check_snapshot(i64::MAX / 2);
        self.out.lost = self.seq_of_user.iter().filter(|seq| seq.is_none()).count() as u64;
        let mut latest = i64::MIN;
        let mut seqs: Vec<(&u64, &u32)> = self.user_of_seq.iter().collect();
        seqs.sort_unstable();
        for (_, user) in seqs {
            let at = self.arrived_at[*user as usize];
            self.out.max_inversion_ms = self.out.max_inversion_ms.max(latest - at);
            latest = latest.max(at);
        }
        self.out.waits_ms.sort_unstable();
        self.out
    }
}

fn user_id(user: &str) -> u32 {
    user.trim_start_matches('u').parse().unwrap_or(u32::MAX)
}
