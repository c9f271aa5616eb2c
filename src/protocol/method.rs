//! Method names of every request and notification in revisions 2025-11-25 and 2026-07-28
//! (and the 2026 Tasks extension).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/schema>

/// Request `initialize` (client → server): opens the session.
pub const INITIALIZE: &str = "initialize";
/// Request `ping` (either direction): liveness check answered with `{}`.
pub const PING: &str = "ping";
/// Request `tools/list` (client → server): paginated tool listing.
pub const TOOLS_LIST: &str = "tools/list";
/// Request `tools/call` (client → server): invokes a tool.
pub const TOOLS_CALL: &str = "tools/call";
/// Request `prompts/list` (client → server): paginated prompt listing.
pub const PROMPTS_LIST: &str = "prompts/list";
/// Request `prompts/get` (client → server): renders a prompt.
pub const PROMPTS_GET: &str = "prompts/get";
/// Request `resources/list` (client → server): paginated resource listing.
pub const RESOURCES_LIST: &str = "resources/list";
/// Request `resources/read` (client → server): reads a resource's contents.
pub const RESOURCES_READ: &str = "resources/read";
/// Request `resources/templates/list` (client → server): paginated template listing.
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
/// Request `resources/subscribe` (client → server): asks for update notifications.
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// Request `resources/unsubscribe` (client → server): cancels a subscription.
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
/// Request `completion/complete` (client → server): argument autocompletion.
pub const COMPLETION_COMPLETE: &str = "completion/complete";
/// Request `logging/setLevel` (client → server): sets the minimum log level.
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// Request `sampling/createMessage` (server → client): asks the client's LLM for a message.
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// Request `elicitation/create` (server → client): asks the user for input.
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// Request `roots/list` (server → client): asks for the client's roots.
pub const ROOTS_LIST: &str = "roots/list";
/// Request `tasks/get` (either direction): polls a task's status.
pub const TASKS_GET: &str = "tasks/get";
/// Request `tasks/result` (either direction): waits for a task's result.
pub const TASKS_RESULT: &str = "tasks/result";
/// Request `tasks/list` (either direction): paginated task listing.
pub const TASKS_LIST: &str = "tasks/list";
/// Request `tasks/cancel` (either direction): cancels a task.
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// Request `server/discover` (client → server, 2026-07-28): versions, capabilities, info.
pub const SERVER_DISCOVER: &str = "server/discover";
/// Request `subscriptions/listen` (client → server, 2026-07-28): a long-lived stream of
/// change notifications.
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// Request `tasks/update` (client → server, Tasks extension): input for a task.
pub const TASKS_UPDATE: &str = "tasks/update";

/// Notification `notifications/initialized` (client → server): handshake finished.
pub const NOTIFICATION_INITIALIZED: &str = "notifications/initialized";
/// Notification `notifications/cancelled` (either direction): a request was cancelled.
pub const NOTIFICATION_CANCELLED: &str = "notifications/cancelled";
/// Notification `notifications/progress` (either direction): progress of a request.
pub const NOTIFICATION_PROGRESS: &str = "notifications/progress";
/// Notification `notifications/message` (server → client): a log message.
pub const NOTIFICATION_MESSAGE: &str = "notifications/message";
/// Notification `notifications/tools/list_changed` (server → client).
pub const NOTIFICATION_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// Notification `notifications/prompts/list_changed` (server → client).
pub const NOTIFICATION_PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
/// Notification `notifications/resources/list_changed` (server → client).
pub const NOTIFICATION_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
/// Notification `notifications/resources/updated` (server → client): a subscribed resource changed.
pub const NOTIFICATION_RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// Notification `notifications/roots/list_changed` (client → server).
pub const NOTIFICATION_ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
/// Notification `notifications/elicitation/complete` (server → client): a URL elicitation finished.
pub const NOTIFICATION_ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
/// Notification `notifications/tasks/status` (either direction): a task changed status.
pub const NOTIFICATION_TASKS_STATUS: &str = "notifications/tasks/status";
/// Notification `notifications/subscriptions/acknowledged` (server → client, 2026-07-28): the
/// first message of a `subscriptions/listen` stream.
pub const NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED: &str =
    "notifications/subscriptions/acknowledged";
/// Notification `notifications/tasks` (server → client, Tasks extension): a task's state.
pub const NOTIFICATION_TASKS: &str = "notifications/tasks";

/// Every request method name defined by revisions 2025-11-25 and 2026-07-28.
pub const REQUESTS: &[&str] = &[
    INITIALIZE,
    PING,
    TOOLS_LIST,
    TOOLS_CALL,
    PROMPTS_LIST,
    PROMPTS_GET,
    RESOURCES_LIST,
    RESOURCES_READ,
    RESOURCES_TEMPLATES_LIST,
    RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE,
    COMPLETION_COMPLETE,
    LOGGING_SET_LEVEL,
    SAMPLING_CREATE_MESSAGE,
    ELICITATION_CREATE,
    ROOTS_LIST,
    TASKS_GET,
    TASKS_RESULT,
    TASKS_LIST,
    TASKS_CANCEL,
    SERVER_DISCOVER,
    SUBSCRIPTIONS_LISTEN,
    TASKS_UPDATE,
];

/// A request's method name to keep: the protocol's own as a `'static` string (no copy for
/// the requests every server serves), any other as a copy.
#[cfg(feature = "server")]
pub(crate) fn kept(name: &str) -> std::borrow::Cow<'static, str> {
    use std::borrow::Cow;
    Cow::Borrowed(match name {
        TOOLS_CALL => TOOLS_CALL,
        TOOLS_LIST => TOOLS_LIST,
        PROMPTS_GET => PROMPTS_GET,
        PROMPTS_LIST => PROMPTS_LIST,
        RESOURCES_READ => RESOURCES_READ,
        RESOURCES_LIST => RESOURCES_LIST,
        RESOURCES_TEMPLATES_LIST => RESOURCES_TEMPLATES_LIST,
        COMPLETION_COMPLETE => COMPLETION_COMPLETE,
        INITIALIZE => INITIALIZE,
        PING => PING,
        _ => return Cow::Owned(name.to_owned()),
    })
}

/// Every notification method name defined by revisions 2025-11-25 and 2026-07-28.
pub const NOTIFICATIONS: &[&str] = &[
    NOTIFICATION_INITIALIZED,
    NOTIFICATION_CANCELLED,
    NOTIFICATION_PROGRESS,
    NOTIFICATION_MESSAGE,
    NOTIFICATION_TOOLS_LIST_CHANGED,
    NOTIFICATION_PROMPTS_LIST_CHANGED,
    NOTIFICATION_RESOURCES_LIST_CHANGED,
    NOTIFICATION_RESOURCES_UPDATED,
    NOTIFICATION_ROOTS_LIST_CHANGED,
    NOTIFICATION_ELICITATION_COMPLETE,
    NOTIFICATION_TASKS_STATUS,
    NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
    NOTIFICATION_TASKS,
];

/// Requests the 2026-07-28 revision removed: a 2026-07-28 request naming one gets `-32601`
/// (HTTP 404).
pub const REMOVED_IN_2026: &[&str] = &[
    INITIALIZE,
    PING,
    LOGGING_SET_LEVEL,
    RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE,
    TASKS_RESULT,
    TASKS_LIST,
];

/// Requests that exist only in the 2026-07-28 revision: a session request naming one gets
/// `-32601`.
pub const ADDED_IN_2026: &[&str] = &[SERVER_DISCOVER, SUBSCRIPTIONS_LISTEN, TASKS_UPDATE];

/// Whether `name` is a request or notification defined by the spec (custom methods may not reuse it).
pub fn is_protocol_method(name: &str) -> bool {
    REQUESTS.contains(&name) || NOTIFICATIONS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_spec_methods_only() {
        assert!(is_protocol_method(TOOLS_CALL));
        assert!(is_protocol_method("notifications/cancelled"));
        assert!(is_protocol_method("tasks/result"));
        assert!(!is_protocol_method("tools/call2"));
        assert!(!is_protocol_method("x-vendor/do"));
        assert!(!is_protocol_method(""));
    }

    #[test]
    fn no_duplicates() {
        let mut all: Vec<&str> = REQUESTS.iter().chain(NOTIFICATIONS).copied().collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
