//! The bus on Redis pub/sub.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use actix_mcp_actors::{Bus, Envelope, NodeId, Recipients, StoreError, StoreFuture};
use futures::StreamExt as _;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use tokio::sync::mpsc;

use super::connection::{RESPONSE_TIMEOUT, Redis};

/// The [`Bus`] on Redis pub/sub: one channel to every node, one per node. Delivery is at most
/// once (pub/sub keeps nothing for a node that is not listening); a subscriber reconnects by
/// itself, within a second of the server's return.
///
/// On a Redis Cluster, messages are published on the cluster's (classic, not sharded) pub/sub,
/// which forwards each to every node of the cluster: a node subscribes on one of the nodes it
/// was given, and on the next one when that one goes. Behind Sentinels, it subscribes on the
/// master they name, and on the new one after a failover.
#[derive(Debug, Clone)]
pub struct RedisBus {
    redis: Redis,
    /// Its subscriptions' state, for [`continuity`](Bus::continuity): see [`Subscriptions`].
    subscriptions: Arc<Subscriptions>,
}

/// How many of a bus's subscriptions are down (the high half) and how many times one went
/// up or down (the low half, wrapping), in one word so that both are read at once.
#[derive(Debug, Default)]
struct Subscriptions(AtomicU64);

impl Subscriptions {
    const DOWN: u64 = 1 << 32;

    /// One more subscription down, one fewer, or as many (`by`: [`Self::DOWN`], its negation,
    /// or 0); a change all the same.
    fn change(&self, by: u64) {
        let _ = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                let changes = (word as u32).wrapping_add(1);
                Some((word.wrapping_add(by) & !u64::from(u32::MAX)) | u64::from(changes))
            });
    }

    /// The count of changes while every subscription is in place, else `None`.
    fn continuity(&self) -> Option<u64> {
        let word = self.0.load(Ordering::Acquire);
        (word >> 32 == 0).then_some(word & u64::from(u32::MAX))
    }
}

/// One subscription's part in its bus's [`Subscriptions`]: down from its start until it is
/// in place, down again whenever its connection ends (what is published meanwhile is lost),
/// and no longer counted once dropped (its subscriber stopped listening, and its node with
/// it; the bus's other subscribers are not made to look down by it).
struct Subscription {
    all: Arc<Subscriptions>,
    up: bool,
}

impl Subscription {
    fn start(all: Arc<Subscriptions>) -> Self {
        all.change(Subscriptions::DOWN);
        Self { all, up: false }
    }

    fn up(&mut self) {
        if !self.up {
            self.all.change(Subscriptions::DOWN.wrapping_neg());
            self.up = true;
        }
    }

    fn down(&mut self) {
        if self.up {
            self.all.change(Subscriptions::DOWN);
            self.up = false;
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        // Its end is a change all the same.
        self.all.change(if self.up {
            0
        } else {
            Subscriptions::DOWN.wrapping_neg()
        });
    }
}

impl RedisBus {
    /// The bus on `redis`.
    pub fn new(redis: Redis) -> Self {
        Self {
            redis,
            subscriptions: Arc::default(),
        }
    }
}

impl Bus for RedisBus {
    fn publish(&self, envelope: Envelope) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let channel = match &envelope.to {
                Recipients::All => self.redis.channel(None),
                Recipients::Node(node) => self.redis.channel(Some(node)),
            };
            let json = serde_json::to_string(&envelope)
                .map_err(|err| StoreError::Corrupt(err.to_string()))?;
            self.redis
                .query::<u64, _>(redis::cmd("PUBLISH").arg(channel).arg(json))
                .await
                .map(drop)
        })
    }

    fn subscribe(&self, node: &NodeId) -> BoxFuture<'static, BoxStream<'static, Envelope>> {
        let (sender, receiver) = mpsc::channel::<Envelope>(1024);
        let (in_place_tx, in_place) = tokio::sync::oneshot::channel::<()>();
        let mut in_place_tx = Some(in_place_tx);
        let redis = self.redis.clone();
        let node = node.clone();
        let own = sent_by(&node);
        let mut subscription = Subscription::start(self.subscriptions.clone());
        tokio::spawn(async move {
            let channels = [redis.channel(None), redis.channel(Some(&node))];
            let mut failures = 0u32;
            let mut attempt = 0u32;
            while !sender.is_closed() {
                // The server to subscribe on: on a cluster, each node given in turn; behind
                // Sentinels, the master they name now.
                let client = redis.pubsub_client(attempt).await;
                attempt = attempt.wrapping_add(1);
                let subscribed = async {
                    let client = client.map_err(|err| err.to_string())?;
                    let mut pubsub = client
                        .get_async_pubsub()
                        .await
                        .map_err(|err| err.to_string())?;
                    pubsub
                        .subscribe(&channels)
                        .await
                        .map_err(|err| err.to_string())?;
                    Ok::<_, String>(pubsub)
                };
                let pubsub = match tokio::time::timeout(RESPONSE_TIMEOUT, subscribed).await {
                    Ok(Ok(pubsub)) => pubsub,
                    Ok(Err(err)) => {
                        failures += 1;
                        if failures == 1 {
                            tracing::warn!(%err, "the cluster bus is unreachable; retrying");
                        }
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        continue;
                    }
                    Err(_) => {
                        failures += 1;
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        continue;
                    }
                };
                if failures > 0 {
                    tracing::info!("the cluster bus is back");
                    failures = 0;
                }
                subscription.up();
                if let Some(in_place_tx) = in_place_tx.take() {
                    let _ = in_place_tx.send(());
                }
                let mut messages = pubsub.into_on_message();
                while let Some(message) = messages.next().await {
                    let Ok(payload) = message.get_payload::<String>() else {
                        continue;
                    };
                    // This node's own broadcasts come back: skip them unread (an envelope
                    // starts with its sender).
                    if payload.starts_with(&*own) {
                        continue;
                    }
                    let envelope = match serde_json::from_str::<Envelope>(&payload) {
                        Ok(envelope) => envelope,
                        Err(err) => {
                            tracing::warn!(%err, "ignored an unreadable message on the cluster bus");
                            continue;
                        }
                    };
                    if envelope.from == node {
                        continue;
                    }
                    if sender.send(envelope).await.is_err() {
                        return;
                    }
                }
                // The connection ended (what was published meanwhile is lost): reconnect.
                subscription.down();
                tracing::warn!("lost the cluster bus; reconnecting");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        let stream = futures::stream::unfold(receiver, |mut receiver| async move {
            receiver.recv().await.map(|envelope| (envelope, receiver))
        })
        .boxed();
        Box::pin(async move {
            if tokio::time::timeout(RESPONSE_TIMEOUT, in_place)
                .await
                .is_err()
            {
                tracing::warn!("the cluster bus is not reachable yet; listening as soon as it is");
            }
            stream
        })
    }

    fn continuity(&self) -> Option<u64> {
        self.subscriptions.continuity()
    }
}

/// How the text of an [`Envelope`] from `node` starts.
fn sent_by(node: &NodeId) -> String {
    format!(
        "{{\"from\":{}",
        serde_json::to_string(node).unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_mcp_actors::SessionId;

    #[test]
    fn continuity_holds_only_while_every_subscription_is_in_place() {
        let all = Arc::new(Subscriptions::default());
        assert_eq!(
            all.continuity(),
            Some(0),
            "no subscription: nothing to miss"
        );
        let mut first = Subscription::start(all.clone());
        assert_eq!(all.continuity(), None, "not in place yet");
        first.up();
        let up = all.continuity().expect("in place");
        first.up();
        assert_eq!(all.continuity(), Some(up), "already in place: no change");
        let mut second = Subscription::start(all.clone());
        assert_eq!(all.continuity(), None, "the second is not in place");
        second.up();
        let both = all.continuity().expect("both in place");
        assert_ne!(both, up);
        first.down();
        assert_eq!(all.continuity(), None, "a connection ended");
        first.up();
        let back = all.continuity().expect("back");
        assert_ne!(
            back, both,
            "a reconnection is a change: messages may have been lost"
        );
        drop(second);
        let without = all.continuity().expect("the one left is in place");
        assert_ne!(without, back, "a subscriber that stopped is a change");
        first.down();
        let mut third = Subscription::start(all.clone());
        drop(first);
        assert_eq!(all.continuity(), None, "the third is not in place");
        third.up();
        assert!(
            all.continuity().is_some(),
            "a dropped one is no longer counted"
        );
        drop(third);
        assert!(all.continuity().is_some());
    }

    #[test]
    fn the_count_of_changes_wraps_without_touching_the_count_of_subscriptions_down() {
        let all = Subscriptions(AtomicU64::new(u64::from(u32::MAX)));
        all.change(Subscriptions::DOWN);
        assert_eq!(all.continuity(), None);
        all.change(Subscriptions::DOWN.wrapping_neg());
        assert_eq!(all.continuity(), Some(1));
    }

    #[test]
    fn an_envelope_starts_with_its_sender() {
        let node = NodeId::new("node \"a\"");
        let envelope = Envelope {
            from: node.clone(),
            to: Recipients::All,
            message: actix_mcp_actors::BusMessage::Closed {
                session: SessionId::parse("s").expect("a valid id"),
            },
        };
        let text = serde_json::to_string(&envelope).expect("serializable");
        assert!(text.starts_with(&sent_by(&node)), "{text}");
        assert!(!text.starts_with(&sent_by(&NodeId::new("node"))));
    }
}
