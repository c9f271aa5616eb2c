//! `examples/tasks.rs`.

use serde_json::json;

use super::serve;
use crate::common::task_tools::{until_status, v2026};

/// A call of `report` declaring the Tasks extension is answered with a working task at once;
/// polled with `tasks/get`, the task completes with the report the tool wrote.
#[tokio::test]
async fn tasks_example_answers_a_long_call_with_a_task_that_completes() {
    let server = serve("tasks", &["{port}"]).await;
    let arguments = json!({ "topic": "tides" });
    let call = json!({ "name": "report", "arguments": arguments });
    let created = v2026(&server.url, "tools/call", call).await;
    let created = &created["result"];
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "working", "{created}");
    assert_eq!(created["pollIntervalMs"], 250, "{created}");
    let task_id = created["taskId"].as_str().unwrap();

    let done = until_status(&server.url, task_id, "completed").await;
    let text = &done["result"]["content"][0]["text"];
    assert_eq!(text, "report on tides: 4 sections", "{done}");
}
