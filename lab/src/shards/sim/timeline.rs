//! Simulated time: events in the order they are due (ties in the order they were set),
//! and a small deterministic generator, so the runs are the same every time.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub struct Timeline<E> {
    due: BinaryHeap<Reverse<(i64, u64)>>,
    events: Vec<Option<E>>,
}

impl<E> Timeline<E> {
    pub fn new() -> Self {
        Self {
            due: BinaryHeap::new(),
            events: Vec::new(),
        }
    }

    /// `event` happens at `time` (ms).
    pub fn at(&mut self, time: i64, event: E) {
        self.due.push(Reverse((time, self.events.len() as u64)));
        self.events.push(Some(event));
    }

    /// The next event due, and when.
    pub fn next(&mut self) -> Option<(i64, E)> {
        let Reverse((time, id)) = self.due.pop()?;
        let event = self.events[id as usize].take()?;
        Some((time, event))
    }
}

/// SplitMix64.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform enough in `0..n` for the simulation's timings.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}
