//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the server: a
//! `tools/call` of a tool that supports tasks, from a 2026 request declaring the extension,
//! may be answered with a task handle while the tool runs on.
//!
//! Enabled with [`ServerBuilder::tasks`](crate::ServerBuilder::tasks) and a [`TaskConfig`]
//! (limits, durations, the [`TaskStore`]). A tool opts in with
//! [`ToolDef::task_support`](crate::ToolDef::task_support).
//!
//! Who does what:
//! - `route/tasks.rs` decides, per call, whether a call becomes a task (the tool's first poll:
//!   a call answered at once is answered inline, an `input_required` answer at once stays a
//!   multi-round-trip exchange), and serves `tasks/get`, `tasks/update` and `tasks/cancel`.
//! - `TaskService` (here) owns the store and the running tasks of this process.
//! - `TaskRun` (`run.rs`) is the actor executing one task, independent of the HTTP request
//!   that created it: it runs each round of the tool supervised (timeout, panics), parks the
//!   task in `input_required` until `tasks/update` answers every outstanding key, writes each
//!   change to the store and publishes it to `subscriptions/listen` streams.
//! - [`TaskStore`] keeps the tasks' observable state until they expire.
//!
//! Spec: <https://modelcontextprotocol.io/seps/2663-tasks-extension>

pub(crate) mod run;
pub mod store;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix::Addr;
use tokio::sync::oneshot;

use crate::error::McpError;
use crate::protocol::DetailedTask;

pub use store::{InMemoryTaskStore, StoredTask, TaskStore, TaskStoreError};

use self::run::TaskRun;

/// Settings of the Tasks extension. Defaults are not part of semver.
///
/// ```
/// use std::time::Duration;
/// use actix_mcp::TaskConfig;
///
/// let config = TaskConfig::default()
///     .max_tasks(1_000)
///     .ttl(Duration::from_secs(600))
///     .poll_interval(Duration::from_millis(250));
/// ```
#[derive(Clone)]
#[must_use]
pub struct TaskConfig {
    pub(crate) max_tasks: usize,
    pub(crate) max_tasks_per_principal: usize,
    pub(crate) ttl: Duration,
    pub(crate) max_ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) store: Arc<dyn TaskStore>,
}

impl fmt::Debug for TaskConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskConfig")
            .field("max_tasks", &self.max_tasks)
            .field("max_tasks_per_principal", &self.max_tasks_per_principal)
            .field("ttl", &self.ttl)
            .field("max_ttl", &self.max_ttl)
            .field("poll_interval", &self.poll_interval)
            .finish()
    }
}

impl Default for TaskConfig {
    fn default() -> Self {
        Self {
            max_tasks: 10_000,
            max_tasks_per_principal: 1_000,
            ttl: Duration::from_secs(3_600),
            max_ttl: Duration::from_secs(24 * 3_600),
            poll_interval: Duration::from_millis(500),
            store: Arc::new(InMemoryTaskStore::new()),
        }
    }
}

impl TaskConfig {
    /// At most this many live tasks at once (default 10 000); at the limit, a call that may run
    /// without a task runs inline, and one that needs a task is refused as busy.
    pub fn max_tasks(mut self, max: usize) -> Self {
        self.max_tasks = max.max(1);
        self
    }

    /// At most this many tasks of one identity running at once on this node (default 1 000;
    /// on a bearer-protected endpoint: without authentication there is no identity to count).
    /// At the limit, as at [`max_tasks`](Self::max_tasks), a call that may run without a task
    /// runs inline and one that needs a task is refused as busy. With the admission slots a
    /// running task keeps, this bounds what one identity can take from the others.
    pub fn max_tasks_per_principal(mut self, max: usize) -> Self {
        self.max_tasks_per_principal = max.max(1);
        self
    }

    /// How long a task is kept after its creation (`ttlMs`; default one hour). When it
    /// elapses, a task still running is cancelled and the task is forgotten.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// The longest time to live a tool may ask for with
    /// [`ToolDef::task_ttl`](crate::ToolDef::task_ttl) (default one day).
    pub fn max_ttl(mut self, max: Duration) -> Self {
        self.max_ttl = max.max(Duration::from_millis(1));
        self
    }

    /// The polling interval suggested to clients (`pollIntervalMs`; default 500 ms).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// Where tasks are kept (default: an [`InMemoryTaskStore`]).
    pub fn store(mut self, store: impl TaskStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// The time to live of a task whose tool asked for `requested`.
    pub(crate) fn ttl_for(&self, requested: Option<Duration>) -> Duration {
        requested.unwrap_or(self.ttl).min(self.max_ttl)
    }
}

/// The tasks of one server: its store and the tasks this process runs.
pub(crate) struct TaskService {
    pub(crate) config: TaskConfig,
    running: Mutex<HashMap<String, Addr<TaskRun>>>,
    /// `tasks/update` answers handed to the node of a cluster running their task, by ticket:
    /// each waits for that node's word that the task's new state is stored.
    relayed: Mutex<HashMap<String, oneshot::Sender<()>>>,
    /// Tasks running on this node, by their caller's owner key.
    principals: Mutex<HashMap<String, usize>>,
}

impl fmt::Debug for TaskService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskService")
            .field("config", &self.config)
            .field("running", &self.running().len())
            .field("relayed", &lock(&self.relayed).len())
            .finish()
    }
}

impl TaskService {
    pub(crate) fn new(config: TaskConfig) -> Self {
        Self {
            config,
            running: Mutex::default(),
            relayed: Mutex::default(),
            principals: Mutex::default(),
        }
    }

    /// A place for one more running task of `owner` (an identity's owner key; `None` without
    /// authentication, which is not counted), held until the slot is dropped.
    ///
    /// # Errors
    /// The limit, when `owner` has [`TaskConfig::max_tasks_per_principal`] tasks running.
    pub(crate) fn reserve(
        self: &Arc<Self>,
        owner: Option<&str>,
    ) -> Result<Option<TaskSlot>, usize> {
        let Some(owner) = owner else {
            return Ok(None);
        };
        let limit = self.config.max_tasks_per_principal;
        let mut principals = lock(&self.principals);
        let running = principals.entry(owner.to_owned()).or_default();
        if *running >= limit {
            return Err(limit);
        }
        *running += 1;
        Ok(Some(TaskSlot {
            service: self.clone(),
            owner: owner.to_owned(),
        }))
    }

    fn running(&self) -> MutexGuard<'_, HashMap<String, Addr<TaskRun>>> {
        lock(&self.running)
    }

    /// A ticket for answers about to be relayed to another node: it resolves when that node
    /// says the task's new state is stored ([`taken`](Self::taken)), and is forgotten when
    /// dropped.
    pub(crate) fn relay_ticket(&self) -> RelayTicket<'_> {
        let ticket = uuid::Uuid::new_v4().simple().to_string();
        let (sender, taken) = oneshot::channel();
        lock(&self.relayed).insert(ticket.clone(), sender);
        RelayTicket {
            service: self,
            ticket,
            taken,
        }
    }

    /// Another node stored the answers relayed under `ticket` (unknown tickets: answers this
    /// process stopped waiting for, or another process's).
    #[cfg(feature = "http")]
    pub(crate) fn taken(&self, ticket: &str) {
        if let Some(sender) = lock(&self.relayed).remove(ticket) {
            let _ = sender.send(());
        }
    }

    pub(crate) fn store(&self) -> &dyn TaskStore {
        &*self.config.store
    }

    /// Records the actor running a task (so `tasks/update` and `tasks/cancel` reach it).
    pub(crate) fn register(&self, task_id: &str, run: Addr<TaskRun>) {
        self.running().insert(task_id.to_owned(), run);
    }

    /// Forgets the actor of a task (it stopped).
    pub(crate) fn unregister(&self, task_id: &str) {
        self.running().remove(task_id);
    }

    /// The actor running a task in this process, if any.
    pub(crate) fn runner(&self, task_id: &str) -> Option<Addr<TaskRun>> {
        self.running().get(task_id).cloned()
    }

    /// How many tasks this process runs (their actors live).
    #[cfg(feature = "http")]
    pub(crate) fn running_count(&self) -> usize {
        self.running().len()
    }

    /// Ends every task this process runs: each is stored `failed` with `reason` (so every
    /// node of a cluster reports it), and its work is cancelled.
    #[cfg(feature = "http")]
    pub(crate) fn shut_down_all(&self, reason: &str) {
        let runs: Vec<Addr<TaskRun>> = self.running().values().cloned().collect();
        for run in runs {
            run.do_send(run::ShutDownTask {
                reason: reason.to_owned(),
            });
        }
    }

    /// The live task with this id, if `caller` (an identity's owner key, `None` without
    /// authentication) created it: another caller's task is answered as unknown.
    ///
    /// # Errors
    /// `-32602` for an unknown or expired task, or another caller's; `-32603` when the store
    /// failed.
    pub(crate) async fn get(
        &self,
        task_id: &str,
        caller: Option<&str>,
    ) -> Result<StoredTask, McpError> {
        match self.store().get(task_id).await {
            Ok(Some(task)) if task.owner.as_deref() == caller => Ok(task),
            Ok(_) => Err(unknown_task(task_id)),
            Err(err) => Err(McpError::internal(err.to_string())),
        }
    }
}

/// One running task's place under its caller's cap ([`TaskService::reserve`]); freed when
/// dropped.
pub(crate) struct TaskSlot {
    service: Arc<TaskService>,
    owner: String,
}

impl Drop for TaskSlot {
    fn drop(&mut self) {
        let mut principals = lock(&self.service.principals);
        if let Some(running) = principals.get_mut(&self.owner) {
            *running = running.saturating_sub(1);
            if *running == 0 {
                principals.remove(&self.owner);
            }
        }
    }
}

/// Answers relayed to the node running their task, waiting for its word that they are
/// stored ([`TaskService::relay_ticket`]).
pub(crate) struct RelayTicket<'a> {
    service: &'a TaskService,
    /// Sent with the answers; the other node sends it back.
    pub(crate) ticket: String,
    taken: oneshot::Receiver<()>,
}

impl RelayTicket<'_> {
    /// Whether the other node said, within `wait`, that it stored the answers.
    pub(crate) async fn taken_within(&mut self, wait: Duration) -> bool {
        matches!(
            tokio::time::timeout(wait, &mut self.taken).await,
            Ok(Ok(()))
        )
    }
}

impl Drop for RelayTicket<'_> {
    fn drop(&mut self) {
        lock(&self.service.relayed).remove(&self.ticket);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `-32602` for a task id the server does not know (or no longer knows).
pub(crate) fn unknown_task(task_id: &str) -> McpError {
    McpError::invalid_params(format!("unknown or expired task: {task_id}"))
}

/// A new task id: 122 random bits (the spec asks for high-entropy ids).
pub(crate) fn new_task_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The state of a new task, `working`, as of `now`.
pub(crate) fn new_task(
    task_id: String,
    now: SystemTime,
    ttl: Duration,
    poll_interval: Duration,
) -> DetailedTask {
    let stamp = timestamp(now);
    DetailedTask {
        task_id,
        status: crate::protocol::TaskStatus::Working,
        status_message: None,
        created_at: stamp.clone(),
        last_updated_at: stamp,
        ttl_ms: Some(millis(ttl)),
        poll_interval_ms: Some(millis(poll_interval)),
        input_requests: None,
        result: None,
        error: None,
    }
}

/// A duration in whole milliseconds (at least 1).
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// `time` as an RFC 3339 / ISO 8601 UTC timestamp with milliseconds
/// (`2026-07-28T10:30:00.000Z`).
pub(crate) fn timestamp(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + Duration::from_millis(951_782_400_123);
        assert_eq!(timestamp(leap), "2000-02-29T00:00:00.123Z");
        let later = UNIX_EPOCH + Duration::from_secs(1_785_234_645);
        assert_eq!(timestamp(later), "2026-07-28T10:30:45.000Z");
    }

    #[test]
    fn a_tool_cannot_outlive_the_maximum_ttl() {
        let config = TaskConfig::default()
            .ttl(Duration::from_secs(10))
            .max_ttl(Duration::from_secs(60));
        assert_eq!(config.ttl_for(None), Duration::from_secs(10));
        assert_eq!(
            config.ttl_for(Some(Duration::from_secs(3_600))),
            Duration::from_secs(60)
        );
    }
}
