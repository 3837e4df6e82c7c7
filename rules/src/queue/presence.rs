//! The line itself: who is still in it, by arrival number, with positions in O(log n) —
//! and nothing else, so a million people take about 190 KB.
//!
//! One bit per arrival number from `base` on, in 64-bit words, and a [`Fenwick`] tree
//! over the words' counts. A position is the people in the words before one's own (a
//! prefix sum) plus the bits below one's own, plus one; the `k`-th person is found by
//! descending the tree to their word and selecting the bit. Leaving clears one bit, so
//! everyone behind moves up without being touched. Words before the first person still
//! in line are dropped once they are at least half of all words, so memory follows the
//! span from the oldest person in line to the newest, not everyone who ever entered.
//!
//! The words are what the room stores and what its snapshot publishes.

use super::fenwick::Fenwick;

#[derive(Debug, Clone)]
pub(super) struct Presence {
    /// The arrival number of bit 0 of word 0: a multiple of 64.
    base: u64,
    words: Vec<u64>,
    counts: Fenwick,
    len: u64,
}

impl Presence {
    /// The line of the arrival numbers set in `words`, bit 0 of word 0 being `base`
    /// (rounded down to a multiple of 64).
    pub(super) fn from_words(base: u64, words: Vec<u64>) -> Self {
        let counts = Fenwick::from_counts(words.len(), words.iter().map(|w| w.count_ones()));
        let len = words.iter().map(|w| u64::from(w.count_ones())).sum();
        Self {
            base: base - base % 64,
            words,
            counts,
            len,
        }
    }

    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// The arrival number of the first bit, and the words.
    pub(super) fn words(&self) -> (u64, &[u64]) {
        (self.base, &self.words)
    }

    /// Puts `seq` at the back; it is above every arrival number in the line.
    pub(super) fn push(&mut self, seq: u64) {
        if self.len == 0 || seq < self.base {
            *self = Self::from_words(seq, Vec::new());
        }
        let word = ((seq - self.base) / 64) as usize;
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
            while self.counts.capacity() < self.words.len() {
                self.counts.grow();
            }
        }
        self.words[word] |= 1 << (seq % 64);
        self.counts.insert(word);
        self.len += 1;
    }

    /// The position of `seq` (people ahead + 1), if they are in line.
    pub(super) fn position(&self, seq: u64) -> Option<u64> {
        let (word, bit) = self.locate(seq)?;
        let below = (self.words[word] & ((1u64 << bit) - 1)).count_ones();
        Some(self.counts.count_before(word) + u64::from(below) + 1)
    }

    /// Takes `seq` out of the line: the position they had.
    pub(super) fn remove(&mut self, seq: u64) -> Option<u64> {
        let position = self.position(seq)?;
        let (word, bit) = self.locate(seq)?;
        self.words[word] &= !(1u64 << bit);
        self.counts.remove(word);
        self.len -= 1;
        self.drop_leading_empty_words();
        Some(position)
    }

    /// The arrival number at `position` (from 1).
    pub(super) fn at(&self, position: u64) -> Option<u64> {
        if position == 0 || position > self.len {
            return None;
        }
        let word = self.counts.kth(position)?;
        let rank = position - self.counts.count_before(word);
        let mut bits = *self.words.get(word)?;
        for _ in 1..rank {
            bits &= bits - 1;
        }
        (bits != 0).then(|| self.base + word as u64 * 64 + u64::from(bits.trailing_zeros()))
    }

    /// Everyone in line, in order.
    #[cfg(test)]
    pub(super) fn present_seqs(&self) -> impl Iterator<Item = u64> + '_ {
        self.words.iter().enumerate().flat_map(move |(word, bits)| {
            let first = self.base + word as u64 * 64;
            let mut bits = *bits;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let bit = bits.trailing_zeros();
                    bits &= bits - 1;
                    first + u64::from(bit)
                })
            })
        })
    }

    /// The word and bit of `seq`, if they are in line.
    fn locate(&self, seq: u64) -> Option<(usize, u32)> {
        let word = usize::try_from(seq.checked_sub(self.base)? / 64).ok()?;
        let bit = (seq % 64) as u32;
        (self.words.get(word)? & (1u64 << bit) != 0).then_some((word, bit))
    }

    /// Drops the empty words before the first person in line, once they are at least half
    /// of all words (and a few): amortized O(1) per leave.
    fn drop_leading_empty_words(&mut self) {
        let empty = self.words.iter().take_while(|bits| **bits == 0).count();
        if empty >= 64 && empty * 2 >= self.words.len() {
            let words = self.words.split_off(empty);
            *self = Self::from_words(self.base + empty as u64 * 64, words);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Arrivals and leaves against a plain list of who is in line.
        #[test]
        fn positions_and_the_kth_match_a_plain_list(
            steps in prop::collection::vec((0u64..4, any::<prop::sample::Index>()), 0..3000),
        ) {
            let mut line = Presence::from_words(0, Vec::new());
            let mut model: Vec<u64> = Vec::new();
            let mut next = 0u64;
            for (kind, pick) in steps {
                if kind == 0 && !model.is_empty() {
                    let seq = model.remove(pick.index(model.len()));
                    prop_assert!(line.remove(seq).is_some());
                } else {
                    next += kind;
                    line.push(next);
                    model.push(next);
                    next += 1;
                }
                prop_assert_eq!(line.len(), model.len() as u64);
            }
            for (ahead, seq) in model.iter().enumerate() {
                let position = ahead as u64 + 1;
                prop_assert_eq!(line.position(*seq), Some(position));
                prop_assert_eq!(line.at(position), Some(*seq));
            }
            prop_assert_eq!(line.at(model.len() as u64 + 1), None);
            prop_assert_eq!(line.present_seqs().collect::<Vec<_>>(), model.clone());
            let (base, words) = line.words();
            let restored = Presence::from_words(base, words.to_vec());
            prop_assert_eq!(restored.present_seqs().collect::<Vec<_>>(), model);
        }
    }

    #[test]
    fn words_before_the_oldest_in_line_are_dropped() {
        let mut line = Presence::from_words(0, Vec::new());
        for seq in 0..100_000 {
            line.push(seq);
            if seq >= 10 {
                line.remove(seq - 10);
            }
        }
        assert_eq!(line.len(), 10);
        assert!(line.words().1.len() < 200, "{} words", line.words().1.len());
        assert_eq!(line.position(99_995), Some(6));
        assert_eq!(line.at(1), Some(99_990));
    }
}
