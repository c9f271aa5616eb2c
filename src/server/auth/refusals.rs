//! [`Refusals`]: the tokens an [`IntrospectionValidator`](super::IntrospectionValidator)
//! refused lately, refused again without asking the authorization server (a negative cache).
//!
//! Keyed by the token's SHA-256, so no token is kept. Every entry lives as long (the TTL), so
//! entries expire in the order they were added: a queue finds the expired ones, and the oldest
//! one to drop when the cache is full, without scanning.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use super::AuthError;

/// A token's key: its SHA-256.
pub(super) type TokenKey = [u8; 32];

/// Recent refusals, bounded in number and age.
pub(super) struct Refusals {
    ttl: Duration,
    capacity: usize,
    entries: Mutex<Entries>,
}

/// The refusals by key, and their keys in the order they were added (and expire).
#[derive(Default)]
struct Entries {
    by_key: HashMap<TokenKey, (AuthError, Instant)>,
    order: VecDeque<(TokenKey, Instant)>,
}

impl Entries {
    /// Drops the oldest entry; `false` when there is none.
    fn drop_oldest(&mut self) -> bool {
        let Some((key, until)) = self.order.pop_front() else {
            return false;
        };
        if self.by_key.get(&key).is_some_and(|(_, at)| *at == until) {
            self.by_key.remove(&key);
        }
        true
    }

    fn forget_expired(&mut self, now: Instant) {
        while self.order.front().is_some_and(|(_, until)| *until <= now) {
            self.drop_oldest();
        }
    }
}

impl Refusals {
    /// Remembers at most `capacity` refusals, each for `ttl` (zero for either: nothing).
    pub(super) fn new(ttl: Duration, capacity: usize) -> Self {
        Self {
            ttl,
            capacity,
            entries: Mutex::default(),
        }
    }

    fn off(&self) -> bool {
        self.capacity == 0 || self.ttl.is_zero()
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The refusal of this token, if it is recent.
    pub(super) fn get(&self, key: &TokenKey) -> Option<AuthError> {
        if self.off() {
            return None;
        }
        let mut entries = self.lock();
        entries.forget_expired(Instant::now());
        entries.by_key.get(key).map(|(error, _)| error.clone())
    }

    /// Remembers that this token was refused, dropping the oldest refusal when full.
    pub(super) fn insert(&self, key: TokenKey, error: &AuthError) {
        if self.off() {
            return;
        }
        let now = Instant::now();
        let mut entries = self.lock();
        entries.forget_expired(now);
        if entries.by_key.contains_key(&key) {
            return;
        }
        while entries.by_key.len() >= self.capacity && entries.drop_oldest() {}
        let until = now + self.ttl;
        entries.by_key.insert(key, (error.clone(), until));
        entries.order.push_back((key, until));
    }

    /// How many refusals are remembered.
    pub(super) fn len(&self) -> usize {
        self.lock().by_key.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> AuthError {
        AuthError::invalid_token(text)
    }

    #[test]
    fn refusals_are_bounded_and_the_oldest_go_first() {
        let refusals = Refusals::new(Duration::from_secs(30), 3);
        for i in 0u8..5 {
            refusals.insert([i; 32], &refused(&format!("no {i}")));
        }
        assert_eq!(refusals.len(), 3);
        assert_eq!(refusals.get(&[1; 32]), None);
        assert_eq!(refusals.get(&[4; 32]), Some(refused("no 4")));
        assert_eq!(refusals.lock().order.len(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn refusals_expire_after_their_ttl() {
        let refusals = Refusals::new(Duration::from_secs(30), 8);
        refusals.insert([1; 32], &refused("no"));
        tokio::time::advance(Duration::from_secs(20)).await;
        refusals.insert([2; 32], &refused("no"));
        assert!(refusals.get(&[1; 32]).is_some());
        tokio::time::advance(Duration::from_secs(11)).await;
        assert_eq!(refusals.get(&[1; 32]), None);
        assert!(refusals.get(&[2; 32]).is_some());
        assert_eq!(refusals.len(), 1);
        refusals.insert([1; 32], &refused("again"));
        assert_eq!(refusals.get(&[1; 32]), Some(refused("again")));
    }

    #[test]
    fn a_zero_ttl_or_capacity_remembers_nothing() {
        for refusals in [
            Refusals::new(Duration::ZERO, 8),
            Refusals::new(Duration::from_secs(1), 0),
        ] {
            refusals.insert([1; 32], &refused("no"));
            assert_eq!(refusals.get(&[1; 32]), None);
        }
    }
}
