//! The queue against a naive model of the spec, and against its own restored copy.
//!
//! The model keeps the line as a plain list and states the pass rule as an invariant:
//! after every step, each of the first `admit_limit` holds a pass, issued now if it
//! had none. The queue gets there in O(log n) by knowing who can have moved up; both
//! must answer every step alike, changes included. Some scripts sell the event out at
//! a random step: from then on the model lets no newcomer in. Pauses come at random
//! steps: while one lasts the model issues no pass, and it adds what the pause adds to
//! every live pass. Operators hold and resume the room, and close it, at random steps:
//! held or closed, no pass; closed, no newcomer. Some configurations limit passes per
//! minute: the model issues none past the limit in any 60 s window.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::super::*;
use super::Named;

#[derive(Debug, Clone, Copy)]
enum Op {
    Enter(usize),
    Poll(usize),
    Leave(usize),
    Expire,
    SellOut,
    /// Pause payments for this long from now.
    Pause(i64),
    Hold(bool),
    Close,
}

type Answer = (Option<Ticket>, Vec<Change>);

struct Model {
    config: QueueConfig,
    next_seq: u64,
    /// `(user, seq, pass)` in line order.
    line: Vec<(String, u64, Option<i64>)>,
    sold_out: bool,
    paused_until: i64,
    held: bool,
    closed: bool,
    /// When each pass was issued.
    issued: Vec<i64>,
}

impl Model {
    fn new(config: QueueConfig) -> Self {
        Model {
            config,
            next_seq: 0,
            line: Vec::new(),
            sold_out: false,
            paused_until: 0,
            held: false,
            closed: false,
            issued: Vec::new(),
        }
    }

    fn apply(&mut self, op: Op, now: i64) -> Answer {
        // Flags only: the passes they may owe are paid at the next step, as the queue does.
        match op {
            Op::SellOut if !self.sold_out => {
                self.sold_out = true;
                return (None, vec![Change::SoldOut]);
            }
            Op::Close if !self.closed => {
                self.closed = true;
                return (None, vec![Change::Closed]);
            }
            Op::SellOut | Op::Close => return (None, Vec::new()),
            _ => {}
        }
        let mut changes = Vec::new();
        // A pause that ended before this step held nobody's pass back past its end.
        self.issue_passes(now, &mut changes);
        let asked = match op {
            Op::Enter(user) | Op::Poll(user) => Some(name(user)),
            _ => None,
        };
        match op {
            Op::Enter(user)
                if !self.sold_out
                    && !self.closed
                    && !self.line.iter().any(|(u, ..)| *u == name(user)) =>
            {
                changes.push(Change::Entered { seq: self.next_seq });
                self.line.push((name(user), self.next_seq, None));
                self.next_seq += 1;
            }
            Op::Leave(user) => {
                if let Some(at) = self.line.iter().position(|(u, ..)| *u == name(user)) {
                    let (_, seq, _) = self.line.remove(at);
                    changes.push(Change::Removed { seq });
                }
            }
            Op::Expire => changes.extend(self.expire(now)),
            Op::Hold(held) => {
                changes.extend(self.expire(now));
                self.issue_passes(now, &mut changes);
                if self.held != held {
                    self.held = held;
                    changes.push(Change::Held { held });
                }
            }
            Op::Pause(length) => {
                changes.extend(self.expire(now));
                self.issue_passes(now, &mut changes);
                let covered = self.paused_until.max(now);
                if now + length > covered {
                    self.paused_until = now + length;
                    changes.push(Change::Paused {
                        until: now + length,
                    });
                    let mut live: Vec<(i64, u64, &mut Option<i64>)> = self
                        .line
                        .iter_mut()
                        .filter_map(|(_, seq, pass)| Some(((*pass)?, *seq, pass)))
                        .collect();
                    live.sort_by_key(|(at, seq, ..)| (*at, *seq));
                    for (at, seq, pass) in live {
                        let expires_at = at + (now + length - covered);
                        *pass = Some(expires_at);
                        changes.push(Change::PassExtended { seq, expires_at });
                    }
                }
            }
            Op::Enter(_) | Op::Poll(_) | Op::SellOut | Op::Close => {}
        }
        self.issue_passes(now, &mut changes);
        let limit = self.config.admit_limit as u64;
        let ticket = asked.and_then(|user| {
            let at = self.line.iter().position(|(u, ..)| *u == user)?;
            let (_, seq, pass) = &self.line[at];
            let position = at as u64 + 1;
            Some(Ticket {
                seq: *seq,
                position,
                admitted: position <= limit && pass.is_some(),
                pass_expires_at: *pass,
            })
        });
        (ticket, changes)
    }

    /// Removes those whose pass ran out, earliest first.
    fn expire(&mut self, now: i64) -> Vec<Change> {
        let mut expired: Vec<(i64, u64)> = self
            .line
            .iter()
            .filter_map(|(_, seq, pass)| pass.filter(|at| *at <= now).map(|at| (at, *seq)))
            .collect();
        expired.sort();
        self.line
            .retain(|(_, _, pass)| !pass.is_some_and(|at| at <= now));
        expired
            .into_iter()
            .map(|(_, seq)| Change::Removed { seq })
            .collect()
    }

    /// The rule: each of the first `admit_limit` holds a pass, unless payments are paused,
    /// the room is held or closed, or the minute's passes are all issued.
    fn issue_passes(&mut self, now: i64, changes: &mut Vec<Change>) {
        if now < self.paused_until || self.held || self.closed {
            return;
        }
        let limit = self.config.admit_limit as usize;
        for (_, seq, pass) in self.line.iter_mut().take(limit) {
            let this_minute = self.issued.iter().filter(|at| **at > now - 60_000).count();
            if self
                .config
                .admit_per_minute
                .is_some_and(|most| this_minute >= most as usize)
            {
                return;
            }
            if pass.is_none() {
                self.issued.push(now);
                let expires_at = now + self.config.pass_ttl_ms;
                *pass = Some(expires_at);
                changes.push(Change::PassIssued {
                    seq: *seq,
                    expires_at,
                });
            }
        }
    }
}

fn name(user: usize) -> String {
    format!("u{user}")
}

fn apply(queue: &mut Named, op: Op, now: i64) -> Answer {
    match op {
        Op::Enter(user) => queue.enter(&name(user), now),
        Op::Poll(user) => queue.status(&name(user), now),
        Op::Leave(user) => (None, queue.leave(&name(user), now)),
        Op::Expire => (None, queue.expire(now)),
        Op::SellOut => (None, queue.mark_sold_out()),
        Op::Pause(length) => (None, queue.pause(now, now + length)),
        Op::Hold(held) => (None, queue.queue.hold(held, now)),
        Op::Close => (None, queue.queue.close()),
    }
}

/// What the Durable Object shell stores.
#[derive(Default)]
struct Store {
    present: BTreeSet<u64>,
    passes: BTreeMap<u64, i64>,
    sold_out: bool,
    paused_until: i64,
    issued_at: Vec<i64>,
    held: bool,
    closed: bool,
}

impl Store {
    /// As the shell hands it to [`EventQueue::restore`].
    fn stored(&self, next_seq: u64) -> Stored {
        Stored {
            base: 0,
            words: super::bitmap(self.present.iter().copied()),
            next_seq,
            passes: self.passes.iter().map(|(seq, at)| (*seq, *at)).collect(),
            sold_out: self.sold_out,
            paused_until: self.paused_until,
            issued_at: self.issued_at.clone(),
            held: self.held,
            closed: self.closed,
        }
    }
}

/// Applies changes made at `now` to a store, as the Durable Object shell persists them.
fn persist(store: &mut Store, changes: &[Change], now: i64) {
    for change in changes {
        match change {
            Change::Entered { seq } => {
                store.present.insert(*seq);
            }
            Change::PassIssued { seq, expires_at } => {
                store.passes.insert(*seq, *expires_at);
                store.issued_at.push(now);
            }
            Change::PassExtended { seq, expires_at } => {
                store.passes.insert(*seq, *expires_at);
            }
            Change::Removed { seq } => {
                store.present.remove(seq);
                store.passes.remove(seq);
            }
            Change::SoldOut => store.sold_out = true,
            Change::Paused { until } => store.paused_until = *until,
            Change::Held { held } => store.held = *held,
            Change::Closed => store.closed = true,
        }
    }
}

const USERS: usize = 8;

fn config() -> impl Strategy<Value = QueueConfig> {
    (0u32..5, 1i64..150, prop::option::of(1u32..4)).prop_map(
        |(admit_limit, pass_ttl_ms, admit_per_minute)| QueueConfig {
            admit_limit,
            pass_ttl_ms,
            admit_per_minute,
        },
    )
}

/// Operations, each after a pause of 0–39 ms; about half the scripts sell the event out
/// at some step.
fn script() -> impl Strategy<Value = Vec<(Op, i64)>> {
    let op = prop_oneof![
        3 => (0..USERS).prop_map(Op::Enter),
        2 => (0..USERS).prop_map(Op::Poll),
        2 => (0..USERS).prop_map(Op::Leave),
        1 => Just(Op::Expire),
        1 => (1i64..120).prop_map(Op::Pause),
        1 => any::<bool>().prop_map(Op::Hold),
    ];
    // Now and then a step waits half a minute, so the rate's window slides.
    let wait = prop_oneof![19 => 0i64..40, 1 => Just(30_000i64)];
    (
        prop::collection::vec((op, wait), 0..300),
        0usize..600,
        0usize..1200,
    )
        .prop_map(|(mut script, sold_out_at, closed_at)| {
            if closed_at <= script.len() {
                script.insert(closed_at, (Op::Close, 0));
            }
            if sold_out_at <= script.len() {
                script.insert(sold_out_at, (Op::SellOut, 0));
            }
            script
        })
}

proptest! {
    #[test]
    fn the_queue_answers_every_step_as_the_naive_model(config in config(), script in script()) {
        let mut queue = Named::new(config);
        let mut model = Model::new(config);
        let mut now = 0;
        for (step, (op, pause)) in script.into_iter().enumerate() {
            now += pause;
            prop_assert_eq!(apply(&mut queue, op, now), model.apply(op, now), "step {}: {:?} at {}", step, op, now);
            prop_assert_eq!(queue.len(), model.line.len());
        }
    }

    #[test]
    fn a_queue_restored_from_its_changes_answers_as_the_original(
        config in config(),
        script in script(),
        split in 0usize..300,
    ) {
        let mut original = Named::new(config);
        let mut store = Store::default();
        let split = split.min(script.len());
        let mut now = 0;
        for (op, pause) in &script[..split] {
            now += pause;
            persist(&mut store, &apply(&mut original, *op, now).1, now);
        }
        let names: Vec<(u64, String)> =
            original.seq_of.iter().map(|(user, seq)| (*seq, user.clone())).collect();
        let names: Vec<(u64, &str)> = names.iter().map(|(seq, user)| (*seq, user.as_str())).collect();
        let mut restored = Named::restored(config, store.stored(original.next_seq()), &names);
        prop_assert_eq!(restored.len(), original.len());
        prop_assert_eq!(restored.is_sold_out(), original.is_sold_out());
        prop_assert_eq!(restored.next_pass_expiry(), original.next_pass_expiry());
        for user in 0..USERS {
            prop_assert_eq!(apply(&mut restored, Op::Poll(user), now), apply(&mut original, Op::Poll(user), now));
        }
        for (op, pause) in &script[split..] {
            now += pause;
            prop_assert_eq!(apply(&mut restored, *op, now), apply(&mut original, *op, now), "{:?} at {}", op, now);
        }
    }
}
