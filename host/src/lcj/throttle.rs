//! The ingestion throttle (docs/learning.md, "Journal"): of the observations sharing a key
//! `kind|host|tab|discriminator`, only the first in 30 s is kept. The cache holds 5,000 keys
//! and forgets the oldest quarter when full.

use std::collections::HashMap;

/// How long a key holds back its repeats, ms.
pub const WINDOW_MS: i64 = 30_000;
/// Keys remembered.
pub const CAPACITY: usize = 5_000;

/// Keys and when each was last let through.
#[derive(Default)]
pub struct Throttle {
    seen: HashMap<String, i64>,
}

/// The throttle key: the discriminator is the first non-empty of the target's stable id, the
/// candidate key, the selector, the fingerprint hash and the tool, else `generic`.
pub fn key(kind: &str, host: &str, tab: &str, discriminators: &[Option<&str>]) -> String {
    let d = discriminators.iter().flatten().find(|d| !d.is_empty()).copied().unwrap_or("generic");
    format!("{kind}|{host}|{tab}|{d}")
}

impl Throttle {
    /// Whether an observation under `key` at `now` is kept (and, if so, remembers it).
    pub fn admit(&mut self, key: &str, now: i64) -> bool {
        if let Some(at) = self.seen.get(key)
            && now - *at < WINDOW_MS
            && now >= *at
        {
            return false;
        }
        if self.seen.len() >= CAPACITY && !self.seen.contains_key(key) {
            let mut ages: Vec<(i64, String)> = self.seen.iter().map(|(k, at)| (*at, k.clone())).collect();
            ages.sort();
            for (_, k) in ages.into_iter().take(CAPACITY / 4) {
                self.seen.remove(&k);
            }
        }
        self.seen.insert(key.to_owned(), now);
        true
    }

    /// Keys remembered now.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_in_thirty_seconds_is_kept() {
        let mut t = Throttle::default();
        let k = key("action_success", "a.org", "t1", &[None, Some(""), Some("#x"), Some("click")]);
        assert_eq!(k, "action_success|a.org|t1|#x");
        assert_eq!(key("k", "h", "t", &[None]), "k|h|t|generic");
        assert!(t.admit(&k, 1_000));
        assert!(!t.admit(&k, 30_999));
        assert!(t.admit(&k, 31_000));
        assert!(t.admit("other", 31_001));
    }

    #[test]
    fn a_full_cache_forgets_its_oldest_quarter() {
        let mut t = Throttle::default();
        for i in 0..CAPACITY {
            assert!(t.admit(&format!("k{i}"), i as i64));
        }
        assert_eq!(t.len(), CAPACITY);
        assert!(t.admit("new", 10_000));
        assert_eq!(t.len(), CAPACITY - CAPACITY / 4 + 1);
        // The oldest were forgotten (admitted again), the newest still hold back.
        assert!(t.admit("k0", 10_001));
        assert!(!t.admit(&format!("k{}", CAPACITY - 1), 10_002));
    }
}
