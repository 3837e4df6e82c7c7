//! The prequeue's draw: at a drop's opening, everyone who entered before it is put in a
//! uniformly random order, drawn from a seed the room takes from a CSPRNG at that moment
//! and records — so the draw can be audited and replayed by anyone who has the seed and
//! the list.
//!
//! Each user's [`rank`] is HMAC-SHA256 under the seed of their id, its first 64 bits;
//! the order is the list sorted by rank, ties (two ranks equal: about 2^-64 a pair) by
//! the ids' byte order. As far as HMAC-SHA256 is a PRF the ranks are independent and
//! uniform, so every order is equally likely. A rank needs nobody else's, so a room
//! ranks a million people in batches and places them in rank order without holding the
//! list in memory; and whoever leaves before being placed changes nobody else's order.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The bytes of a draw's seed.
pub const SEED_BYTES: usize = 32;

/// `user`'s rank in the draw of `seed`: lower stands earlier.
pub fn rank(seed: &[u8; SEED_BYTES], user: &str) -> u64 {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(seed)
        .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    mac.update(user.as_bytes());
    let digest = mac.finalize().into_bytes();
    let mut word = [0u8; 8];
    word.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(word)
}

/// A rank as the room stores it: 16 hex digits, whose text order is the rank's order
/// (SQLite's integers reach Rust through JavaScript numbers, exact only to 2^53).
pub fn rank_text(rank: u64) -> String {
    format!("{rank:016x}")
}

/// The order of a draw: `users` (the prequeue's ids, in any order; twice is once)
/// sorted by their rank under `seed`, then by byte order.
pub fn order(seed: [u8; SEED_BYTES], users: &[String]) -> Vec<String> {
    let mut ranked: Vec<(u64, &String)> = users.iter().map(|u| (rank(&seed, u), u)).collect();
    ranked.sort_unstable();
    ranked.dedup();
    ranked.into_iter().map(|(_, user)| user.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn users(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("user-{i:03}")).collect()
    }

    #[test]
    fn the_same_seed_and_list_give_the_same_order_whatever_order_the_list_came_in() {
        let seed = [7u8; SEED_BYTES];
        let mut shuffled = users(50);
        shuffled.reverse();
        let drawn = order(seed, &users(50));
        assert_eq!(drawn, order(seed, &shuffled));
        let mut sorted = drawn.clone();
        sorted.sort();
        assert_eq!(sorted, users(50), "a permutation: everyone once");
        assert_ne!(drawn, users(50), "not the entry order");
        assert_ne!(drawn, order([8u8; SEED_BYTES], &users(50)));
    }

    #[test]
    fn entering_twice_is_one_ticket_in_the_draw() {
        let mut twice = users(5);
        twice.push("user-002".to_owned());
        assert_eq!(order([1; SEED_BYTES], &twice).len(), 5);
    }

    #[test]
    fn whoever_leaves_changes_nobody_elses_order() {
        let seed = [4u8; SEED_BYTES];
        let all = order(seed, &users(40));
        let mut without = users(40);
        without.retain(|user| user != &all[10]);
        let mut expected = all.clone();
        expected.remove(10);
        assert_eq!(order(seed, &without), expected);
    }

    #[test]
    fn the_stored_text_sorts_as_the_rank_does() {
        let ranks = [0, 1, 0xff, 0x100, u64::MAX / 2, u64::MAX - 1, u64::MAX];
        for pair in ranks.windows(2) {
            assert!(rank_text(pair[0]) < rank_text(pair[1]), "{pair:?}");
        }
        assert_eq!(rank_text(u64::MAX).len(), 16);
    }

    /// Every prequeued user's chance of every place is uniform: over many small rooms,
    /// each drawn from its own seed, the counts of (user, place) pass a chi-square test.
    #[test]
    fn each_user_is_equally_likely_at_each_place() {
        const N: usize = 6;
        const ROOMS: u32 = 12_000;
        let list = users(N);
        let mut counts = [[0u32; N]; N];
        for room in 0..ROOMS {
            let mut seed = [0u8; SEED_BYTES];
            seed[..4].copy_from_slice(&room.to_be_bytes());
            for (place, user) in order(seed, &list).iter().enumerate() {
                let index = list.iter().position(|u| u == user).unwrap_or(N);
                counts[index][place] += 1;
            }
        }
        let expected = f64::from(ROOMS) / N as f64;
        let chi_square: f64 = counts
            .iter()
            .flatten()
            .map(|&seen| (f64::from(seen) - expected).powi(2) / expected)
            .sum();
        // (N-1)^2 = 25 degrees of freedom (rows and columns each sum to a constant); the
        // 0.999 quantile of chi-square(25) is 52.62: a fair draw fails 1 in 1000 seeds —
        // and these seeds are fixed, so the test is deterministic.
        assert!(chi_square < 52.62, "chi-square {chi_square:.1}: {counts:?}");
    }
}
