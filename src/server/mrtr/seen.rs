//! The single-use sealed states this process has seen used: each state carries an id, and a
//! retry that brings an id already here is refused. An entry is kept until its state expires
//! (it could not be used after that anyway). The set is bounded: past [`MAX_SEEN`] entries the
//! expired ones go, then those closest to their expiry, so a flood of retries cannot grow it
//! without limit (at the cost of forgetting the states nearest their end).
//!
//! In a cluster, each node claims the states it opens here and in the cluster's session store
//! ([`Mrtr::claim_in_cluster`](super::Mrtr::claim_in_cluster)).

use std::collections::HashMap;
use std::sync::Mutex;

use super::seal::now_ms;

/// The most state ids one process remembers.
pub(crate) const MAX_SEEN: usize = 65_536;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct SeenStates {
    seen: Mutex<HashMap<String, u64>>,
    max: usize,
}

impl SeenStates {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            seen: Mutex::default(),
            max: max.max(1),
        }
    }

    /// Records the state `id`, which expires at `expires` (ms since the Unix epoch): `true`
    /// the first time, `false` when it was seen already.
    pub(crate) fn claim(&self, id: &str, expires: u64) -> bool {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = now_ms();
        if let Some(until) = seen.get(id)
            && *until >= now
        {
            return false;
        }
        if seen.len() >= self.max {
            seen.retain(|_, until| *until >= now);
        }
        while seen.len() >= self.max {
            let Some(soonest) = seen
                .iter()
                .min_by_key(|(_, until)| **until)
                .map(|(id, _)| id.clone())
            else {
                break;
            };
            seen.remove(&soonest);
        }
        seen.insert(id.to_owned(), expires);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_claimed_once_until_it_expires() {
        let seen = SeenStates::new(8);
        let later = now_ms() + 60_000;
        assert!(seen.claim("a", later));
        assert!(!seen.claim("a", later));
        assert!(seen.claim("b", later));
        // An expired entry is no longer a claim (its state would be refused as expired).
        assert!(seen.claim("old", now_ms().saturating_sub(1)));
        assert!(seen.claim("old", later));
    }

    #[test]
    fn the_set_is_bounded_and_forgets_the_soonest_to_expire() {
        let seen = SeenStates::new(2);
        let now = now_ms();
        assert!(seen.claim("soon", now + 1_000));
        assert!(seen.claim("late", now + 60_000));
        assert!(seen.claim("new", now + 30_000));
        assert!(!seen.claim("late", now + 60_000));
        assert!(!seen.claim("new", now + 30_000));
        assert!(seen.claim("soon", now + 1_000), "forgotten first");
    }
}
