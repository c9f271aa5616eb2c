//! The Tasks extension's methods (2026-07-28, `io.modelcontextprotocol/tasks`): which
//! `tools/call` becomes a task, and `tasks/get`, `tasks/update`, `tasks/cancel`.
//!
//! A call becomes a task only when the server enables the extension, the tool declares task
//! support, and the request declares the extension in its client capabilities. The tool's
//! first poll then decides: `input_required` at once stays a multi-round-trip exchange (input
//! is gathered before the task starts); a result at once is answered inline (an optional
//! task) or as an already finished task (a required one); anything still pending is a task,
//! which runs on in a [`TaskRun`](crate::server::tasks::run::TaskRun) actor. The task is stored
//! before the tool first runs (so it counts against the limit, and `tasks/get` finds it as soon
//! as the `CreateTaskResult` arrives); a call answered inline deletes it. At the limit, an
//! optional task runs as any call and a required one is refused as busy.
//!
//! Spec: <https://modelcontextprotocol.io/seps/2663-tasks-extension>

use std::sync::Arc;
use std::time::SystemTime;

use actix::Actor;
use serde_json::{Value, json};

use actix_mcp_actors::{
    ErrorCode, RequestId,
    dev::{Counted, Outlet, Reply, Request, RequestScope, Started},
};

use crate::error::{McpError, code};
use crate::protocol::v2026::{TASKS_EXTENSION, missing_capability};
use crate::protocol::{
    CallToolResult, ForVersion, InputRequest, TaskRequestParams, TaskStatus, TaskSupport,
    UpdateTaskRequestParams,
};
use crate::server::ServerInner;
use crate::server::context::RequestContext;
use crate::server::handler::HandlerParts;
use crate::server::listen::Change;
use crate::server::mrtr::Answer;
use crate::server::tasks::run::{
    CancelTask, Discard, Invoked, ProvideInput, RoundOutcome, TaskRun, TaskWork,
};
use crate::server::tasks::{
    StoredTask, TaskService, TaskStoreError, new_task, new_task_id, timestamp,
};
use crate::server::tool::ToolDef;

use super::support::{take_params, to_raw};
use super::v2026::declares;

/// The client capability that declares the extension, as a `ClientCapabilities` fragment.
fn extension_capability() -> Value {
    json!({ "extensions": { TASKS_EXTENSION: {} } })
}

/// `-32021` naming the extension unless the request declares it.
fn require_extension(cx: &RequestContext) -> Result<(), McpError> {
    let required = extension_capability();
    if declares(cx.client_capabilities(), &required) {
        Ok(())
    } else {
        Err(McpError::from(missing_capability(
            required,
            TASKS_EXTENSION,
        )))
    }
}

/// The owner key of the request's caller (`None` without bearer auth).
pub(super) fn caller(cx: &RequestContext) -> Option<String> {
    cx.identity().map(|identity| identity.owner_key())
}

/// The task service, for a request that may use it: `-32601` when the server does not serve
/// the extension, `-32021` when the request did not declare it.
fn gate<'a>(
    server: &'a ServerInner,
    cx: &RequestContext,
) -> Result<&'a Arc<TaskService>, McpError> {
    let Some(service) = &server.tasks else {
        return Err(McpError::method_not_found(cx.method()));
    };
    require_extension(cx)?;
    Ok(service)
}

/// Whether a call of `def` may become a task.
pub(super) enum Placement {
    /// Answered inline, as any call.
    Inline,
    /// Possibly a task of this service.
    Task(Arc<TaskService>),
}

/// Where a call of a tool with task support runs.
///
/// # Errors
/// `-32021` for a tool that requires a task, called without the extension; `-32602` when such a
/// tool is called where no task can exist (a 2025-11-25 session, or a server without the
/// extension).
pub(super) fn placement(
    server: &ServerInner,
    cx: &RequestContext,
    def: &ToolDef,
) -> Result<Placement, McpError> {
    let required = def.task_support == TaskSupport::Required;
    let service = match &server.tasks {
        Some(service) if cx.is_v2026() => service,
        _ if required => {
            return Err(McpError::invalid_params(format!(
                "tool `{}` runs only as a task (the Tasks extension of protocol 2026-07-28)",
                def.name()
            )));
        }
        _ => return Ok(Placement::Inline),
    };
    match require_extension(cx) {
        Ok(()) => Ok(Placement::Task(service.clone())),
        Err(error) if required => Err(error),
        Err(_) => Ok(Placement::Inline),
    }
}

/// A round's outcome as the reply of a call answered inline: as any `tools/call` would answer
/// (an internal error or a panic is an `isError` result there).
fn inline(outcome: RoundOutcome, cx: &RequestContext, tool: &str) -> Result<Answer, McpError> {
    match outcome {
        RoundOutcome::Result(mut result) => {
            result.adapt_to(cx.protocol_version());
            Ok(Answer::Done(to_raw(&result)))
        }
        RoundOutcome::Failed(error) if error.code == ErrorCode::INTERNAL_ERROR => {
            let mut result =
                CallToolResult::error_text(format!("tool `{tool}` failed with an internal error"));
            result.adapt_to(cx.protocol_version());
            Ok(Answer::Done(to_raw(&result)))
        }
        RoundOutcome::InputRequired(input) => Ok(Answer::InputRequired(Box::new(input))),
        RoundOutcome::Failed(error) => Err(McpError::from(error)),
        RoundOutcome::Cancelled => Err(McpError::internal("the tool call was cancelled")),
    }
}

/// A `tools/call` that may become a task (see the module docs): answered inline, with
/// `input_required`, or with a `CreateTaskResult` once the task is stored; `None` when there
/// is no room for another task and the call may run as any call.
///
/// The task is stored (`working`) before the tool first runs, so the tool never runs under a
/// task id that does not exist, and the limit counts it; a call answered inline deletes it.
pub(super) async fn call_as_task(
    server: &Arc<ServerInner>,
    service: Arc<TaskService>,
    cx: &RequestContext,
    def: &ToolDef,
    arguments: Arc<Value>,
) -> Result<Option<Answer>, McpError> {
    let config = &service.config;
    let ttl = config.ttl_for(def.task_ttl);
    let now = SystemTime::now();
    let task_id = new_task_id();
    let mut stored = StoredTask {
        task: new_task(task_id.clone(), now, ttl, config.poll_interval),
        expires_at: Some(now + ttl),
        owner: cx.identity().map(|identity| identity.owner_key()),
    };
    // A running task counts against its caller's cap for as long as it runs.
    let slot = match service.reserve(stored.owner.as_deref()) {
        Ok(slot) => slot,
        Err(limit) if def.task_support != TaskSupport::Required => {
            tracing::debug!(limit, "the caller's task cap is full: the call runs inline");
            return Ok(None);
        }
        Err(limit) => {
            return Err(McpError::code(
                code::SERVER_BUSY.0,
                format!("too many tasks of this caller (limit {limit}); retry later"),
            ));
        }
    };
    if let Err(error) = create(&service, &stored).await {
        if def.task_support != TaskSupport::Required && error.error_code() == code::SERVER_BUSY {
            return Ok(None);
        }
        return Err(error);
    }
    let scope = RequestScope::detached(
        RequestId::from(format!("task-{task_id}")),
        Outlet::new(Discard),
        None,
    );
    let task_cx = cx.for_task(scope.clone(), &task_id);
    let work = TaskWork {
        handler: def.handler.clone(),
        tool: def.name().to_owned(),
        arguments: arguments.clone(),
        cx: task_cx.with_input(None),
        scope: scope.clone(),
        timeout: def.timeout.or(server.config.tool_timeout),
        // The request's admission slots and byte budget stay held while the task runs.
        holds: cx.scope().share_holds(),
        slot,
        counting: cx.scope().metrics().hold(Counted::Task),
    };
    let invoked = Invoked {
        server,
        tool: def.name(),
        arguments: &arguments,
    };
    let fut = def.invoke(HandlerParts::shared(arguments.clone(), task_cx));
    // Begun here, in the task's scope: one that does not finish at once is the task's.
    let outcome = match scope.start(fut, work.timeout) {
        Started::Done(outcome) => outcome,
        Started::Running(running) => {
            let reply = to_raw(&stored.task.to_create_result());
            let run =
                TaskRun::new(server.clone(), service.clone(), work, running, stored, ttl).start();
            service.register(&task_id, run);
            return Ok(Some(Answer::Done(reply)));
        }
    };
    scope.cancel();
    let outcome = invoked.outcome(outcome);
    if matches!(outcome, RoundOutcome::InputRequired(_))
        || def.task_support != TaskSupport::Required
    {
        // Answered at once: no task after all.
        if let Err(err) = service.store().delete(&task_id).await {
            tracing::warn!(task = %task_id, %err, "could not delete an unused task");
        }
        return inline(outcome, cx, def.name()).map(Some);
    }
    // A task is required: the call is a task that finished at once.
    let task = &mut stored.task;
    match outcome {
        RoundOutcome::Result(mut result) => {
            result.adapt_to(cx.protocol_version());
            task.status = TaskStatus::Completed;
            task.result = Some(serde_json::to_value(&result)?);
        }
        RoundOutcome::Failed(error) => {
            task.status = TaskStatus::Failed;
            task.error = Some(error);
        }
        RoundOutcome::InputRequired(_) | RoundOutcome::Cancelled => {
            task.status = TaskStatus::Cancelled;
        }
    }
    task.last_updated_at = timestamp(SystemTime::now());
    if let Err(err) = service.store().update(stored.clone()).await {
        return Err(McpError::internal(err.to_string()));
    }
    Ok(Some(Answer::Done(to_raw(&stored.task.to_create_result()))))
}

/// Stores a new task: `SERVER_BUSY` at the limit.
async fn create(service: &TaskService, stored: &StoredTask) -> Result<(), McpError> {
    match service
        .store()
        .create(stored.clone(), service.config.max_tasks)
        .await
    {
        Ok(()) => Ok(()),
        Err(TaskStoreError::Full(limit)) => Err(McpError::code(
            code::SERVER_BUSY.0,
            format!("too many tasks (limit {limit}); retry later"),
        )),
        Err(err) => Err(McpError::internal(err.to_string())),
    }
}

/// `tasks/get`: the task as stored, with its result, error or outstanding input requests.
pub(super) async fn get_task(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &mut Request,
) -> Result<Reply, McpError> {
    let service = gate(server, cx)?;
    let p: TaskRequestParams = take_params(request)?;
    let stored = service.get(&p.task_id, caller(cx).as_deref()).await?;
    Ok(to_raw(&stored.task.to_get_result()))
}

/// `tasks/update`: hands the answers to the task's actor and acknowledges once the task's
/// new state is stored (answers to unknown or answered keys are ignored). In a cluster, the
/// answers to a task running on another node are relayed to it, and acknowledged when that
/// node says it stored them; without its word within
/// [`TASK_INPUT_WAIT`](crate::server::relay::TASK_INPUT_WAIT), the store decides: answers still
/// outstanding there are `-32603`, to be sent again.
pub(super) async fn update_task(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &mut Request,
) -> Result<Reply, McpError> {
    let service = gate(server, cx)?;
    let p: UpdateTaskRequestParams = take_params(request)?;
    let caller = caller(cx);
    let stored = service.get(&p.task_id, caller.as_deref()).await?;
    // A malformed answer to a request the task shows is an error, not another round.
    if let Some(shown) = &stored.task.input_requests {
        for (key, answer) in &p.input_responses {
            if let Some(request) = shown.get(key) {
                InputRequest::check_response(&request.method, answer).map_err(|err| {
                    McpError::invalid_params(format!("inputResponses[\"{key}\"] is {err}"))
                })?;
            }
        }
    }
    if stored.task.status == TaskStatus::InputRequired {
        if let Some(run) = service.runner(&p.task_id) {
            // A mailbox error means the task just ended: nothing is waiting for the answers.
            let _ = run
                .send(ProvideInput {
                    responses: p.input_responses,
                })
                .await;
        } else if let Some(relay) = server.relay() {
            // The task runs on another node of a cluster (or has just ended, here or there).
            relay_input(service, &*relay, &p, caller.as_deref(), &stored.task).await?;
        }
    }
    Ok(to_raw(&json!({})))
}

/// Hands `tasks/update` answers to the node of the cluster running the task, and returns once
/// that node stored the task's new state, so a `tasks/get` that follows the acknowledgement,
/// on any node, sees the answers taken.
async fn relay_input(
    service: &TaskService,
    relay: &dyn actix_mcp_actors::dev::Relay,
    p: &UpdateTaskRequestParams,
    caller: Option<&str>,
    stored: &crate::protocol::DetailedTask,
) -> Result<(), McpError> {
    let outstanding = |task: &crate::protocol::DetailedTask| {
        task.status == TaskStatus::InputRequired
            && task
                .input_requests
                .as_ref()
                .is_some_and(|shown| p.input_responses.keys().any(|key| shown.contains_key(key)))
    };
    if !outstanding(stored) {
        // Only unknown or answered keys: nothing to hand over.
        return Ok(());
    }
    let mut ticket = service.relay_ticket();
    relay.publish(actix_mcp_actors::BusMessage::Protocol {
        topic: crate::server::relay::TASK_INPUT.to_owned(),
        payload: json!({
            "taskId": p.task_id,
            "inputResponses": p.input_responses,
            "ticket": ticket.ticket,
        }),
    });
    if ticket
        .taken_within(crate::server::relay::TASK_INPUT_WAIT)
        .await
    {
        return Ok(());
    }
    // No word: the task may have ended meanwhile (its runner gone, nobody to answer), or the
    // node running it may be gone, or the bus lost a message. The store tells which.
    let now = service.get(&p.task_id, caller).await?;
    if !outstanding(&now.task) {
        return Ok(());
    }
    let wait = crate::server::relay::TASK_INPUT_WAIT.as_secs();
    tracing::warn!(task = %p.task_id, wait, "no node took a task's answers");
    // Not `McpError::internal`, whose message the client never sees: this one tells it what
    // to do.
    Err(McpError::code(
        ErrorCode::INTERNAL_ERROR.0,
        format!(
            "the node running task {} did not take the answers within {wait} s; \
             send them again (answered keys are ignored)",
            p.task_id
        ),
    ))
}

/// `tasks/cancel`: cancels a task that has not ended (cooperatively: its tool sees
/// `cx.cancelled()`) and acknowledges; a terminal task is left as it is.
pub(super) async fn cancel_task(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &mut Request,
) -> Result<Reply, McpError> {
    let service = gate(server, cx)?;
    let p: TaskRequestParams = take_params(request)?;
    let stored = service.get(&p.task_id, caller(cx).as_deref()).await?;
    if stored.task.is_terminal() {
        return Ok(to_raw(&json!({})));
    }
    match service.runner(&p.task_id) {
        Some(run) => {
            let _ = run.send(CancelTask).await;
        }
        None => {
            // No actor of this process runs it (it ended, or runs on another node of a
            // cluster, which is told to stop it): record the cancellation for whoever reads
            // the store.
            server.relay_protocol(
                crate::server::relay::TASK_CANCEL,
                json!({ "taskId": p.task_id }),
            );
            let mut task = stored.task;
            task.status = TaskStatus::Cancelled;
            task.status_message = Some("cancelled by the client".into());
            task.input_requests = None;
            task.last_updated_at = timestamp(SystemTime::now());
            let written = service
                .store()
                .update(StoredTask {
                    task: task.clone(),
                    expires_at: stored.expires_at,
                    owner: stored.owner,
                })
                .await;
            if written == Ok(true) {
                server.publish_change(&Change::Task {
                    id: task.task_id.clone(),
                    task: task.to_notification_params(),
                });
            }
        }
    }
    Ok(to_raw(&json!({})))
}
