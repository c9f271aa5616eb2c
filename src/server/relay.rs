//! The protocol layer's messages between the nodes of a cluster: the topics of
//! [`BusMessage::Protocol`] the server publishes on its registry's relay, and the
//! helpers that publish them. The cluster (`crate::cluster`) receives them; the server never
//! imports the cluster, only the runtime's relay.

use std::time::Duration;

#[cfg(feature = "http")]
use actix_mcp_actors::RequestId;
use actix_mcp_actors::{BusMessage, RegistryHandle};
use serde_json::json;

/// The topic of a [`BusMessage::Protocol`] telling the other nodes that a resource changed.
pub(crate) const RESOURCE_UPDATED: &str = "resourceUpdated";

/// The topic of a [`BusMessage::Protocol`] carrying a log message for every session.
pub(crate) const LOG: &str = "log";
/// The topic of a [`BusMessage::Protocol`] carrying a client's `tasks/update` answers to the
/// node running the task, with a ticket that node sends back under [`TASK_INPUT_TAKEN`] once
/// the task's new state is stored.
pub(crate) const TASK_INPUT: &str = "taskInput";
/// The topic of a [`BusMessage::Protocol`] telling the node that relayed `tasks/update`
/// answers (the ticket's) that the task's new state is stored.
#[cfg(feature = "http")]
pub(crate) const TASK_INPUT_TAKEN: &str = "taskInputTaken";
/// How long a node that relayed `tasks/update` answers waits for [`TASK_INPUT_TAKEN`] before
/// it reads the store to see whether they were taken.
pub(crate) const TASK_INPUT_WAIT: Duration = Duration::from_secs(5);
/// The topic of a [`BusMessage::Protocol`] asking the node that served a request's stream
/// (one kept on its node: `SessionEvents::kept_on_its_node`) for its events after one:
/// `session`, `stream`, `after` (a sequence number) and a `ticket` that node answers under
/// [`EVENTS_REPLAYED`].
#[cfg(feature = "http")]
pub(crate) const EVENTS_REPLAY: &str = "eventsReplay";
/// The topic of a [`BusMessage::Protocol`] answering [`EVENTS_REPLAY`] to the node that asked:
/// its `ticket`, the `events` (`[seq, data]` each) and whether some were evicted (`gap`).
#[cfg(feature = "http")]
pub(crate) const EVENTS_REPLAYED: &str = "eventsReplayed";
/// How long a node waits for another to answer [`EVENTS_REPLAY`].
#[cfg(feature = "http")]
pub(crate) const EVENTS_REPLAY_WAIT: Duration = Duration::from_secs(1);
/// The topic of a [`BusMessage::Protocol`] asking the node running a task to cancel it.
pub(crate) const TASK_CANCEL: &str = "taskCancel";
/// The topic of a [`BusMessage::Protocol`] carrying a task's change to the `subscriptions/listen`
/// streams of the other nodes.
pub(crate) const TASK_CHANGE: &str = "taskChange";
/// The topic of a [`BusMessage::Protocol`] carrying an authenticated caller's
/// `notifications/cancelled` for one of its requests without a session that does not run on
/// the node it reached: `owner` (the caller's key), `requestId` and `reason`. The node running
/// that owner's request of that id cancels it; no other owner's request is touched.
#[cfg(feature = "http")]
pub(crate) const SESSIONLESS_CANCEL: &str = "sessionlessCancel";

/// Tells the other nodes of `registry`'s cluster, if it has any, that `uri` changed (they
/// notify their subscribed sessions and listen streams).
pub(crate) fn relay_resource_updated(registry: &RegistryHandle, uri: &str) {
    if let Some(relay) = registry.relay() {
        relay.publish(BusMessage::Protocol {
            topic: RESOURCE_UPDATED.to_owned(),
            payload: json!({ "uri": uri }),
        });
    }
}

/// Tells the other nodes of `registry`'s cluster, if it has any, that `owner` cancels its
/// request without a session `id` (see [`SESSIONLESS_CANCEL`]).
#[cfg(feature = "http")]
pub(crate) fn relay_sessionless_cancel(
    registry: &RegistryHandle,
    owner: &str,
    id: &RequestId,
    reason: Option<String>,
) {
    if let Some(relay) = registry.relay() {
        relay.publish(BusMessage::Protocol {
            topic: SESSIONLESS_CANCEL.to_owned(),
            payload: json!({ "owner": owner, "requestId": id, "reason": reason }),
        });
    }
}
