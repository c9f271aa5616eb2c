//! The Tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28) on the client: a
//! `tools/call` the server answers with a task (`resultType: "task"`) is followed with
//! `tasks/get` until it ends.
//!
//! A client takes part by declaring the extension:
//! `ClientBuilder::extension(ClientExtension::tasks())`. The declaration goes in every 2026
//! request's `_meta` client capabilities, so a server that serves the extension may then
//! answer any `tools/call` of a tool with task support with a task instead of its result.
//! The server decides (the client cannot demand a task): a call that finishes at once is
//! still answered inline.
//!
//! - [`Client::call_tool`] and the other plain calls wait for such a task transparently: they
//!   resolve to the tool's result as if it had been answered inline.
//! - [`Client::call_tool_as_task`] returns a [`TaskHandle`] instead, to watch the task
//!   ([`TaskHandle::poll`]), answer its input by hand ([`TaskHandle::update`]), wait for it
//!   ([`TaskHandle::wait`], [`TaskHandle::result`]) or cancel it ([`TaskHandle::cancel`]).
//!
//! Waiting polls `tasks/get` at the task's `pollIntervalMs`, kept between
//! [`MIN_POLL_INTERVAL`] and [`MAX_POLL_INTERVAL`] ([`DEFAULT_POLL_INTERVAL`] when the server
//! gives none), within the call's timeout ([`CallOptions::timeout`], else the client's request
//! timeout) or [`TaskHandle::timeout`]. Meanwhile it listens for the task's
//! `notifications/tasks` on a `subscriptions/listen` stream ([`Client::listen`]), one per
//! client whatever the number of tasks waited for (its filter names them all, and it is
//! opened again when they change), whose full task state is taken as a poll's would be (and
//! a `tasks/get` follows each acknowledgement, so a change before the stream opened is not
//! missed); a server that refuses the stream, or a stream that breaks, leaves polling alone
//! ([`TaskHandle::listen`] turns it off). A task that
//! outlives the wait fails it with [`ClientError::Timeout`] (and a plain call's task is then
//! cancelled): give long tasks a longer [`CallOptions::timeout`]. A task in `input_required` is
//! answered with the builder's handlers (elicitation, sampling, roots), as a multi-round-trip
//! request is ([`mrtr`]), and the answers go back with `tasks/update`; with
//! [`ClientBuilder::auto_input`](super::ClientBuilder::auto_input) off, the wait fails with
//! [`ClientError::InputRequired`] instead and the handle stays usable.
//!
//! A [`TaskHandle`] dropped before its task ended sends `tasks/cancel` for it (without
//! waiting for the answer); [`TaskHandle::detach`] lets the task run on instead.
//!
//! Eras: our server serves the extension in 2026-07-28 only, and the extension defines no
//! 2025-11-25 binding, so in the 2025 era [`Client::call_tool_as_task`] fails with
//! [`ClientError::Unsupported`] (nothing is sent), as it does when the server does not declare
//! the extension ([`ClientError::InvalidConfig`] when the client does not). Plain calls are
//! unchanged in the 2025 era.
//!
//! Spec: <https://modelcontextprotocol.io/seps/2663-tasks-extension>

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::api::CallOptions;
use super::error::ClientError;
use super::task_watch::{Follower, Signal, TaskWatch};
use super::{Client, decode, mrtr, session};
use crate::protocol::v2026::TASKS_EXTENSION;
use crate::protocol::{
    CallToolResult, DetailedTask, InputRequiredResult, InputResponses, TaskStatus, method,
};

/// The shortest wait between two `tasks/get` polls, whatever the server asks.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The longest wait between two `tasks/get` polls, whatever the server asks.
pub const MAX_POLL_INTERVAL: Duration = Duration::from_secs(5);
/// The wait between two polls when the task gives no `pollIntervalMs`.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// A `tools/call` run as a task (or answered inline): see the [module](self).
///
/// Dropping it before its task ended sends `tasks/cancel` (see [`detach`](Self::detach)).
#[must_use = "a task handle cancels its task when dropped"]
pub struct TaskHandle {
    client: Client,
    /// The task as last seen; `None` when the server answered the call inline.
    task: Option<DetailedTask>,
    /// The inline answer.
    inline: Option<CallToolResult>,
    /// How long [`wait`](Self::wait) waits.
    timeout: Option<Duration>,
    /// The input keys already answered (keys are never reused within a task).
    answered: HashSet<String>,
    /// `tasks/update` requests sent.
    rounds: usize,
    /// Whether dropping the handle cancels the task.
    armed: bool,
    /// Whether waiting listens for the task's notifications.
    listen: bool,
    /// The task's place on the client's listen stream, once it waited (and while it works).
    follower: Option<Follower>,
}

impl fmt::Debug for TaskHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskHandle")
            .field("id", &self.id())
            .field("status", &self.status())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl TaskHandle {
    pub(crate) fn from_task(client: Client, task: DetailedTask, timeout: Option<Duration>) -> Self {
        let armed = !task.is_terminal();
        tracing::debug!(
            task = %task.task_id,
            status = ?task.status,
            "the server runs the call as a task"
        );
        Self {
            client,
            task: Some(task),
            inline: None,
            timeout,
            answered: HashSet::new(),
            rounds: 0,
            armed,
            listen: true,
            follower: None,
        }
    }

    fn from_inline(client: Client, result: CallToolResult) -> Self {
        Self {
            client,
            task: None,
            inline: Some(result),
            timeout: None,
            answered: HashSet::new(),
            rounds: 0,
            armed: false,
            listen: false,
            follower: None,
        }
    }

    /// The task's id; `None` when the server answered the call inline (no task was created).
    pub fn id(&self) -> Option<&str> {
        self.task.as_ref().map(|task| task.task_id.as_str())
    }

    /// The task's status as last seen (`completed` for a call answered inline).
    pub fn status(&self) -> TaskStatus {
        self.task
            .as_ref()
            .map_or(TaskStatus::Completed, |task| task.status)
    }

    /// The task as last seen, with its result, error or input requests when the last
    /// `tasks/get` carried them; `None` for a call answered inline.
    pub fn task(&self) -> Option<&DetailedTask> {
        self.task.as_ref()
    }

    /// Whether the task has ended (`completed`, `failed`, `cancelled`) as last seen.
    pub fn is_finished(&self) -> bool {
        self.status().is_terminal()
    }

    /// How long [`wait`](Self::wait) and [`result`](Self::result) wait at most (instead of the
    /// call's timeout); `None`: as long as the task lives.
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Whether [`wait`](Self::wait) also follows the task's `notifications/tasks` on a
    /// `subscriptions/listen` stream (default on); off, it only polls.
    pub fn listen(mut self, on: bool) -> Self {
        self.listen = on;
        if !on {
            self.follower = None;
        }
        self
    }

    /// One `tasks/get`: the task's status now (nothing is sent once it has ended, or for a
    /// call answered inline).
    ///
    /// # Errors
    /// See [`ClientError`]; `-32602` from the server once the task has expired.
    pub async fn poll(&mut self) -> Result<TaskStatus, ClientError> {
        let Some(task) = &self.task else {
            return Ok(TaskStatus::Completed);
        };
        if task.is_terminal() {
            return Ok(task.status);
        }
        let task = self.client.get_task(&task.task_id).await?;
        if task.is_terminal() {
            self.armed = false;
        }
        let status = task.status;
        self.task = Some(task);
        Ok(status)
    }

    /// Answers some or all of the task's outstanding input requests (`tasks/update`), for a
    /// client that does not answer them itself.
    ///
    /// # Errors
    /// See [`ClientError`]; [`ClientError::Protocol`] for a call answered inline.
    pub async fn update(&mut self, responses: InputResponses) -> Result<(), ClientError> {
        let Some(task) = &self.task else {
            return Err(ClientError::Protocol(
                "the call was answered inline: there is no task to update".into(),
            ));
        };
        let task_id = task.task_id.clone();
        self.answered.extend(responses.keys().cloned());
        self.rounds += 1;
        self.client.update_task(&task_id, responses).await
    }

    /// Waits for the task to end and returns the tool's result: polls `tasks/get` (see the
    /// [module](self)), answering its input requests with the builder's handlers. The handle
    /// stays usable after an error (a timeout, input to answer by hand).
    ///
    /// # Errors
    /// The task's JSON-RPC error ([`ClientError::Rpc`]) when it failed,
    /// [`ClientError::Cancelled`] when it was cancelled, [`ClientError::Timeout`] past the
    /// wait's limit, [`ClientError::InputRequired`] when input is needed and the client does
    /// not answer it itself, [`ClientError::InputFailed`] when a handler could not answer,
    /// and any error of the requests.
    ///
    /// # Cancel safety
    /// Dropping the future leaves the task running; dropping the handle cancels it.
    pub async fn wait(&mut self) -> Result<CallToolResult, ClientError> {
        match self.timeout {
            None => self.follow().await,
            Some(limit) => tokio::time::timeout(limit, self.follow())
                .await
                .map_err(|_| ClientError::Timeout(limit))?,
        }
    }

    /// [`wait`](Self::wait), consuming the handle: an error cancels the task (as dropping the
    /// handle does).
    ///
    /// # Errors
    /// As [`wait`](Self::wait).
    pub async fn result(mut self) -> Result<CallToolResult, ClientError> {
        self.wait().await
    }

    /// Cancels the task (`tasks/cancel`) and waits for the server's acknowledgement; nothing
    /// is sent for a task that has ended (as last seen) or a call answered inline.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn cancel(mut self) -> Result<(), ClientError> {
        self.armed = false;
        match &self.task {
            Some(task) if !task.is_terminal() => self.client.cancel_task(&task.task_id).await,
            _ => Ok(()),
        }
    }

    /// Lets the task run on without this handle (dropping it no longer cancels the task):
    /// its id, to follow later with [`Client::task`].
    pub fn detach(mut self) -> Option<String> {
        self.armed = false;
        self.task.take().map(|task| task.task_id)
    }

    async fn follow(&mut self) -> Result<CallToolResult, ClientError> {
        let mut read_result = false;
        loop {
            if let Some(result) = &self.inline {
                return Ok(result.clone());
            }
            let Some(task) = &self.task else {
                return Err(ClientError::Protocol("the task handle is empty".into()));
            };
            let interval = poll_interval(task);
            match task.status {
                TaskStatus::Completed => {
                    let Some(result) = task.result.clone() else {
                        if read_result {
                            return Err(ClientError::Protocol(format!(
                                "task {} completed without a result",
                                task.task_id
                            )));
                        }
                        // The creating answer carries no result: read the task.
                        read_result = true;
                        self.refresh().await?;
                        continue;
                    };
                    return decode(result);
                }
                TaskStatus::Failed => {
                    return Err(match task.error.clone() {
                        Some(error) => ClientError::Rpc(error),
                        None => ClientError::Protocol(format!(
                            "task {} failed without an error",
                            task.task_id
                        )),
                    });
                }
                TaskStatus::Cancelled => return Err(ClientError::Cancelled),
                TaskStatus::InputRequired => {
                    let pending = self.unanswered();
                    if let Some(round) = pending {
                        self.answer(round).await?;
                        self.refresh().await?;
                        continue;
                    }
                }
                TaskStatus::Working => {}
            }
            self.next_change(interval).await?;
        }
    }

    /// Waits for the task's next state: a notification on the client's listen stream, or the
    /// poll after `interval`.
    async fn next_change(&mut self, interval: Duration) -> Result<(), ClientError> {
        if self.listen && self.follower.is_none() {
            // Joined once: a refused or broken stream is not joined again.
            self.listen = false;
            if let Some(task_id) = self.id() {
                self.follower = TaskWatch::follow(&self.client, task_id);
            }
        }
        let Some(follower) = &mut self.follower else {
            tokio::time::sleep(interval).await;
            return self.refresh().await;
        };
        let signal = tokio::select! {
            () = tokio::time::sleep(interval) => Signal::Reread,
            signal = follower.next() => signal,
        };
        match signal {
            Signal::Changed(task) if Some(task.task_id.as_str()) == self.id() => {
                if task.is_terminal() {
                    self.armed = false;
                }
                self.task = Some(*task);
                Ok(())
            }
            Signal::Changed(_) | Signal::Quiet => Ok(()),
            Signal::Reread => self.refresh().await,
            Signal::Broken => {
                self.follower = None;
                self.refresh().await
            }
        }
    }

    /// One `tasks/get`, whatever the status last seen.
    async fn refresh(&mut self) -> Result<(), ClientError> {
        if let Some(task) = &self.task {
            let task = self.client.get_task(&task.task_id).await?;
            if task.is_terminal() {
                self.armed = false;
            }
            self.task = Some(task);
        }
        Ok(())
    }

    /// The task's input requests not answered yet, as a round for [`mrtr::fulfil`].
    fn unanswered(&self) -> Option<InputRequiredResult> {
        let mut requests = self.task.as_ref()?.input_requests.clone()?;
        requests.retain(|key, _| !self.answered.contains(key));
        (!requests.is_empty()).then(|| InputRequiredResult {
            input_requests: Some(requests),
            ..InputRequiredResult::default()
        })
    }

    /// Answers `round` with the builder's handlers and sends the answers with `tasks/update`.
    async fn answer(&mut self, round: InputRequiredResult) -> Result<(), ClientError> {
        let inner = &self.client.inner;
        if !inner.auto_input {
            return Err(ClientError::InputRequired(Box::new(round)));
        }
        if self.rounds >= inner.max_input_rounds {
            return Err(ClientError::Protocol(format!(
                "the task still asks for input after {} rounds",
                inner.max_input_rounds
            )));
        }
        let responses = mrtr::fulfil(&inner.handlers, &round).await?;
        self.update(responses).await
    }
}

impl Drop for TaskHandle {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let Some(task) = &self.task else {
            return;
        };
        // Sent through the session without waiting for the answer: no executor is needed
        // here, and nothing blocks.
        let (reply, _) = oneshot::channel();
        self.client.inner.session.do_send(session::Call {
            method: Arc::from(method::TASKS_CANCEL),
            params: Some(json!({ "taskId": task.task_id })),
            timeout: self.client.inner.timeout,
            progress: None,
            reply,
            listener: None,
        });
    }
}

/// The wait before the next poll of `task`.
fn poll_interval(task: &DetailedTask) -> Duration {
    task.poll_interval_ms
        .map_or(DEFAULT_POLL_INTERVAL, Duration::from_millis)
        .clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)
}

impl Client {
    /// Whether the client declares the Tasks extension.
    pub(crate) fn declares_tasks(&self) -> bool {
        self.inner
            .handlers
            .extensions
            .iter()
            .any(|(id, _)| id == TASKS_EXTENSION)
    }

    /// `tools/call`, letting the server run it as a task: a handle on the task, or on the
    /// result when the server answered inline. See the [module](self).
    ///
    /// # Errors
    /// Nothing is sent, and the error is [`ClientError::Unsupported`] in the 2025 era or when
    /// the server does not declare the extension, [`ClientError::InvalidConfig`] when the
    /// client does not; otherwise as [`call_tool`](Self::call_tool).
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<TaskHandle, ClientError> {
        self.call_tool_as_task_with(name, arguments, CallOptions::default())
            .await
    }

    /// [`call_tool_as_task`](Self::call_tool_as_task) with options: the timeout bounds the
    /// creating request and, by default, the handle's [`wait`](TaskHandle::wait).
    ///
    /// The client's middleware do not run around it.
    ///
    /// # Errors
    /// As [`call_tool_as_task`](Self::call_tool_as_task).
    pub async fn call_tool_as_task_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: CallOptions,
    ) -> Result<TaskHandle, ClientError> {
        self.check_tasks()?;
        let params = Self::call_tool_params(name, arguments)?;
        let timeout = options.timeout.or(self.inner.timeout);
        match self
            .drive(method::TOOLS_CALL, Some(params), options)
            .await?
        {
            super::CallOutcome::Task(task) => {
                Ok(TaskHandle::from_task(self.clone(), *task, timeout))
            }
            super::CallOutcome::Complete(value) => {
                Ok(TaskHandle::from_inline(self.clone(), decode(value)?))
            }
            super::CallOutcome::InputRequired(_) => Err(ClientError::Protocol(
                "tools/call: input rounds were not driven".into(),
            )),
        }
    }

    /// A handle on a task this client created earlier (one `tasks/get`), for instance one
    /// [`detach`](TaskHandle::detach)ed. Dropping it cancels the task, as any handle.
    ///
    /// # Errors
    /// As [`call_tool_as_task`](Self::call_tool_as_task); `-32602` for an unknown task.
    pub async fn task(&self, task_id: &str) -> Result<TaskHandle, ClientError> {
        self.check_tasks()?;
        let task = self.get_task(task_id).await?;
        Ok(TaskHandle::from_task(
            self.clone(),
            task,
            self.inner.timeout,
        ))
    }

    /// `tasks/get`: the task now.
    ///
    /// # Errors
    /// See [`ClientError`]; `-32602` for an unknown or expired task.
    pub async fn get_task(&self, task_id: &str) -> Result<DetailedTask, ClientError> {
        let params = json!({ "taskId": task_id });
        self.request(method::TASKS_GET, Some(params), CallOptions::default())
            .await
    }

    /// `tasks/update`: answers to some or all of a task's outstanding input requests.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn update_task(
        &self,
        task_id: &str,
        responses: InputResponses,
    ) -> Result<(), ClientError> {
        let params = json!({ "taskId": task_id, "inputResponses": responses });
        let _: Value = self
            .request(method::TASKS_UPDATE, Some(params), CallOptions::default())
            .await?;
        Ok(())
    }

    /// `tasks/cancel`: asks the server to cancel a task (a task that has ended stays as it
    /// is).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), ClientError> {
        let params = json!({ "taskId": task_id });
        let _: Value = self
            .request(method::TASKS_CANCEL, Some(params), CallOptions::default())
            .await?;
        Ok(())
    }

    /// `Unsupported` unless tasks can be used: the 2026 era, declared on both sides.
    fn check_tasks(&self) -> Result<(), ClientError> {
        if !self.is_v2026() {
            return Err(ClientError::Unsupported(
                "tasks need protocol 2026-07-28; this session speaks 2025-11-25".into(),
            ));
        }
        if !self.declares_tasks() {
            return Err(ClientError::InvalidConfig(format!(
                "the client does not declare the {TASKS_EXTENSION} extension \
                 (ClientExtension::tasks())"
            )));
        }
        if self.server_extension(TASKS_EXTENSION).is_none() {
            return Err(ClientError::Unsupported(format!(
                "the server does not declare the {TASKS_EXTENSION} extension"
            )));
        }
        Ok(())
    }
}
