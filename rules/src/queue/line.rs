//! The line itself: who stands where, in arrival order, with positions in O(log n).
//!
//! Each arrival takes the next *slot*, an index into a vector kept in sequence-number
//! order, and a [`Fenwick`] tree counts who is still present in each slot. A position is
//! the count before one's slot, plus one; leaving clears one count, so everyone behind
//! moves up without being touched.
//!
//! Slots are not sequence numbers: a slot left empty is reclaimed by compaction, which
//! keeps memory proportional to the people in line, not to everyone who ever entered.
//! Compaction runs only when the vector has filled the tree and at least half of it is
//! empty, so it replaces a doubling and costs O(1) per arrival, amortized. A sequence
//! number finds its slot by binary search, which compaction does not disturb.

use super::fenwick::Fenwick;

#[derive(Debug, Clone)]
pub(super) struct Line {
    /// Ascending by `seq`; `user` is `None` once they left, until compaction.
    slots: Vec<Slot>,
    present: Fenwick,
    len: usize,
}

#[derive(Debug, Clone)]
struct Slot {
    seq: u64,
    user: Option<String>,
}

impl Line {
    /// A line of `entries`, which are in ascending, distinct `seq` order.
    pub(super) fn from_sorted(entries: Vec<(u64, String)>) -> Self {
        let slots: Vec<Slot> = entries
            .into_iter()
            .map(|(seq, user)| Slot {
                seq,
                user: Some(user),
            })
            .collect();
        let present = Fenwick::from_present(slots.len(), slots.iter().map(|_| true));
        let len = slots.len();
        Self {
            slots,
            present,
            len,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Puts `user` at the back; `seq` is above every sequence number in the line.
    pub(super) fn push(&mut self, seq: u64, user: String) {
        if self.slots.len() == self.present.capacity() {
            if self.len * 2 <= self.slots.len() {
                self.compact();
            } else {
                self.present.grow();
            }
        }
        self.present.insert(self.slots.len());
        self.slots.push(Slot {
            seq,
            user: Some(user),
        });
        self.len += 1;
    }

    /// The position of `seq` (people ahead + 1), if they are in line.
    pub(super) fn position(&self, seq: u64) -> Option<u64> {
        let slot = self.slot_of(seq)?;
        Some(self.present.count_before(slot) + 1)
    }

    /// Takes `seq` out of the line: the position they had, and who they were.
    pub(super) fn remove(&mut self, seq: u64) -> Option<(u64, String)> {
        let slot = self.slot_of(seq)?;
        let position = self.present.count_before(slot) + 1;
        let user = self.slots.get_mut(slot)?.user.take()?;
        self.present.remove(slot);
        self.len -= 1;
        Some((position, user))
    }

    /// Who is at `position` (from 1): their sequence number and name.
    pub(super) fn at(&self, position: u64) -> Option<(u64, &str)> {
        let slot = self.slots.get(self.present.kth(position)?)?;
        Some((slot.seq, slot.user.as_deref()?))
    }

    /// The sequence numbers of everyone in line, in order.
    pub(super) fn present_seqs(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots
            .iter()
            .filter(|slot| slot.user.is_some())
            .map(|slot| slot.seq)
    }

    /// Who holds `seq`, if they are in line.
    pub(super) fn user_of(&self, seq: u64) -> Option<&str> {
        self.slots[self.slot_of(seq)?].user.as_deref()
    }

    /// The occupied slot of `seq`.
    fn slot_of(&self, seq: u64) -> Option<usize> {
        let slot = self
            .slots
            .binary_search_by_key(&seq, |slot| slot.seq)
            .ok()?;
        self.slots[slot].user.is_some().then_some(slot)
    }

    /// Drops the empty slots and rebuilds the counts, keeping the capacity.
    fn compact(&mut self) {
        self.slots.retain(|slot| slot.user.is_some());
        self.present =
            Fenwick::from_present(self.present.capacity(), self.slots.iter().map(|_| true));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_survive_compaction() {
        let mut line = Line::from_sorted(Vec::new());
        for seq in 0..1000u64 {
            line.push(seq, format!("u{seq}"));
            if seq % 4 != 0 {
                assert_eq!(
                    line.remove(seq).map(|(_, user)| user),
                    Some(format!("u{seq}"))
                );
            }
        }
        assert_eq!(line.len(), 250);
        assert!(line.slots.len() < 1000, "empty slots were reclaimed");
        for (ahead, seq) in (0..1000u64).step_by(4).enumerate() {
            let position = ahead as u64 + 1;
            assert_eq!(line.position(seq), Some(position));
            assert_eq!(line.at(position), Some((seq, format!("u{seq}").as_str())));
        }
        assert_eq!(line.position(1), None, "a removed seq has no position");
    }
}
