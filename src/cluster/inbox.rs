//! What the bus brings a node: each [`BusMessage`] acted on, and the messages of the protocol
//! layer (`BusMessage::Protocol`) by topic.

use std::sync::Arc;

use actix_mcp_actors::RegistryHandle;
use actix_mcp_actors::dev::{Frame, FrameKind, Incoming};
use serde::Deserialize as _;
use serde_json::{Value, json};

use super::{BusMessage, ClusterNode, EventId, NodeId, Recipients, Replay, SharedTool};
use crate::protocol::method;
use crate::server::ServerInner;
use crate::server::listen::Change;
use crate::server::relay::{
    EVENTS_REPLAY, EVENTS_REPLAYED, LOG, RESOURCE_UPDATED, SESSIONLESS_CANCEL, TASK_CANCEL,
    TASK_CHANGE, TASK_INPUT, TASK_INPUT_TAKEN,
};
use crate::server::shared::CATALOG_CHANGE;

impl ClusterNode {
    /// Acts on a message from another node.
    pub(super) fn receive(
        self: &Arc<Self>,
        registry: &RegistryHandle,
        server: &Arc<ServerInner>,
        from: NodeId,
        message: BusMessage,
    ) {
        match message {
            BusMessage::Notify { session, frame } => {
                if let Some(session) = registry.find(session.as_str()) {
                    session.notify_here(notification_frame(frame));
                }
            }
            BusMessage::Broadcast { frame } => {
                let change = change_of(&frame);
                registry.broadcast_here(notification_frame(frame));
                if let Some(change) = change {
                    server.listeners.publish(&change);
                }
            }
            BusMessage::Response { session, message } => {
                let Some(session) = registry.find(session.as_str()) else {
                    return;
                };
                match actix_mcp_actors::dev::parse_message(message.as_bytes()) {
                    Ok(Incoming::Response(response)) => session.response_here(response),
                    _ => tracing::warn!("ignored a relayed answer that is not a response"),
                }
            }
            BusMessage::Cancel { session, params } => {
                if let Some(session) = registry.find(session.as_str()) {
                    session.cancel_here(params.as_ref());
                }
            }
            BusMessage::Closed { session } => {
                self.heard_of_record();
                registry.close(session.as_str());
            }
            BusMessage::StandaloneOpened { session, at_ms } => {
                if let Some(session) = registry.find(session.as_str()) {
                    session.close_standalone_here(at_ms);
                }
            }
            BusMessage::Changed { record } => {
                self.heard_of_record();
                if let Some(session) = registry.find(record.id.as_str()) {
                    self.adopt(&session, &Arc::new(record));
                }
            }
            BusMessage::Protocol { topic, payload } => {
                receive_protocol(self, registry, server, from, &topic, payload);
            }
        }
    }
}

/// Acts on a message of the protocol layer from node `from`.
fn receive_protocol(
    node: &Arc<ClusterNode>,
    registry: &RegistryHandle,
    server: &Arc<ServerInner>,
    from: NodeId,
    topic: &str,
    payload: Value,
) {
    let task_id = payload.get("taskId").and_then(Value::as_str);
    match (topic, task_id) {
        (CATALOG_CHANGE, _) => {
            if let Some(tool) = payload
                .get("define")
                .and_then(|tool| SharedTool::deserialize(tool).ok())
            {
                server.apply_shared(tool);
            } else if let Some(name) = payload.get("remove").and_then(Value::as_str) {
                server.remove_shared_here(name);
            }
        }
        (RESOURCE_UPDATED, _) => {
            if let Some(uri) = payload.get("uri").and_then(Value::as_str) {
                server.resource_updated_here(registry, uri);
                server.listeners.publish(&Change::Updated(uri.to_owned()));
            }
        }
        (LOG, _) => {
            let level = payload
                .get("level")
                .and_then(|level| crate::protocol::LoggingLevel::deserialize(level).ok());
            let frame = payload.get("frame").and_then(Value::as_str);
            if let (Some(level), Some(frame)) = (level, frame) {
                server.log_here(registry, level, &notification_frame(frame.to_owned()));
            }
        }
        (TASK_INPUT, Some(id)) => {
            // Only the node running the task answers; the others have no runner for it.
            let run = server.tasks.as_ref().and_then(|tasks| tasks.runner(id));
            let responses = payload.get("inputResponses").and_then(Value::as_object);
            if let (Some(run), Some(responses)) = (run, responses) {
                let input = crate::server::tasks::run::ProvideInput {
                    responses: responses.clone(),
                };
                let ticket = payload
                    .get("ticket")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let node = node.clone();
                actix_rt::spawn(async move {
                    // Answered once the new state is stored. A mailbox error: the task ended
                    // meanwhile, and its final state is stored.
                    let _ = run.send(input).await;
                    if let Some(ticket) = ticket {
                        node.publish(
                            Recipients::Node(from),
                            BusMessage::Protocol {
                                topic: TASK_INPUT_TAKEN.to_owned(),
                                payload: json!({ "ticket": ticket }),
                            },
                        );
                    }
                });
            }
        }
        (EVENTS_REPLAY, _) => replay_for(node, registry, from, &payload),
        (EVENTS_REPLAYED, _) => {
            if let Some(ticket) = payload.get("ticket").and_then(Value::as_u64) {
                node.replays.answered(ticket, replayed(&payload));
            }
        }
        (TASK_INPUT_TAKEN, _) => {
            if let (Some(tasks), Some(ticket)) =
                (&server.tasks, payload.get("ticket").and_then(Value::as_str))
            {
                tasks.taken(ticket);
            }
        }
        (TASK_CANCEL, Some(id)) => {
            if let Some(run) = server.tasks.as_ref().and_then(|tasks| tasks.runner(id)) {
                run.do_send(crate::server::tasks::run::CancelTask);
            }
        }
        (SESSIONLESS_CANCEL, _) => {
            let owner = payload.get("owner").and_then(Value::as_str);
            let id = payload
                .get("requestId")
                .and_then(|id| actix_mcp_actors::RequestId::deserialize(id).ok());
            if let (Some(owner), Some(id)) = (owner, id) {
                let reason = payload.get("reason").and_then(Value::as_str);
                registry.cancel_detached(owner, &id, reason.map(str::to_owned));
            }
        }
        (TASK_CHANGE, Some(id)) => {
            if let Some(task) = payload.get("task") {
                server.listeners.publish(&Change::Task {
                    id: id.to_owned(),
                    task: task.clone(),
                });
            }
        }
        _ => tracing::debug!(topic, "ignored a protocol message of an unknown topic"),
    }
}

/// Answers another node's [`EVENTS_REPLAY`] with what this node's session holds of the stream,
/// when it holds any of it (the node that served the stream); says nothing otherwise.
fn replay_for(node: &ClusterNode, registry: &RegistryHandle, from: NodeId, payload: &Value) {
    let field = |name: &str| payload.get(name).and_then(Value::as_u64);
    let (Some(session), Some(stream), Some(seq), Some(ticket)) = (
        payload.get("session").and_then(Value::as_str),
        field("stream"),
        field("after"),
        field("ticket"),
    ) else {
        return;
    };
    let Some(events) = registry
        .find(session)
        .and_then(|session| session.events().cloned())
    else {
        return;
    };
    let Replay::Events { events, gap } = events.replay_here(EventId { stream, seq }) else {
        return;
    };
    let events: Vec<Value> = events
        .iter()
        .map(|(id, data)| json!([id.seq, &**data]))
        .collect();
    node.publish(
        Recipients::Node(from),
        BusMessage::Protocol {
            topic: EVENTS_REPLAYED.to_owned(),
            payload: json!({ "ticket": ticket, "stream": stream, "events": events, "gap": gap }),
        },
    );
}

/// The [`Replay`] an [`EVENTS_REPLAYED`] carries (what is malformed in it, left out).
fn replayed(payload: &Value) -> Replay {
    let Some(stream) = payload.get("stream").and_then(Value::as_u64) else {
        return Replay::Unknown;
    };
    let events = payload
        .get("events")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|event| {
            let seq = event.get(0)?.as_u64()?;
            let data = event.get(1)?.as_str()?;
            Some((EventId { stream, seq }, std::sync::Arc::from(data)))
        })
        .collect();
    Replay::Events {
        events,
        gap: payload.get("gap").and_then(Value::as_bool).unwrap_or(false),
    }
}

fn notification_frame(json: String) -> Frame {
    Frame {
        kind: FrameKind::Notification,
        json: json.into(),
    }
}

/// The `subscriptions/listen` change a broadcast list-changed frame stands for.
fn change_of(frame: &str) -> Option<Change> {
    let method = serde_json::from_str::<Value>(frame)
        .ok()?
        .get("method")?
        .as_str()?
        .to_owned();
    match method.as_str() {
        method::NOTIFICATION_TOOLS_LIST_CHANGED => Some(Change::Tools),
        method::NOTIFICATION_PROMPTS_LIST_CHANGED => Some(Change::Prompts),
        method::NOTIFICATION_RESOURCES_LIST_CHANGED => Some(Change::Resources),
        _ => None,
    }
}
