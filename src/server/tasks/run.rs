//! The task actor: [`TaskRun`] executes one task of the Tasks extension, independent of the
//! HTTP request that created it.
//!
//! Started by `route/tasks.rs` when a `tools/call` becomes a task, with the tool's future
//! (already polled once) and the task's own detached [`RequestScope`] (its cancellation token
//! and running tool calls; its outlet discards everything: a task sends no progress or log
//! messages). Registered in the server's [`TaskService`] under the task id, where
//! [`ProvideInput`] (`tasks/update`) and [`CancelTask`] (`tasks/cancel`) find it.
//!
//! Lifecycle: Started (runs the first round supervised: timeout, panics) → Running: each round
//! ends with a result (`completed`, `isError` results too), a JSON-RPC error or a panic
//! (`failed`), or `input_required`: the task parks with its input requests under keys unique for
//! its lifetime until [`ProvideInput`] has answered every one, then the tool runs again with
//! the answers and its request state (as a retried multi-round-trip request would) →
//! Stopping, once a terminal status is written and no round runs: after a round's outcome, or
//! after [`CancelTask`] (the task is `cancelled` at once, then the scope is cancelled and the
//! running round, which sees `cx.cancelled()`, ends), or when the task's time to live elapses. Every change is written to the [`TaskStore`](super::TaskStore) before it is
//! published to `subscriptions/listen` streams as `notifications/tasks`; `stopped` cancels the
//! scope and unregisters the actor.
//!
//! Spec: <https://modelcontextprotocol.io/seps/2663-tasks-extension>

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use actix::{
    Actor, ActorContext, ActorFutureExt, AsyncContext, AtomicResponse, Context, Handler, Message,
    ResponseActFuture, WrapFuture,
};
use futures::future::BoxFuture;
use serde_json::Value;

use actix_mcp_actors::{
    ErrorObject,
    dev::{
        Counting, Frame, FrameKind, FrameSink, Holds, RequestScope, Running, Started,
        SupervisedError,
    },
};

use crate::error::ErrorKind;
use crate::protocol::v2026::missing_capability;
use crate::protocol::{
    CallToolResult, DetailedTask, ForVersion, InputRequests, InputRequiredResult, InputResponses,
    TaskStatus,
};
use crate::server::context::RequestContext;
use crate::server::handler::{HandlerError, HandlerParts};
use crate::server::listen::Change;
use crate::server::mrtr::RoundInput;
use crate::server::tool::CallHandler;
use crate::server::{ErrorSite, ExceptionReport, ServerInner};

use super::{StoredTask, TaskService, TaskSlot, timestamp};

/// A task's outlet: a task has no stream, so nothing travels.
#[derive(Debug)]
pub(crate) struct Discard;

impl FrameSink for Discard {
    fn deliver(&self, frame: Frame) -> Result<(), Frame> {
        Err(frame)
    }

    fn accepts(&self, _: FrameKind) -> bool {
        false
    }
}

/// The future of one invocation of a tool.
pub(crate) type ToolFuture = BoxFuture<'static, Result<CallToolResult, HandlerError>>;

/// What one round of a task's tool answers.
pub(crate) type ToolOutput = Result<CallToolResult, HandlerError>;

/// How one round of a tool ended, as the task records it.
#[derive(Debug)]
pub(crate) enum RoundOutcome {
    /// A result (`isError` results included): `completed`.
    Result(CallToolResult),
    /// The tool needs input: `input_required`.
    InputRequired(InputRequiredResult),
    /// A JSON-RPC error (internal errors and panics included): `failed`.
    Failed(ErrorObject),
    /// The work was cancelled: `cancelled`.
    Cancelled,
}

/// Who ran what, for error reports.
pub(crate) struct Invoked<'a> {
    pub(crate) server: &'a ServerInner,
    pub(crate) tool: &'a str,
    pub(crate) arguments: &'a Value,
}

impl Invoked<'_> {
    fn report(&self, message: String, panicked: bool) {
        self.server.report(ExceptionReport {
            message,
            panicked,
            site: ErrorSite::Tool {
                name: self.tool.to_owned(),
                arguments: self.arguments.clone(),
            },
            session_id: None,
        });
    }

    /// Classifies a supervised invocation's outcome. Unlike a plain `tools/call`, where every
    /// failure becomes an `isError` result, a task records internal errors and panics as
    /// `failed` with a JSON-RPC error (tool errors and timeouts stay `isError` results).
    pub(crate) fn outcome(
        &self,
        outcome: Result<Result<CallToolResult, HandlerError>, SupervisedError>,
    ) -> RoundOutcome {
        let tool = self.tool;
        match outcome {
            Ok(Ok(result)) => RoundOutcome::Result(result),
            Ok(Err(HandlerError::Rejected(rejection))) => {
                RoundOutcome::Result(CallToolResult::error_text(format!(
                    "invalid arguments for tool `{tool}`: {rejection}"
                )))
            }
            Ok(Err(HandlerError::Failed(error))) => match error.kind() {
                ErrorKind::ToolFailed => {
                    RoundOutcome::Result(CallToolResult::error_text(error.message()))
                }
                // 2026-07-28 (the only revision with tasks) has no -32042: its elicitations
                // are the task's input.
                ErrorKind::UrlElicitationRequired => match error.url_elicitations_as_input() {
                    Some(input) => RoundOutcome::InputRequired(input),
                    None => RoundOutcome::Failed(error.to_error_object()),
                },
                ErrorKind::InputRequired => match error.as_input_required() {
                    Some(input) => RoundOutcome::InputRequired(input),
                    None => RoundOutcome::Failed(ErrorObject::internal(
                        "an input_required answer without its result",
                    )),
                },
                ErrorKind::Internal => {
                    self.report(error.message().to_owned(), false);
                    RoundOutcome::Failed(error.to_error_object())
                }
                _ => RoundOutcome::Failed(error.to_error_object()),
            },
            Err(SupervisedError::Panicked(message)) => {
                self.report(message, true);
                RoundOutcome::Failed(ErrorObject::internal(format!("tool `{tool}` panicked")))
            }
            Err(SupervisedError::TimedOut(limit)) => {
                RoundOutcome::Result(CallToolResult::error_text(format!(
                    "tool `{tool}` timed out after {} ms",
                    limit.as_millis()
                )))
            }
            Err(_) => RoundOutcome::Cancelled,
        }
    }
}

/// Everything a [`TaskRun`] needs to run its tool again.
pub(crate) struct TaskWork {
    /// The tool's handler.
    pub(crate) handler: CallHandler,
    /// The tool's name (for reports and messages).
    pub(crate) tool: String,
    /// The call's arguments.
    pub(crate) arguments: Arc<Value>,
    /// The task's context (its detached scope; no round input).
    pub(crate) cx: RequestContext,
    /// The task's scope.
    pub(crate) scope: RequestScope,
    /// Each round's time limit.
    pub(crate) timeout: Option<Duration>,
    /// What the request that created the task held (its admission slots, its byte budget):
    /// the task keeps it for its life.
    #[allow(dead_code, reason = "kept for its drop")]
    pub(crate) holds: Holds,
    /// The task's place under its caller's cap.
    #[allow(dead_code, reason = "kept for its drop")]
    pub(crate) slot: Option<TaskSlot>,
    /// The task's count in the gauges of the transport that created it.
    #[allow(dead_code, reason = "kept for its drop")]
    pub(crate) counting: Counting,
}

/// The actor running one task. See the module docs.
pub(crate) struct TaskRun {
    server: Arc<ServerInner>,
    service: Arc<TaskService>,
    work: TaskWork,
    /// The first round, begun by the request that created the task, until `started`.
    first: Option<Running<ToolOutput>>,
    task: DetailedTask,
    expires_at: Option<SystemTime>,
    /// Who created the task (kept on every write).
    owner: Option<String>,
    ttl: Duration,
    /// Every input key shown to the client so far (keys are never reused).
    used_keys: HashSet<String>,
    /// Outstanding input requests: the key the client sees → the key the tool chose.
    outstanding: HashMap<String, String>,
    /// This round's answers, by the tool's keys.
    answers: InputResponses,
    /// The request state the tool asked to get back with the answers.
    round_state: Option<String>,
    /// Consecutive rounds that asked for nothing but a retry (bounded).
    empty_rounds: u32,
    /// Whether a round of the tool is running (the actor outlives a cancellation until it
    /// ends, so the tool gets to see it).
    round_running: bool,
}

impl fmt::Debug for TaskRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskRun")
            .field("task_id", &self.task.task_id)
            .field("tool", &self.work.tool)
            .field("status", &self.task.status)
            .field("outstanding", &self.outstanding.len())
            .finish()
    }
}

/// At most this many consecutive rounds may answer `input_required` with nothing to ask.
const MAX_EMPTY_ROUNDS: u32 = 16;

/// How many times a task's final state is written again when its write fails.
const FINAL_WRITE_RETRIES: u32 = 4;

/// The wait before the first of those writes (doubled before each next one: 1.5 s in all).
const FINAL_WRITE_BACKOFF: Duration = Duration::from_millis(100);

impl TaskRun {
    /// A task whose `task` (status `working`) is stored already, to run `first` to its end.
    pub(crate) fn new(
        server: Arc<ServerInner>,
        service: Arc<TaskService>,
        work: TaskWork,
        first: Running<ToolOutput>,
        stored: StoredTask,
        ttl: Duration,
    ) -> Self {
        Self {
            server,
            service,
            work,
            first: Some(first),
            task: stored.task,
            expires_at: stored.expires_at,
            owner: stored.owner.clone(),
            ttl,
            used_keys: HashSet::new(),
            outstanding: HashMap::new(),
            answers: InputResponses::new(),
            round_state: None,
            empty_rounds: 0,
            round_running: false,
        }
    }

    fn invoke(&self, input: Option<RoundInput>) -> ToolFuture {
        let cx = self.work.cx.with_input(input);
        (self.work.handler)(HandlerParts::shared(self.work.arguments.clone(), cx))
    }

    /// Runs one round of the tool as an invocation of the task's scope (supervised: time
    /// limit, panics, cancellation); its outcome comes back to [`Self::finish_round`].
    fn start_round(&mut self, fut: ToolFuture, ctx: &mut Context<Self>) {
        match self.work.scope.start(fut, self.work.timeout) {
            Started::Done(outcome) => self.conclude_round(outcome, ctx),
            Started::Running(running) => self.await_round(running, ctx),
        }
    }

    /// Waits for a round's invocation still running.
    fn await_round(&mut self, running: Running<ToolOutput>, ctx: &mut Context<Self>) {
        self.round_running = true;
        ctx.spawn(running.into_actor(self).map(|outcome, act, ctx| {
            act.round_running = false;
            act.conclude_round(outcome, ctx);
        }));
    }

    fn conclude_round(
        &mut self,
        outcome: Result<ToolOutput, SupervisedError>,
        ctx: &mut Context<Self>,
    ) {
        let invoked = Invoked {
            server: &self.server,
            tool: &self.work.tool,
            arguments: &self.work.arguments,
        };
        let outcome = invoked.outcome(outcome);
        self.finish_round(outcome, ctx);
    }

    /// A key for the client that no earlier request of this task used.
    fn fresh_key(&mut self, key: &str) -> String {
        let mut candidate = key.to_owned();
        let mut n = 2;
        while self.used_keys.contains(&candidate) {
            candidate = format!("{key}#{n}");
            n += 1;
        }
        self.used_keys.insert(candidate.clone());
        candidate
    }

    fn finish_round(&mut self, outcome: RoundOutcome, ctx: &mut Context<Self>) {
        if self.task.is_terminal() {
            // Cancelled while the round ran: the round has seen it, the actor is done.
            ctx.stop();
            return;
        }
        match outcome {
            RoundOutcome::Result(mut result) => {
                result.adapt_to(self.work.cx.protocol_version());
                self.task.status = TaskStatus::Completed;
                self.task.result = Some(serde_json::to_value(&result).unwrap_or(Value::Null));
            }
            RoundOutcome::InputRequired(input) => {
                self.round_state = input.request_state;
                self.answers.clear();
                self.outstanding.clear();
                let requests = input.input_requests.unwrap_or_default();
                let caps = self.work.cx.client_capabilities();
                let undeclared = requests
                    .values()
                    .map(|request| (request.method.clone(), request.capability(caps)))
                    .find(|(_, (_, declared))| !declared);
                if let Some((method, (required, _))) = undeclared {
                    // Never ask for what the request did not declare (as for any MRTR answer).
                    self.task.status = TaskStatus::Failed;
                    self.task.error = Some(missing_capability(required, &method));
                } else if requests.is_empty() {
                    self.empty_rounds += 1;
                    if self.empty_rounds <= MAX_EMPTY_ROUNDS {
                        let retry = RoundInput {
                            responses: InputResponses::new(),
                            state: self.round_state.take(),
                        };
                        let fut = self.invoke(Some(retry));
                        self.start_round(fut, ctx);
                        return;
                    }
                    self.task.status = TaskStatus::Failed;
                    self.task.error = Some(ErrorObject::internal(format!(
                        "tool `{}` kept asking to be retried without asking for input",
                        self.work.tool
                    )));
                } else {
                    self.empty_rounds = 0;
                    let mut shown = InputRequests::new();
                    for (key, request) in requests {
                        let wire = self.fresh_key(&key);
                        self.outstanding.insert(wire.clone(), key);
                        shown.insert(wire, request);
                    }
                    self.task.status = TaskStatus::InputRequired;
                    self.task.input_requests = Some(shown);
                }
            }
            RoundOutcome::Failed(error) => {
                self.task.status = TaskStatus::Failed;
                self.task.error = Some(error);
            }
            RoundOutcome::Cancelled => {
                self.task.status = TaskStatus::Cancelled;
            }
        }
        if self.task.is_terminal() {
            self.task.input_requests = None;
        }
        ctx.wait(self.persist());
    }

    /// Writes the task's state to the store, then publishes it; stops the actor once the
    /// task is terminal and no round runs (or the store no longer accepts it: expired, or
    /// ended elsewhere). A final state whose write fails is written again, up to
    /// [`FINAL_WRITE_RETRIES`] times with a doubling backoff; then the failure is reported to
    /// the server's exception reporter (a later state overwrites an earlier one, so only the
    /// final one cannot be lost).
    fn persist(&mut self) -> ResponseActFuture<Self, ()> {
        self.task.last_updated_at = timestamp(SystemTime::now());
        let stored = StoredTask {
            task: self.task.clone(),
            expires_at: self.expires_at,
            owner: self.owner.clone(),
        };
        let retries = if self.task.is_terminal() {
            FINAL_WRITE_RETRIES
        } else {
            0
        };
        let service = self.service.clone();
        Box::pin(
            async move {
                let mut backoff = FINAL_WRITE_BACKOFF;
                let mut attempt = 0;
                loop {
                    match service.store().update(stored.clone()).await {
                        Err(err) if attempt < retries => {
                            tracing::warn!(task = %stored.task.task_id, %err, attempt, "could not store a task's final state; trying again");
                            tokio::time::sleep(backoff).await;
                            backoff *= 2;
                            attempt += 1;
                        }
                        written => return (written, attempt + 1),
                    }
                }
            }
            .into_actor(self)
            .map(|(written, attempts), act, ctx| {
                    match written {
                        Ok(true) => act.server.publish_change(&Change::Task {
                            id: act.task.task_id.clone(),
                            task: act.task.to_notification_params(),
                        }),
                        Ok(false) => ctx.stop(),
                        Err(err) if act.task.is_terminal() => {
                            let message = format!(
                                "the final state ({}) of task {} could not be stored after {attempts} attempts: {err}",
                                serde_json::to_value(act.task.status)
                                    .ok()
                                    .and_then(|status| status.as_str().map(str::to_owned))
                                    .unwrap_or_default(),
                                act.task.task_id,
                            );
                            tracing::error!(task = %act.task.task_id, %err, attempts, "could not store a task's final state");
                            act.server.report(ExceptionReport {
                                message,
                                panicked: false,
                                site: ErrorSite::Tool {
                                    name: act.work.tool.clone(),
                                    arguments: Value::clone(&act.work.arguments),
                                },
                                session_id: None,
                            });
                        }
                        Err(err) => {
                            tracing::warn!(task = %act.task.task_id, %err, "could not store a task");
                        }
                    }
                    if act.task.is_terminal() && !act.round_running {
                        ctx.stop();
                    }
                }),
        )
    }
}

impl Actor for TaskRun {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let Some(first) = self.first.take() {
            self.await_round(first, ctx);
        }
        ctx.run_later(self.ttl, |act, ctx| {
            tracing::debug!(task = %act.task.task_id, "a task outlived its time to live");
            ctx.stop();
        });
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        self.work.scope.cancel();
        self.service.unregister(&self.task.task_id);
    }
}

/// Answers to some of the task's outstanding input requests. Sent by `tasks/update`; the
/// reply comes once the task's new state is stored. Unknown and answered keys are ignored;
/// once every outstanding key is answered the tool runs again.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(crate) struct ProvideInput {
    /// Answers by the keys the client was shown.
    pub(crate) responses: InputResponses,
}

impl Handler<ProvideInput> for TaskRun {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, msg: ProvideInput, ctx: &mut Self::Context) -> Self::Result {
        let unchanged = || AtomicResponse::new(Box::pin(actix::fut::ready(())));
        if self.task.status != TaskStatus::InputRequired {
            return unchanged();
        }
        let mut accepted = false;
        for (key, answer) in msg.responses {
            if let Some(tool_key) = self.outstanding.remove(&key) {
                self.answers.insert(tool_key, answer);
                if let Some(shown) = &mut self.task.input_requests {
                    shown.shift_remove(&key);
                }
                accepted = true;
            }
        }
        if !accepted {
            return unchanged();
        }
        if self.outstanding.is_empty() {
            self.task.status = TaskStatus::Working;
            self.task.input_requests = None;
            let input = RoundInput {
                responses: std::mem::take(&mut self.answers),
                state: self.round_state.take(),
            };
            let fut = self.invoke(Some(input));
            self.start_round(fut, ctx);
        }
        AtomicResponse::new(self.persist())
    }
}

/// Cancel the task (`tasks/cancel`): it becomes `cancelled` at once, then its scope is
/// cancelled, so the running round sees `cx.cancelled()` (and the actor stops when the round
/// ends); a terminal task is left as it is. The reply comes once the new state is stored.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(crate) struct CancelTask;

impl Handler<CancelTask> for TaskRun {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, _: CancelTask, ctx: &mut Self::Context) -> Self::Result {
        if self.task.is_terminal() {
            return AtomicResponse::new(Box::pin(actix::fut::ready(())));
        }
        self.task.status = TaskStatus::Cancelled;
        self.task.status_message = Some("cancelled by the client".into());
        self.task.input_requests = None;
        // Spawned after the round, so a round the actor has not polled yet starts (and polls
        // the tool) before it learns of the cancellation: the tool always gets to see it.
        ctx.spawn(actix::fut::ready(()).map(|(), act: &mut Self, _| act.work.scope.cancel()));
        AtomicResponse::new(self.persist())
    }
}

/// End the task because its node shuts down (the drain's deadline passed with the task still
/// running): it becomes `failed` with `reason` (its status message and its error), stored so
/// that every node reports it, then its scope is cancelled; a terminal task is left as it is.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(crate) struct ShutDownTask {
    /// Why, as the task will tell.
    pub(crate) reason: String,
}

impl Handler<ShutDownTask> for TaskRun {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, msg: ShutDownTask, ctx: &mut Self::Context) -> Self::Result {
        if self.task.is_terminal() {
            return AtomicResponse::new(Box::pin(actix::fut::ready(())));
        }
        self.task.status = TaskStatus::Failed;
        self.task.error = Some(ErrorObject::internal(msg.reason.clone()));
        self.task.status_message = Some(msg.reason);
        self.task.input_requests = None;
        ctx.spawn(actix::fut::ready(()).map(|(), act: &mut Self, _| act.work.scope.cancel()));
        AtomicResponse::new(self.persist())
    }
}
