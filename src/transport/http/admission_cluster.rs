//! The cluster-wide side of admission control: with a cluster that has an
//! [`AdmissionStore`](crate::cluster::AdmissionStore)
//! ([`Cluster::admission_store`](crate::cluster::Cluster::admission_store); the Redis cluster
//! has one), the global and per-principal concurrency limits and the principal rate are
//! counted in the store too, so they hold for the whole cluster.
//!
//! - The per-node counts stay, as a local guard checked first (no node admits more than the
//!   limit by itself, and a node full by itself asks nothing of the store).
//! - The store is asked once per request (one round trip), after the local slots are held, and
//!   only when a cluster-wide limit applies to it: never for `ping`, notifications or
//!   responses, nor for an endpoint with none of these limits set.
//! - A request past a cluster-wide concurrency limit does not wait in the queue: it is refused
//!   at once (429, `Retry-After`, `data.limit` as for the local limit, a message saying the
//!   limit is cluster-wide).
//! - A request's slots are leases, renewed while its work runs and released (in the
//!   background) when it ends; a node that dies frees its slots when their leases expire
//!   ([`Cluster::admission_lease`](crate::cluster::Cluster::admission_lease), 30 s by default).
//!   A lease that expires while its request still runs (the store unreachable for longer than
//!   the lease time) is not taken again: that request runs on uncounted by the cluster.
//! - **Fail closed**: while the store fails, a request a cluster-wide limit applies to is
//!   refused 503 with `Retry-After: 1` and a JSON-RPC error saying the admission store is
//!   unavailable, as a request needing the session store is while that fails.
//! - The principal rate is counted cluster-wide on requests (the local guard counts every
//!   message); the session rate and the per-tool limits are counted per node.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::cluster::{
    AdmissionAsk, AdmissionStore, AdmissionVerdict, BucketLimit, Cluster, SlotLimit,
};

use super::admission::{AdmissionConfig, Limit, Refusal};

/// An endpoint's cluster-wide limits and the store they are counted in.
#[derive(Debug)]
pub(super) struct ClusterLimits {
    store: Arc<dyn AdmissionStore>,
    lease_ttl: Duration,
    node: String,
    global: Option<usize>,
    per_principal: Option<usize>,
    principal_rate: Option<(f64, u32)>,
}

impl ClusterLimits {
    /// The cluster-wide limits of `config` in `cluster`'s admission store; `None` without a
    /// store or without a limit to count there.
    pub(super) fn new(config: &AdmissionConfig, cluster: Option<&Cluster>) -> Option<Self> {
        let cluster = cluster?;
        let store = cluster.admission.clone()?;
        let (global, per_principal, principal_rate) = config.cluster_limits();
        if global.is_none() && per_principal.is_none() && principal_rate.is_none() {
            return None;
        }
        Some(Self {
            store,
            lease_ttl: cluster.admission_lease,
            node: cluster.node.to_string(),
            global,
            per_principal,
            principal_rate,
        })
    }

    /// Admits a request of `principal` in the store: its leases, `None` when no cluster-wide
    /// limit applies to it, or the refusal.
    ///
    /// # Cancel safety
    /// Dropping the future releases whatever the store may have leased.
    pub(super) async fn admit(
        &self,
        principal: Option<&str>,
    ) -> Result<Option<ClusterLease>, Refusal> {
        let mut slots = Vec::with_capacity(2);
        let mut limits = Vec::with_capacity(2);
        if let Some(limit) = self.global {
            slots.push(SlotLimit {
                key: "global".to_owned(),
                limit,
            });
            limits.push(Limit::Global);
        }
        let mut rates = Vec::new();
        if let Some(principal) = principal {
            if let Some(limit) = self.per_principal {
                slots.push(SlotLimit {
                    key: format!("principal:{principal}"),
                    limit,
                });
                limits.push(Limit::Principal);
            }
            if let Some((per_second, burst)) = self.principal_rate {
                rates.push(BucketLimit {
                    key: format!("principal-rate:{principal}"),
                    per_second,
                    burst,
                });
            }
        }
        if slots.is_empty() && rates.is_empty() {
            return Ok(None);
        }
        let ask = AdmissionAsk {
            lease: format!("{}:{}", self.node, uuid::Uuid::new_v4().simple()),
            lease_ttl: self.lease_ttl,
            slots,
            rates,
        };
        let mut lease = ClusterLease {
            store: self.store.clone(),
            lease: Arc::from(ask.lease.as_str()),
            keys: ask.slots.iter().map(|slot| slot.key.clone()).collect(),
            renewal: None,
        };
        match self.store.acquire(&ask).await {
            Ok(AdmissionVerdict::Admitted) => {
                lease.renew_every(self.lease_ttl);
                Ok(Some(lease))
            }
            Ok(AdmissionVerdict::Full(i)) => {
                lease.keys = Arc::from([]);
                Err(Refusal::ClusterFull(
                    limits.get(i).copied().unwrap_or(Limit::Global),
                ))
            }
            Ok(AdmissionVerdict::RateLimited(_, wait)) => {
                lease.keys = Arc::from([]);
                Err(Refusal::ClusterRate(Limit::PrincipalRate, wait))
            }
            Err(err) => {
                tracing::warn!(%err, "the admission store failed: refusing the request");
                // Whatever the store did is unknown: the lease is released in case it was taken.
                Err(Refusal::StoreUnavailable)
            }
        }
    }
}

/// The leases of one admitted request in the cluster's admission store: renewed while it
/// lives, released (in the background) when dropped.
pub(super) struct ClusterLease {
    store: Arc<dyn AdmissionStore>,
    lease: Arc<str>,
    keys: Arc<[String]>,
    renewal: Option<tokio::task::JoinHandle<()>>,
}

impl fmt::Debug for ClusterLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterLease")
            .field("lease", &self.lease)
            .field("keys", &self.keys)
            .finish_non_exhaustive()
    }
}

impl ClusterLease {
    /// Renews the leases every third of `ttl` until dropped.
    fn renew_every(&mut self, ttl: Duration) {
        if self.keys.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let store = self.store.clone();
        let lease = self.lease.clone();
        let keys = self.keys.clone();
        self.renewal = Some(runtime.spawn(async move {
            let period = ttl / 3;
            loop {
                tokio::time::sleep(period).await;
                if let Err(err) = store.renew(&lease, &keys, ttl).await {
                    tracing::debug!(%err, "could not renew an admission lease");
                }
            }
        }));
    }
}

impl Drop for ClusterLease {
    fn drop(&mut self) {
        if let Some(renewal) = self.renewal.take() {
            renewal.abort();
        }
        if self.keys.is_empty() {
            return;
        }
        // Not on the actor's path: the release runs in the background (without a runtime, the
        // leases expire by themselves).
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let store = self.store.clone();
        let lease = self.lease.clone();
        let keys = self.keys.clone();
        runtime.spawn(async move {
            if let Err(err) = store.release(&lease, &keys).await {
                tracing::debug!(%err, "could not release an admission lease (it will expire)");
            }
        });
    }
}
