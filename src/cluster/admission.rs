//! The cluster's shared admission counters: the concurrency slots and rate buckets that make
//! an endpoint's [admission limits](crate::transport::http::AdmissionConfig) hold for the
//! whole cluster rather than for each node.
//!
//! A node asks the [`AdmissionStore`] once per admitted request ([`AdmissionStore::acquire`]:
//! one round trip), and only when the endpoint has a cluster-wide limit that applies to the
//! request; with no such limit it never asks. A concurrency slot is a **lease**: it names the
//! request (a random id of the node's), and expires `lease_ttl` after it was taken or last
//! renewed. The node renews the leases of its running requests every third of `lease_ttl`,
//! and releases a request's leases when its work ends. A node that dies without releasing
//! frees its slots when their leases expire: within `lease_ttl` (30 s by default, see
//! [`Cluster::admission_lease`](super::Cluster::admission_lease)).
//!
//! A rate limit is a token bucket per key, refilled from the store's own clock.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use actix_mcp_actors::StoreFuture;

use crate::transport::http::MAX_BUCKETS;

/// A concurrency limit counted in the store: at most `limit` leases under `key` at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotLimit {
    /// What is counted: `global`, or `principal:<issuer>\0<principal>` (the issuer and the
    /// subject or client id of a bearer token, separated by a NUL).
    pub key: String,
    /// The most leases at once (at least one).
    pub limit: usize,
}

/// A token-bucket rate counted in the store: `burst` tokens at most, refilled at `per_second`.
#[derive(Debug, Clone, PartialEq)]
pub struct BucketLimit {
    /// Whose bucket: `principal-rate:<issuer>\0<principal>`.
    pub key: String,
    /// Tokens added per second.
    pub per_second: f64,
    /// The most tokens the bucket holds (the burst).
    pub burst: u32,
}

/// One request's admission, asked of the store: a lease of each slot and a token of each
/// bucket, all or none.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmissionAsk {
    /// The lease's id, unique in the cluster (the node's id and a random part).
    pub lease: String,
    /// How long the leases live unless renewed.
    pub lease_ttl: Duration,
    /// The concurrency limits, each needing a free slot.
    pub slots: Vec<SlotLimit>,
    /// The rate limits, each needing a token.
    pub rates: Vec<BucketLimit>,
}

/// What the store decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdmissionVerdict {
    /// Every slot leased, every token taken.
    Admitted,
    /// The slot of `slots[i]` is full: nothing was taken.
    Full(usize),
    /// The bucket of `rates[i]` is empty for this long: nothing was taken.
    RateLimited(usize, Duration),
}

/// The cluster's shared admission counters: the concurrency slots and rate buckets that make
/// an endpoint's [admission limits](crate::transport::http::AdmissionConfig) hold for the
/// whole cluster rather than for each node. Implemented by [`InMemoryAdmissionStore`] (the
/// nodes of one process) and, with feature `redis`, by `RedisAdmissionStore`.
///
/// A node asks once per admitted request ([`acquire`](Self::acquire): one round trip), and only
/// when the endpoint has a cluster-wide limit that applies to the request. A concurrency slot
/// is a **lease**: it names the request (the node's id and a random part) and expires
/// `lease_ttl` after it was taken or last renewed. The node renews the leases of its running
/// requests every third of `lease_ttl` ([`renew`](Self::renew)) and releases a request's
/// leases when its work ends ([`release`](Self::release)), both off the request's path. A node
/// that dies without releasing frees its slots when their leases expire: within `lease_ttl`
/// ([`Cluster::admission_lease`](super::Cluster::admission_lease), 30 s by default). A store
/// counts only the leases not yet expired.
///
/// A rate limit is a token bucket per key, refilled from the store's own clock.
pub trait AdmissionStore: Send + Sync + fmt::Debug + 'static {
    /// Leases a slot of each of `ask.slots` and takes a token of each of `ask.rates`, all or
    /// none, atomically: one round trip.
    fn acquire<'a>(&'a self, ask: &'a AdmissionAsk) -> StoreFuture<'a, AdmissionVerdict>;

    /// Extends the lease `lease` under each of `keys` to `ttl` from now (a lease already gone
    /// stays gone).
    fn renew<'a>(
        &'a self,
        lease: &'a str,
        keys: &'a [String],
        ttl: Duration,
    ) -> StoreFuture<'a, ()>;

    /// Ends the lease `lease` under each of `keys` (a lease already gone is no error).
    fn release<'a>(&'a self, lease: &'a str, keys: &'a [String]) -> StoreFuture<'a, ()>;
}

/// The [`AdmissionStore`] of the nodes of one process (tests, several endpoints in one
/// process): share one between their [`Cluster`](super::Cluster)s
/// ([`Cluster::admission_store`](super::Cluster::admission_store)).
#[derive(Debug, Default)]
pub struct InMemoryAdmissionStore {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Leases by key: lease id → expiry.
    slots: HashMap<String, HashMap<String, Instant>>,
    /// Buckets by key: tokens and when they were counted.
    buckets: HashMap<String, (f64, Instant)>,
}

impl InMemoryAdmissionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The live leases under `key` now.
    pub fn leases(&self, key: &str) -> usize {
        let now = Instant::now();
        self.lock()
            .slots
            .get(key)
            .map_or(0, |leases| leases.values().filter(|&&at| at > now).count())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn decide(&self, ask: &AdmissionAsk) -> AdmissionVerdict {
        let now = Instant::now();
        let mut state = self.lock();
        for (i, slot) in ask.slots.iter().enumerate() {
            let leases = state.slots.entry(slot.key.clone()).or_default();
            leases.retain(|_, at| *at > now);
            if leases.len() >= slot.limit && !leases.contains_key(&ask.lease) {
                return AdmissionVerdict::Full(i);
            }
        }
        let mut taken = Vec::with_capacity(ask.rates.len());
        for (i, rate) in ask.rates.iter().enumerate() {
            let burst = f64::from(rate.burst.max(1));
            let per_second = rate.per_second.max(f64::MIN_POSITIVE);
            let (tokens, at) = state
                .buckets
                .get(&rate.key)
                .copied()
                .unwrap_or((burst, now));
            let tokens =
                (tokens + now.saturating_duration_since(at).as_secs_f64() * per_second).min(burst);
            if tokens < 1.0 {
                let wait = Duration::from_secs_f64(((1.0 - tokens) / per_second).min(3600.0));
                return AdmissionVerdict::RateLimited(i, wait);
            }
            taken.push((rate.key.clone(), tokens - 1.0));
        }
        for (key, tokens) in taken {
            state.buckets.insert(key, (tokens, now));
        }
        // Bounded: past `MAX_BUCKETS`, the buckets untouched for an hour (full by then, at
        // any sensible rate, and a full bucket is the same as none) are forgotten.
        if state.buckets.len() > MAX_BUCKETS {
            state.buckets.retain(|_, (_, at)| {
                now.saturating_duration_since(*at) < Duration::from_secs(3600)
            });
        }
        for slot in &ask.slots {
            state
                .slots
                .entry(slot.key.clone())
                .or_default()
                .insert(ask.lease.clone(), now + ask.lease_ttl);
        }
        AdmissionVerdict::Admitted
    }
}

impl AdmissionStore for InMemoryAdmissionStore {
    fn acquire<'a>(&'a self, ask: &'a AdmissionAsk) -> StoreFuture<'a, AdmissionVerdict> {
        let verdict = self.decide(ask);
        Box::pin(async move { Ok(verdict) })
    }

    fn renew<'a>(
        &'a self,
        lease: &'a str,
        keys: &'a [String],
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        let now = Instant::now();
        let mut state = self.lock();
        for key in keys {
            if let Some(at) = state.slots.get_mut(key).and_then(|l| l.get_mut(lease))
                && *at > now
            {
                *at = now + ttl;
            }
        }
        Box::pin(async { Ok(()) })
    }

    fn release<'a>(&'a self, lease: &'a str, keys: &'a [String]) -> StoreFuture<'a, ()> {
        let mut state = self.lock();
        for key in keys {
            if let Some(leases) = state.slots.get_mut(key) {
                leases.remove(lease);
                if leases.is_empty() {
                    state.slots.remove(key);
                }
            }
        }
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ask(lease: &str, limit: usize, ttl: Duration) -> AdmissionAsk {
        AdmissionAsk {
            lease: lease.to_owned(),
            lease_ttl: ttl,
            slots: vec![SlotLimit {
                key: "global".to_owned(),
                limit,
            }],
            rates: Vec::new(),
        }
    }

    #[tokio::test]
    async fn leases_fill_a_slot_and_expire_unless_renewed() {
        let store = InMemoryAdmissionStore::new();
        let ttl = Duration::from_millis(500);
        let keys = ["global".to_owned()];
        assert_eq!(
            store.acquire(&ask("a", 1, ttl)).await.unwrap(),
            AdmissionVerdict::Admitted
        );
        assert_eq!(
            store.acquire(&ask("b", 1, ttl)).await.unwrap(),
            AdmissionVerdict::Full(0)
        );
        std::thread::sleep(Duration::from_millis(300));
        store.renew("a", &keys, ttl).await.unwrap();
        std::thread::sleep(Duration::from_millis(300));
        // Renewed: still held.
        assert_eq!(store.leases("global"), 1);
        std::thread::sleep(Duration::from_millis(300));
        // Past its expiry, the crashed holder's slot is free.
        assert_eq!(
            store.acquire(&ask("b", 1, ttl)).await.unwrap(),
            AdmissionVerdict::Admitted
        );
        store.release("b", &keys).await.unwrap();
        assert_eq!(store.leases("global"), 0);
    }

    #[tokio::test]
    async fn a_refused_ask_takes_nothing() {
        let store = InMemoryAdmissionStore::new();
        let mut first = ask("a", 1, Duration::from_secs(5));
        first.rates.push(BucketLimit {
            key: "r".to_owned(),
            per_second: 0.001,
            burst: 1,
        });
        assert_eq!(
            store.acquire(&first).await.unwrap(),
            AdmissionVerdict::Admitted
        );
        let mut second = first.clone();
        second.lease = "b".to_owned();
        second.slots[0].limit = 5;
        let AdmissionVerdict::RateLimited(0, wait) = store.acquire(&second).await.unwrap() else {
            panic!("the bucket is empty");
        };
        assert!(wait > Duration::from_secs(100));
        assert_eq!(store.leases("global"), 1);
    }
}
