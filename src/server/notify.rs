//! Server-wide notifications and session targeting: the registries of every transport serving
//! a server (the audience of its notifications), broadcast to every session, and the
//! `notify_*` methods of [`Server`]: list changes, resource updates (to subscribers only) and
//! log messages (filtered by each session's level).
//!
//! Transports add and remove their registries here; notifications reach each session's
//! standalone stream through its [`SessionHandle`].
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging>

use std::sync::{Arc, MutexGuard};

use serde_json::Value;

use actix_mcp_actors::{
    RegistryHandle, SessionHandle, SessionId,
    dev::{Frame, Relay},
};

use crate::protocol::{LoggingLevel, LoggingMessageNotificationParams, method};
use crate::server::auth::scopes;
use crate::server::listen::Change;
use crate::server::report::LogMessage;
use crate::server::session::SessionState;
use crate::server::{Server, ServerInner};

impl ServerInner {
    fn registries(&self) -> MutexGuard<'_, Vec<RegistryHandle>> {
        self.registries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The registries of every transport serving this server, now.
    pub(crate) fn registry_list(&self) -> Vec<RegistryHandle> {
        self.registries().clone()
    }

    /// A transport started serving through `registry`.
    pub(crate) fn add_registry(&self, registry: RegistryHandle) {
        self.registries().push(registry);
    }

    /// A transport stopped serving through `registry` (a stdio connection ended).
    pub(crate) fn remove_registry(&self, registry: &RegistryHandle) {
        self.registries()
            .retain(|known| known.addr() != registry.addr());
    }

    /// Every live session of every transport serving this server.
    pub(crate) fn sessions(&self) -> Vec<SessionHandle> {
        let registries = self.registries().clone();
        registries
            .iter()
            .flat_map(RegistryHandle::sessions)
            .collect()
    }

    /// The relay to the other nodes of the cluster the server's transports belong to, if any.
    pub(crate) fn relay(&self) -> Option<Arc<dyn Relay>> {
        self.registries()
            .iter()
            .find_map(|registry| registry.relay().cloned())
    }

    /// Hands a message of the protocol layer to the other nodes of the cluster the server's
    /// transports belong to, if any.
    pub(crate) fn relay_protocol(&self, topic: &str, payload: Value) {
        if let Some(relay) = self.relay() {
            relay.publish(actix_mcp_actors::BusMessage::Protocol {
                topic: topic.to_owned(),
                payload,
            });
        }
    }

    /// Sends a task's change to the open `subscriptions/listen` streams, here and on the
    /// other nodes of the cluster.
    pub(crate) fn publish_change(&self, change: &Change) {
        self.listeners.publish(change);
        if let Change::Task { id, task } = change {
            self.relay_protocol(
                crate::server::relay::TASK_CHANGE,
                serde_json::json!({ "taskId": id, "task": task }),
            );
        }
    }

    /// Sends `frame` to every session of every transport, and `change` to every open
    /// `subscriptions/listen` stream.
    fn broadcast(&self, frame: &Frame, change: &Change) {
        let registries = self.registries().clone();
        for registry in registries {
            registry.broadcast(frame.clone());
        }
        self.listeners.publish(change);
    }
}

/// Sends `frame` (a `notifications/resources/updated` for `uri`) to the standalone streams open
/// here of `registry`'s sessions subscribed to `uri`, on a protected endpoint only to those
/// whose subscriber's scopes cover a read of `uri`.
fn deliver_resource_updated(
    server: &ServerInner,
    registry: &RegistryHandle,
    uri: &str,
    frame: &Frame,
) {
    for session in registry.sessions() {
        if session.data::<SessionState>().is_some_and(|state| {
            state.is_subscribed(uri)
                && state
                    .granted()
                    .is_none_or(|granted| scopes::may_read(server, &granted, uri))
        }) {
            session.notify_here(frame.clone());
        }
    }
}

impl ServerInner {
    /// Notifies the sessions of `registry` subscribed to `uri` whose standalone stream is open
    /// here (another node of a cluster said `uri` changed).
    #[cfg(feature = "http")]
    pub(crate) fn resource_updated_here(&self, registry: &RegistryHandle, uri: &str) {
        let frame = Frame::notification(
            method::NOTIFICATION_RESOURCES_UPDATED,
            Some(&serde_json::json!({ "uri": uri })),
        );
        deliver_resource_updated(self, registry, uri, &frame);
    }
}

/// A `notifications/message` frame, or `None` when its params do not serialise.
fn log_frame(message: LogMessage) -> Option<Frame> {
    let params = LoggingMessageNotificationParams {
        level: message.level,
        logger: message.logger,
        data: message.data,
        meta: None,
    };
    let params = serde_json::to_value(&params).ok()?;
    Some(Frame::notification(
        method::NOTIFICATION_MESSAGE,
        Some(&params),
    ))
}

/// Sends a log frame to a session when its level (`info` until it sets one) lets it through.
fn send_log(session: &SessionHandle, level: LoggingLevel, frame: &Frame) {
    if passes(session, level) {
        session.notify(frame.clone());
    }
}

/// Whether the session's log level lets `level` through.
fn passes(session: &SessionHandle, level: LoggingLevel) -> bool {
    let threshold = session
        .data::<SessionState>()
        .and_then(|s| s.log_level())
        .unwrap_or(LoggingLevel::Info);
    level >= threshold
}

impl ServerInner {
    /// Sends a log message to the sessions of `registry` whose standalone stream is open here
    /// and whose level lets it through (a log to every session, from another node of a
    /// cluster, or from this one).
    pub(crate) fn log_here(&self, registry: &RegistryHandle, level: LoggingLevel, frame: &Frame) {
        for session in registry.sessions() {
            if passes(&session, level) {
                session.notify_here(frame.clone());
            }
        }
    }
}

impl Server {
    /// Sends `notifications/tools/list_changed` to every session and listen stream.
    pub fn notify_tools_list_changed(&self) {
        self.inner.broadcast(
            &Frame::notification::<Value>(method::NOTIFICATION_TOOLS_LIST_CHANGED, None),
            &Change::Tools,
        );
    }

    /// Sends `notifications/prompts/list_changed` to every session and listen stream.
    pub fn notify_prompts_list_changed(&self) {
        self.inner.broadcast(
            &Frame::notification::<Value>(method::NOTIFICATION_PROMPTS_LIST_CHANGED, None),
            &Change::Prompts,
        );
    }

    /// Sends `notifications/resources/list_changed` to every session and listen stream.
    pub fn notify_resources_list_changed(&self) {
        self.inner.broadcast(
            &Frame::notification::<Value>(method::NOTIFICATION_RESOURCES_LIST_CHANGED, None),
            &Change::Resources,
        );
    }

    /// Sends `notifications/resources/updated` to the sessions subscribed to `uri` (or to a
    /// resource it lies under), and to the `subscriptions/listen` streams that asked for it.
    pub fn notify_resource_updated(&self, uri: &str) {
        self.inner
            .listeners
            .publish(&Change::Updated(uri.to_owned()));
        let frame = Frame::notification(
            method::NOTIFICATION_RESOURCES_UPDATED,
            Some(&serde_json::json!({ "uri": uri })),
        );
        let registries = self.inner.registries().clone();
        for registry in &registries {
            deliver_resource_updated(&self.inner, registry, uri, &frame);
            // The other nodes of a cluster notify their own sessions.
            crate::server::relay::relay_resource_updated(registry, uri);
        }
    }

    /// Sends a log message to every session whose level lets it through (on its standalone
    /// stream). To log to one request's client, use [`RequestContext::log`](crate::RequestContext::log);
    /// to one session, [`notify_log_message_to`](Self::notify_log_message_to). Clients of
    /// protocol 2026-07-28 have no sessions and never receive these: their log messages travel
    /// only on the response stream of a request that asked for a level.
    ///
    /// **Logging is deprecated in protocol 2026-07-28** (still specified and served).
    pub fn notify_log_message(&self, message: LogMessage) {
        let level = message.level;
        let Some(frame) = log_frame(message) else {
            return;
        };
        let registries = self.inner.registries().clone();
        for registry in &registries {
            self.inner.log_here(registry, level, &frame);
            // The other nodes of a cluster log to their own sessions.
            if let Some(relay) = registry.relay() {
                relay.publish(actix_mcp_actors::BusMessage::Protocol {
                    topic: crate::server::relay::LOG.to_owned(),
                    payload: serde_json::json!({ "level": level, "frame": &*frame.json }),
                });
            }
        }
    }

    /// Sends a log message to one session (on its standalone stream), when its level lets it
    /// through; `false` when no such session is live.
    pub fn notify_log_message_to(&self, session_id: &SessionId, message: LogMessage) -> bool {
        let Some(session) = self
            .inner
            .sessions()
            .into_iter()
            .find(|s| s.id() == session_id)
        else {
            return false;
        };
        let level = message.level;
        if let Some(frame) = log_frame(message) {
            send_log(&session, level, &frame);
        }
        true
    }
}
