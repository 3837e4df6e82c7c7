//! Order statistics over the line's bitmap: a Fenwick tree (binary indexed tree) of
//! counts, one per slot — a 64-bit word of the bitmap, counting the people in it.
//!
//! Two questions make a first-come queue cheap at 10^5–10^6 people, and this answers
//! both in O(log n) without touching the entries themselves:
//! - *how many are ahead of slot i?* — a prefix sum, so a position is exact on every
//!   poll and a leave moves everyone behind up at once;
//! - *who is k-th?* — a descent from the top, so the shell learns who has just moved
//!   into the admitted zone when someone ahead leaves.
//!
//! The capacity is a power of two. That makes growth a doubling with one copied node
//! (the new root covers the old root and an empty half) and lets the descent start at
//! the root. Counts are `u32`: half the memory of `usize`, and a queue never holds
//! 2^32 people.

/// Counts over slots `0..capacity`, with prefix sums and k-th lookup in O(log n).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Fenwick {
    /// 1-based: `tree[i]` counts the slots in `(i - lowbit(i), i]`; `tree[0]` is unused.
    tree: Vec<u32>,
}

impl Fenwick {
    /// A tree with room for at least `capacity` slots, slot `i` counting the `i`-th of
    /// `counts`. Built in O(n): each node passes its count to its parent once.
    pub(super) fn from_counts(capacity: usize, counts: impl ExactSizeIterator<Item = u32>) -> Self {
        let capacity = capacity.max(counts.len()).max(1).next_power_of_two();
        let mut tree = vec![0u32; capacity + 1];
        for (slot, count) in counts.enumerate() {
            tree[slot + 1] = count;
        }
        for node in 1..=capacity {
            let parent = node + lowbit(node);
            if parent <= capacity {
                tree[parent] += tree[node];
            }
        }
        Self { tree }
    }

    pub(super) fn capacity(&self) -> usize {
        self.tree.len() - 1
    }

    /// Doubles the capacity. Every new node below the new root covers only new (empty)
    /// slots; the new root covers everything, which is what the old root counted.
    pub(super) fn grow(&mut self) {
        let capacity = self.capacity();
        self.tree.resize(2 * capacity + 1, 0);
        self.tree[2 * capacity] = self.tree[capacity];
    }

    /// Marks slot `slot` (< capacity) present. The caller knows it was absent.
    pub(super) fn insert(&mut self, slot: usize) {
        let mut node = slot + 1;
        while node <= self.capacity() {
            self.tree[node] += 1;
            node += lowbit(node);
        }
    }

    /// Marks slot `slot` (< capacity) absent. The caller knows it was present.
    pub(super) fn remove(&mut self, slot: usize) {
        let mut node = slot + 1;
        while node <= self.capacity() {
            self.tree[node] -= 1;
            node += lowbit(node);
        }
    }

    /// How many slots before `slot` are present.
    pub(super) fn count_before(&self, slot: usize) -> u64 {
        let mut node = slot.min(self.capacity());
        let mut sum = 0u64;
        while node > 0 {
            sum += u64::from(self.tree[node]);
            node &= node - 1;
        }
        sum
    }

    /// The slot of the `k`-th present one (k from 1), or `None` when fewer are present.
    /// Walks down from the root, skipping every subtree whose count stays below `k`.
    pub(super) fn kth(&self, k: u64) -> Option<usize> {
        if k == 0 {
            return None;
        }
        let capacity = self.capacity();
        let (mut node, mut left) = (0usize, k);
        let mut step = capacity;
        while step > 0 {
            let next = node + step;
            if next <= capacity && u64::from(self.tree[next]) < left {
                node = next;
                left -= u64::from(self.tree[next]);
            }
            step /= 2;
        }
        // `node` is the longest prefix holding fewer than k, so slot `node` is the k-th.
        (node < capacity).then_some(node)
    }
}

fn lowbit(node: usize) -> usize {
    node & node.wrapping_neg()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Toggles slots in a tree that grows on demand, checked against a plain list.
    fn check(toggles: &[usize]) {
        let mut tree = Fenwick::from_counts(1, std::iter::empty());
        let mut model = Vec::<bool>::new();
        for &slot in toggles {
            while slot >= tree.capacity() {
                tree.grow();
            }
            if model.len() <= slot {
                model.resize(slot + 1, false);
            }
            if model[slot] {
                tree.remove(slot);
            } else {
                tree.insert(slot);
            }
            model[slot] = !model[slot];
            assert_matches(&tree, &model);
        }
        let rebuilt =
            Fenwick::from_counts(tree.capacity(), model.iter().map(|here| u32::from(*here)));
        assert_eq!(
            rebuilt, tree,
            "an O(n) build equals the same toggles one by one"
        );
    }

    fn assert_matches(tree: &Fenwick, model: &[bool]) {
        for slot in 0..=model.len() {
            let naive = model[..slot].iter().filter(|here| **here).count() as u64;
            assert_eq!(tree.count_before(slot), naive, "count before {slot}");
        }
        let present: Vec<usize> = (0..model.len()).filter(|slot| model[*slot]).collect();
        for (k, slot) in present.iter().enumerate() {
            assert_eq!(tree.kth(k as u64 + 1), Some(*slot), "{}-th present", k + 1);
        }
        assert_eq!(
            tree.kth(present.len() as u64 + 1),
            None,
            "one past the last"
        );
        assert_eq!(tree.kth(0), None, "the 0-th");
    }

    #[test]
    fn prefix_sums_and_kth_follow_single_toggles() {
        check(&[0, 1, 2, 1, 7, 3, 0, 15, 16, 2]);
    }

    #[test]
    fn growth_keeps_the_counts_of_the_old_half() {
        check(&[0, 1, 2, 3, 100, 1000, 1, 4095, 4096]);
    }

    #[test]
    fn an_empty_tree_has_no_kth() {
        check(&[]);
    }

    proptest! {
        #[test]
        fn prefix_sums_and_kth_match_a_naive_list(toggles in prop::collection::vec(0usize..200, 0..120)) {
            check(&toggles);
        }
    }
}
