//! A bounded map whose entries expire: what an isolate may remember between requests
//! (a window known to be full until a time, an admission owed back to a user's window)
//! without letting anything a client sends grow it without bound.
//!
//! Every entry carries the time it stops meaning anything; an expired entry is never
//! returned. At `capacity` live entries a new key is not remembered at all — the caller
//! then does what it would have done without the memory. Expired entries are swept only
//! when the map is full and the earliest expiry has passed, so a full map of live
//! entries turns a new key away in O(1).

use std::collections::HashMap;

#[derive(Debug)]
pub struct ExpiringMap<V> {
    entries: HashMap<String, (V, i64)>,
    capacity: usize,
    /// No entry expires before this (a lower bound; exact after a sweep).
    earliest: i64,
}

impl<V> ExpiringMap<V> {
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: HashMap::new(),
            capacity,
            earliest: i64::MAX,
        }
    }

    /// The live value of `key` at `now_ms` and when it expires. An expired entry is
    /// removed.
    pub fn get_mut(&mut self, key: &str, now_ms: i64) -> Option<(&mut V, i64)> {
        if self.entries.get(key).is_some_and(|(_, at)| *at <= now_ms) {
            self.entries.remove(key);
        }
        self.entries
            .get_mut(key)
            .map(|(value, expires_at)| (value, *expires_at))
    }

    /// Removes and returns the live value of `key`.
    pub fn take(&mut self, key: &str, now_ms: i64) -> Option<V> {
        let (value, expires_at) = self.entries.remove(key)?;
        (expires_at > now_ms).then_some(value)
    }

    /// Sets `key` to `value` until `expires_at`, or to `update(old)` when a live value is
    /// there, its expiry the later of both. `false` when it is not remembered: already
    /// expired, or the map is full of live entries.
    pub fn upsert(
        &mut self,
        key: &str,
        value: V,
        expires_at: i64,
        now_ms: i64,
        update: impl FnOnce(&mut V, V),
    ) -> bool {
        if expires_at <= now_ms {
            return false;
        }
        if let Some((old, at)) = self.get_mut(key, now_ms) {
            update(old, value);
            let at = at.max(expires_at);
            if let Some(entry) = self.entries.get_mut(key) {
                entry.1 = at;
            }
            return true;
        }
        if self.entries.len() >= self.capacity && self.earliest <= now_ms {
            self.entries.retain(|_, (_, at)| *at > now_ms);
            self.earliest = self
                .entries
                .values()
                .map(|(_, at)| *at)
                .min()
                .unwrap_or(i64::MAX);
        }
        if self.entries.len() >= self.capacity {
            return false;
        }
        self.earliest = self.earliest.min(expires_at);
        self.entries.insert(key.to_owned(), (value, expires_at));
        true
    }

    /// The live entries at `now_ms`, in no particular order.
    pub fn live(&self, now_ms: i64) -> impl Iterator<Item = (&str, &V)> {
        self.entries
            .iter()
            .filter(move |(_, (_, at))| *at > now_ms)
            .map(|(key, (value, _))| (key.as_str(), value))
    }

    /// Entries held, live or not yet swept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::ExpiringMap;

    fn keep_new(old: &mut u32, new: u32) {
        *old = new;
    }

    #[test]
    fn an_entry_lives_until_its_expiry_and_not_a_millisecond_more() {
        let mut map = ExpiringMap::new(4);
        assert!(map.upsert("a", 1, 1_000, 0, keep_new));
        assert_eq!(
            map.get_mut("a", 999).map(|(v, at)| (*v, at)),
            Some((1, 1_000))
        );
        assert!(map.get_mut("a", 1_000).is_none());
        assert!(map.is_empty(), "an expired entry is dropped when read");
        assert!(!map.upsert("b", 1, 5, 5, keep_new), "already expired");
    }

    #[test]
    fn an_update_merges_and_keeps_the_later_expiry() {
        let mut map = ExpiringMap::new(4);
        map.upsert("a", 1, 1_000, 0, |old: &mut u32, new| *old += new);
        map.upsert("a", 2, 500, 10, |old: &mut u32, new| *old += new);
        assert_eq!(
            map.get_mut("a", 600).map(|(v, at)| (*v, at)),
            Some((3, 1_000))
        );
        assert_eq!(map.take("a", 600), Some(3));
        assert_eq!(map.take("a", 600), None);
    }

    #[test]
    fn a_full_map_turns_new_keys_away_until_something_expires() {
        let mut map = ExpiringMap::new(3);
        for (i, key) in ["a", "b", "c"].into_iter().enumerate() {
            assert!(map.upsert(key, 0, 100 + i as i64, 0, keep_new));
        }
        assert!(
            !map.upsert("d", 0, 1_000, 50, keep_new),
            "full of live entries"
        );
        assert!(
            map.upsert("a", 9, 1_000, 50, keep_new),
            "a known key still updates"
        );
        assert!(
            map.upsert("d", 0, 1_000, 101, keep_new),
            "b expired at 101 and is swept"
        );
        assert_eq!(map.len(), 3);
        assert!(map.get_mut("b", 101).is_none());
    }

    #[test]
    fn however_many_keys_arrive_the_map_holds_at_most_its_capacity() {
        let mut map = ExpiringMap::new(100);
        for i in 0..10_000_i64 {
            map.upsert(&i.to_string(), (), i + 50, i, |_, _| {});
            assert!(map.len() <= 100);
        }
    }

    #[test]
    fn only_live_entries_are_listed() {
        let mut map = ExpiringMap::new(4);
        map.upsert("a", 1, 10, 0, keep_new);
        map.upsert("b", 2, 20, 0, keep_new);
        let mut live: Vec<(&str, &u32)> = map.live(10).collect();
        live.sort();
        assert_eq!(live, [("b", &2)]);
    }

    #[test]
    fn a_taken_entry_that_had_expired_is_nothing() {
        let mut map = ExpiringMap::new(2);
        map.upsert("a", 1, 10, 0, keep_new);
        assert_eq!(map.take("a", 10), None);
        assert!(map.is_empty());
    }
}
