//! The fixtures of the Tasks extension scenarios (`tasks-*`, SEP-2663), 2026-07-28 only.

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{no_args, schema};

/// The fixtures of the Tasks extension scenarios (`tasks-*`, SEP-2663), 2026-07-28 only.
pub(crate) fn tasks_fixtures(
    builder: actix_mcp::ServerBuilder,
    store: Option<Arc<dyn actix_mcp::TaskStore>>,
) -> actix_mcp::ServerBuilder {
    use actix_mcp::TaskConfig;
    use actix_mcp::protocol::{
        ElicitAction, ElicitRequestParams, ElicitResult, InputRequest, InputRequiredResult,
        TaskSupport,
    };

    /// Arguments of `greet`.
    #[derive(Deserialize, JsonSchema)]
    struct GreetArgs {
        name: String,
    }

    /// Arguments of `slow_compute`.
    #[derive(Deserialize, JsonSchema)]
    struct SlowComputeArgs {
        /// How long the computation takes, in seconds.
        seconds: f64,
        /// A label echoed in the result.
        label: Option<String>,
    }

    /// Arguments of `confirm_delete`.
    #[derive(Deserialize, JsonSchema)]
    struct FilenameArg {
        filename: String,
    }

    /// Waits `seconds`, or until the call (or its task) is cancelled: `false` then.
    async fn work_for(cx: &RequestContext, seconds: f64) -> bool {
        let duration = Duration::from_secs_f64(seconds.clamp(0.0, 3_600.0));
        tokio::select! {
            () = tokio::time::sleep(duration) => true,
            () = cx.cancelled() => false,
        }
    }

    /// Asks for a form (an MRTR input request, or a task's input request inside a task).
    fn ask(key: &str, message: &str, properties: Value) -> InputRequiredResult {
        let params = ElicitRequestParams::form(
            message,
            schema(json!({"type": "object", "properties": properties})),
        );
        InputRequiredResult::ask(key, InputRequest::elicitation(&params))
    }

    /// The accepted content of the answer to `key`, if the user accepted.
    fn accepted(cx: &RequestContext, key: &str) -> Option<serde_json::Map<String, Value>> {
        cx.input_response_as::<ElicitResult>(key)
            .filter(|answer| answer.action == ElicitAction::Accept)
            .map(|answer| answer.content.unwrap_or_default())
    }

    builder
        .tasks({
            let config = TaskConfig::default()
                .ttl(Duration::from_secs(300))
                .poll_interval(Duration::from_millis(200));
            match store {
                Some(store) => config.store(store),
                None => config,
            }
        })
        .tool(ToolDef::new("greet", |Params(args): Params<GreetArgs>| async move {
            format!("Hello, {}!", args.name)
        }).description("Greets someone (never a task)"))
        .tool(
            ToolDef::new("slow_compute", |Params(args): Params<SlowComputeArgs>, cx: RequestContext| async move {
                let label = args.label.unwrap_or_else(|| "computation".to_owned());
                if work_for(&cx, args.seconds).await {
                    Ok(format!("Computed {label} in {} s", args.seconds))
                } else {
                    Err(McpError::tool(format!("{label} was cancelled")))
                }
            }).description("Computes for `seconds` seconds; may run as a task")
            .task_support(TaskSupport::Optional),
        )
        .tool(
            ToolDef::new("failing_job", |cx: RequestContext| async move {
                work_for(&cx, 1.0).await;
                Err::<String, _>(McpError::tool("the job failed"))
            }).description("Fails with a tool error after about a second; always a task")
            .input_schema(no_args())
            .task_support(TaskSupport::Required),
        )
        .tool(
            ToolDef::new("protocol_error_job", |cx: RequestContext| async move {
                work_for(&cx, 0.2).await;
                if !cx.is_cancelled() {
                    panic!("protocol_error_job crashed on purpose");
                }
                "cancelled"
            }).description("Crashes after a moment: its task fails with a JSON-RPC error")
            .input_schema(no_args())
            .task_support(TaskSupport::Required),
        )
        .tool(
            ToolDef::new("confirm_delete", |Params(args): Params<FilenameArg>, cx: RequestContext| async move {
                // The lookup is the work that makes this call a task; the question comes after.
                work_for(&cx, 0.05).await;
                match accepted(&cx, "confirm") {
                    None if cx.input_response("confirm").is_none() => Err(McpError::input_required(ask(
                        "confirm",
                        &format!("Delete {}?", args.filename),
                        json!({"confirm": {"type": "boolean"}}),
                    ))),
                    Some(content) if content.get("confirm") == Some(&Value::Bool(true)) => Ok(format!("Deleted {}", args.filename)),
                    _ => Ok(format!("Kept {}", args.filename)),
                }
            }).description("Looks the file up, then asks for confirmation before deleting it")
            .task_support(TaskSupport::Optional),
        )
        .tool(
            ToolDef::new("multi_input", |cx: RequestContext| async move {
                work_for(&cx, 0.05).await;
                match (accepted(&cx, "name"), accepted(&cx, "confirm")) {
                    (Some(name), Some(confirm)) => Ok(format!(
                        "name={}, confirm={}",
                        name.get("name").cloned().unwrap_or(Value::Null),
                        confirm.get("confirm").cloned().unwrap_or(Value::Null)
                    )),
                    _ => Err(McpError::input_required(
                        ask("name", "Your name?", json!({"name": {"type": "string"}})).and(
                            "confirm",
                            InputRequest::elicitation(&ElicitRequestParams::form(
                                "Proceed?",
                                schema(json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}})),
                            )),
                        ),
                    )),
                }
            }).description("Asks two questions at once, then answers")
            .input_schema(no_args())
            .task_support(TaskSupport::Optional),
        )
        .tool(
            ToolDef::new("test_tool_with_task", |cx: RequestContext| async move {
                let Some(answer) = accepted(&cx, "user_name") else {
                    return Err(McpError::input_required(ask("user_name", "What is your name?", json!({"name": {"type": "string"}}))));
                };
                let name = answer.get("name").and_then(Value::as_str).unwrap_or("stranger").to_owned();
                work_for(&cx, 0.5).await;
                Ok(format!("Hello, {name}! (task {})", cx.task_id().unwrap_or("none")))
            }).description("Asks for a name (MRTR), then works on it as a task")
            .input_schema(no_args())
            .task_support(TaskSupport::Required),
        )
}
