//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the wire: the task a
//! `tools/call` may answer with (`resultType: "task"`), the detailed task `tasks/get` and
//! `notifications/tasks` carry, and the params of `tasks/get`, `tasks/update` and
//! `tasks/cancel`.
//!
//! Not wire-compatible with the experimental tasks of 2025-11-25 ([`super::tasks`]): the
//! durations are `ttlMs` and `pollIntervalMs`, the result or error is inlined in the task, input
//! requests travel in the task, and there is no `tasks/result` or `tasks/list`.
//!
//! Spec: <https://modelcontextprotocol.io/seps/2663-tasks-extension>

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::meta::Meta;
use super::tasks::TaskStatus;
use super::{InputRequests, InputResponses, ResultType};
use actix_mcp_actors::ErrorObject;

/// A task with everything its status carries: what `tasks/get` answers and what
/// `notifications/tasks` pushes. `resultType` is added by [`to_get_result`](Self::to_get_result)
/// and [`to_create_result`](Self::to_create_result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// The server-chosen, unguessable id.
    pub task_id: String,
    /// Where the task is in its lifecycle.
    pub status: TaskStatus,
    /// Human-readable detail on the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time.
    pub created_at: String,
    /// ISO 8601 time of the last change.
    pub last_updated_at: String,
    /// How long after creation the server keeps the task, in milliseconds; `null`: unlimited
    /// (always written).
    #[serde(default)]
    pub ttl_ms: Option<u64>,
    /// How often the client should poll, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// `input_required`: every outstanding input request, by key (keys are never reused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// `completed`: the original request's result (a `CallToolResult`, `isError` ones too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// `failed`: the JSON-RPC error the request failed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

impl DetailedTask {
    /// Whether the task has reached `completed`, `failed` or `cancelled` (final).
    pub fn is_terminal(&self) -> bool {
        self.status.is_terminal()
    }

    /// The `tasks/get` result: the task with `resultType: "complete"`.
    pub fn to_get_result(&self) -> Value {
        self.to_object(ResultType::Complete, true)
    }

    /// The `CreateTaskResult` a `tools/call` answers with: the task's metadata only (no
    /// `result`, `error` or `inputRequests`) with `resultType: "task"`.
    pub fn to_create_result(&self) -> Value {
        self.to_object(ResultType::Task, false)
    }

    /// The params of `notifications/tasks`: the whole task.
    pub fn to_notification_params(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| Value::Object(Map::new()))
    }

    fn to_object(&self, result_type: ResultType, detailed: bool) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or_else(|_| Value::Object(Map::new()));
        if let Value::Object(map) = &mut value {
            if !detailed {
                for key in ["inputRequests", "result", "error"] {
                    map.remove(key);
                }
            }
            map.insert("resultType".into(), Value::from(result_type.as_str()));
        }
        value
    }
}

/// Params of `tasks/get` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRequestParams {
    /// The task.
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `tasks/update`: answers to some or all of a task's outstanding input requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskRequestParams {
    /// The task.
    pub task_id: String,
    /// Answers by the keys of the input requests they answer.
    #[serde(default)]
    pub input_responses: InputResponses,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn task(status: TaskStatus) -> DetailedTask {
        DetailedTask {
            task_id: "t1".into(),
            status,
            status_message: None,
            created_at: "2026-07-28T10:00:00.000Z".into(),
            last_updated_at: "2026-07-28T10:00:01.000Z".into(),
            ttl_ms: Some(60_000),
            poll_interval_ms: Some(500),
            input_requests: None,
            result: Some(json!({ "content": [] })),
            error: None,
        }
    }

    #[test]
    fn a_create_result_is_flat_and_carries_no_payload() {
        assert_eq!(
            task(TaskStatus::Working).to_create_result(),
            json!({
                "taskId": "t1",
                "status": "working",
                "createdAt": "2026-07-28T10:00:00.000Z",
                "lastUpdatedAt": "2026-07-28T10:00:01.000Z",
                "ttlMs": 60000,
                "pollIntervalMs": 500,
                "resultType": "task",
            })
        );
    }

    #[test]
    fn a_get_result_inlines_the_result_and_an_unlimited_ttl_is_null() {
        let mut done = task(TaskStatus::Completed);
        done.ttl_ms = None;
        let value = done.to_get_result();
        assert_eq!(value["resultType"], "complete");
        assert_eq!(value["result"], json!({ "content": [] }));
        assert_eq!(value["ttlMs"], Value::Null);
        assert!(value.get("requestState").is_none());
    }
}
