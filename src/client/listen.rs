//! `subscriptions/listen` (2026-07-28): change notifications as a stream.
//!
//! [`Client::listen`] sends the long-lived request and returns a [`Subscription`], a
//! [`Stream`] of [`ListenEvent`]s: first [`ListenEvent::Acknowledged`] with what the server
//! agreed to send, then the notifications, which the session actor routes here by their
//! `_meta["io.modelcontextprotocol/subscriptionId"]` (several subscriptions can share one
//! connection). When the server ends the subscription (a result, or on stdio its
//! `notifications/cancelled`) the stream ends. When the stream breaks instead (the connection
//! dropped, the answer's stream closed), the subscription listens again after a bounded
//! backoff and a new `Acknowledged` follows; after [`RELISTEN_ATTEMPTS`] failures in a row the
//! stream yields the last error and ends. A change notified while the stream was down is lost:
//! the cached results the subscription covers are dropped when it breaks and again when it is
//! acknowledged anew. Dropping the [`Subscription`] ends the listen
//! request: HTTP closes its stream, stdio sends `notifications/cancelled`.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use serde_json::Value;
use tokio::sync::mpsc;

use actix_mcp_actors::dev::Notification;

use super::Client;
use super::error::ClientError;
use crate::protocol::{ResourceUpdatedNotificationParams, SubscriptionFilter, method};

/// Failed listens in a row before a subscription gives up.
pub const RELISTEN_ATTEMPTS: u32 = 5;
/// The first wait before listening again; doubled after each failure, at most
/// [`RELISTEN_MAX_DELAY`].
const RELISTEN_DELAY: Duration = Duration::from_millis(500);
/// The longest wait before listening again.
const RELISTEN_MAX_DELAY: Duration = Duration::from_secs(30);
/// Notifications a subscription holds before the session drops new ones (logged).
const LISTEN_QUEUE: usize = 256;

/// One event of a `subscriptions/listen` stream.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ListenEvent {
    /// The server opened (or, after a break, reopened) the subscription with these
    /// notifications, possibly fewer than asked for.
    Acknowledged(SubscriptionFilter),
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated` for a subscribed resource.
    ResourceUpdated(ResourceUpdatedNotificationParams),
    /// Any other notification of the subscription (an extension's).
    Other {
        /// The notification's method.
        method: String,
        /// Its params.
        params: Option<Value>,
    },
}

impl ListenEvent {
    fn from_notification(notification: Notification) -> Self {
        let Notification { method, params } = notification;
        let decode = |params: &Option<Value>| {
            params
                .as_ref()
                .and_then(|p| serde_json::from_value(p.clone()).ok())
        };
        match method.as_str() {
            method::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED => {
                let filter = params
                    .as_ref()
                    .and_then(|p| p.get("notifications"))
                    .and_then(|n| serde_json::from_value(n.clone()).ok())
                    .unwrap_or_default();
                Self::Acknowledged(filter)
            }
            method::NOTIFICATION_TOOLS_LIST_CHANGED => Self::ToolsListChanged,
            method::NOTIFICATION_PROMPTS_LIST_CHANGED => Self::PromptsListChanged,
            method::NOTIFICATION_RESOURCES_LIST_CHANGED => Self::ResourcesListChanged,
            method::NOTIFICATION_RESOURCES_UPDATED => match decode(&params) {
                Some(updated) => Self::ResourceUpdated(updated),
                None => Self::Other { method, params },
            },
            _ => Self::Other { method, params },
        }
    }
}

/// A `subscriptions/listen` stream: see the module docs. Dropping it ends the subscription.
#[must_use = "a subscription ends when dropped"]
pub struct Subscription {
    events: mpsc::Receiver<Result<ListenEvent, ClientError>>,
    task: tokio::task::JoinHandle<()>,
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("running", &!self.task.is_finished())
            .finish()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        // The task's pending listen request goes with it, which cancels it.
        self.task.abort();
    }
}

impl Stream for Subscription {
    type Item = Result<ListenEvent, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.poll_recv(cx)
    }
}

/// How one listen request ended.
enum Ended {
    /// The server ended it: the subscription is over.
    ByServer,
    /// It broke: listen again.
    Broken(ClientError),
    /// The user dropped the subscription, or the connection is gone for good.
    Stop(Option<ClientError>),
}

impl Client {
    /// `subscriptions/listen` (2026-07-28): a stream of the change notifications in `filter`.
    /// See [`Subscription`].
    ///
    /// # Errors
    /// When the client is not in the 2026 era ([`ClientError::Protocol`]: a 2025-11-25
    /// server sends these notifications to the builder's callbacks instead) or the
    /// connection is closed. Errors of the request itself arrive on the stream.
    ///
    /// # Cancel safety
    /// The subscription lives until the returned value is dropped.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, ClientError> {
        if !self.is_v2026() {
            return Err(ClientError::Protocol(
                "subscriptions/listen needs the 2026 era; this server speaks an older revision"
                    .into(),
            ));
        }
        if !self.is_connected() {
            return Err(ClientError::TransportClosed(
                "the client session has stopped".into(),
            ));
        }
        let (events, rx) = mpsc::channel(LISTEN_QUEUE);
        let client = self.clone();
        let task = tokio::spawn(async move { client.run_subscription(filter, events).await });
        Ok(Subscription { events: rx, task })
    }

    /// Listens, forwards, listens again after breaks.
    async fn run_subscription(
        self,
        filter: SubscriptionFilter,
        events: mpsc::Sender<Result<ListenEvent, ClientError>>,
    ) {
        let mut failures = 0u32;
        loop {
            match self.listen_once(&filter, &events, &mut failures).await {
                Ended::ByServer => return,
                Ended::Stop(error) => {
                    if let Some(error) = error {
                        let _ = events.send(Err(error)).await;
                    }
                    return;
                }
                Ended::Broken(error) => {
                    self.drop_missed(&filter);
                    failures += 1;
                    if failures >= RELISTEN_ATTEMPTS {
                        let _ = events.send(Err(error)).await;
                        return;
                    }
                    tracing::debug!(%error, failures, "the subscription broke; listening again");
                    let delay = RELISTEN_DELAY
                        .saturating_mul(2u32.saturating_pow(failures - 1))
                        .min(RELISTEN_MAX_DELAY);
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        () = events.closed() => return,
                    }
                }
            }
        }
    }

    async fn listen_once(
        &self,
        filter: &SubscriptionFilter,
        events: &mpsc::Sender<Result<ListenEvent, ClientError>>,
        failures: &mut u32,
    ) -> Ended {
        let (listener, mut notifications) = mpsc::channel(LISTEN_QUEUE);
        let params = serde_json::json!({ "notifications": filter });
        let pending = match self.start_listen(params, listener).await {
            Ok(pending) => pending,
            Err(error) if error.is_closed() => return Ended::Stop(Some(error)),
            Err(error) => return Ended::Broken(error),
        };
        let mut pending = std::pin::pin!(pending);
        let relistened = *failures > 0;
        let mut forward = |notification: Notification| {
            let event = ListenEvent::from_notification(notification);
            if matches!(event, ListenEvent::Acknowledged(_)) {
                if relistened {
                    // What changed until now went unnotified.
                    self.drop_missed(filter);
                }
                *failures = 0;
            }
            events.send(Ok(event))
        };
        loop {
            tokio::select! {
                biased;
                Some(notification) = notifications.recv() => {
                    if forward(notification).await.is_err() {
                        return Ended::Stop(None);
                    }
                }
                answer = &mut pending => {
                    // What arrived before the answer still goes out first.
                    while let Ok(notification) = notifications.try_recv() {
                        if forward(notification).await.is_err() {
                            return Ended::Stop(None);
                        }
                    }
                    return match answer {
                        Ok(_) => Ended::ByServer,
                        Err(error) if error.is_closed() => Ended::Stop(Some(error)),
                        Err(ClientError::Rpc(error)) => Ended::Stop(Some(ClientError::Rpc(error))),
                        Err(error) => Ended::Broken(error),
                    };
                }
                () = events.closed() => return Ended::Stop(None),
            }
        }
    }

    /// Drops the cached results whose changes `filter` would have notified: the subscription
    /// was down, its notifications may be lost.
    fn drop_missed(&self, filter: &SubscriptionFilter) {
        let Some(cache) = &self.inner.cache else {
            return;
        };
        let lists = [
            (
                filter.tools_list_changed,
                method::NOTIFICATION_TOOLS_LIST_CHANGED,
            ),
            (
                filter.prompts_list_changed,
                method::NOTIFICATION_PROMPTS_LIST_CHANGED,
            ),
            (
                filter.resources_list_changed,
                method::NOTIFICATION_RESOURCES_LIST_CHANGED,
            ),
        ];
        for (asked, notification) in lists {
            if asked == Some(true) {
                cache.invalidate(notification, None);
            }
        }
        for uri in filter.resource_subscriptions.iter().flatten() {
            let params = serde_json::json!({ "uri": uri });
            cache.invalidate(method::NOTIFICATION_RESOURCES_UPDATED, Some(&params));
        }
    }
}
