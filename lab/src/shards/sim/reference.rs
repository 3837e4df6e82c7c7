//! What the simulation checks the rules against, kept apart from them: who is in line by
//! arrival number, and how many.

use rules::queue::snapshot::SnapshotOf;
use rules::queue::EventQueue;

#[derive(Default)]
pub struct Reference {
    present: Vec<bool>,
    in_line: u64,
}

impl Reference {
    /// The position the next one numbered must get.
    pub fn next_position(&self) -> u64 {
        self.in_line + 1
    }

    pub fn is_in_line(&self, seq: u64) -> bool {
        self.present.get(seq as usize).copied().unwrap_or(false)
    }

    pub fn numbered(&mut self, seq: u64) {
        if self.present.len() <= seq as usize {
            self.present.resize(seq as usize + 1, false);
        }
        if !std::mem::replace(&mut self.present[seq as usize], true) {
            self.in_line += 1;
        }
    }

    pub fn left(&mut self, seq: u64) {
        if let Some(slot) = self.present.get_mut(seq as usize) {
            if std::mem::replace(slot, false) {
                self.in_line -= 1;
            }
        }
    }

    /// Every place in `line`'s snapshot at `now` against the reference: how many were
    /// checked, and how many differed.
    pub fn check(&self, line: &EventQueue, now: i64) -> (u64, u64) {
        let snapshot = line.snapshot(SnapshotOf {
            room: 1,
            version: 1,
            as_of: now,
            rate_per_second: None,
        });
        let (mut position, mut wrong) = (0, 0);
        for (seq, present) in self.present.iter().enumerate() {
            let place = snapshot.place(seq as u64).map(|p| p.position);
            if *present {
                position += 1;
            }
            if place != present.then_some(position) {
                wrong += 1;
            }
        }
        (self.present.len() as u64, wrong)
    }
}

/// The most a person numbered ahead of another came after them (ms): `arrived_at` of
/// each holder, in the order of their numbers.
pub fn max_inversion(arrived_at_by_seq: impl Iterator<Item = i64>) -> i64 {
    let (mut latest, mut most) = (i64::MIN, 0);
    for at in arrived_at_by_seq {
        most = most.max(latest.saturating_sub(at));
        latest = latest.max(at);
    }
    most
}
