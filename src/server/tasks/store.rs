//! Where tasks live: the [`TaskStore`] trait and its in-memory implementation,
//! [`InMemoryTaskStore`].
//!
//! A store keeps each task's observable state ([`DetailedTask`]: status, outstanding input
//! requests, result or error) until its expiry. It knows nothing of the work behind a task:
//! the `TaskRun` actor executing it writes every change here, and `tasks/get` reads from here
//! only, so a task is visible as soon as its first write returns (durable creation). The trait
//! is asynchronous so that shared stores (Redis, a database) can implement it; such a store
//! lets any process answer `tasks/get`.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::SystemTime;

use futures::future::{BoxFuture, FutureExt, ready};

use crate::protocol::DetailedTask;

/// A task as stored: its state and when it expires.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTask {
    /// The task's observable state.
    pub task: DetailedTask,
    /// When the store forgets the task; `None`: never.
    pub expires_at: Option<SystemTime>,
    /// Who created the task, on an endpoint with bearer auth: the key of the caller's
    /// identity (issuer and subject). Only that caller may read, update, cancel or listen to
    /// the task; to anyone else it does not exist. `None` without authentication.
    pub owner: Option<String>,
}

impl StoredTask {
    /// Whether the task has expired at `now`.
    pub fn is_expired(&self, now: SystemTime) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}

/// Why a store refused an operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// As many live tasks as the limit allows exist already.
    #[error("too many tasks (limit {0})")]
    Full(usize),
    /// A task with this id exists already.
    #[error("task `{0}` exists already")]
    Exists(String),
    /// The store itself failed (a shared store's connection, say).
    #[error("task store failure: {0}")]
    Backend(String),
}

/// Keeps tasks for their lifetime. Implementations must be safe to share between the HTTP
/// workers (each runs its own arbiter).
///
/// Expired tasks must read as absent at once; [`purge_expired`](Self::purge_expired) frees
/// their space and runs on every [`create`](Self::create) of the built-in store.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task, unless `limit` live tasks exist already.
    ///
    /// # Errors
    /// [`TaskStoreError::Full`] at the limit; [`TaskStoreError::Exists`] when the id is taken.
    fn create(&self, task: StoredTask, limit: usize) -> BoxFuture<'_, Result<(), TaskStoreError>>;

    /// The live task with this id; `None` when unknown or expired.
    ///
    /// # Errors
    /// [`TaskStoreError::Backend`] when the store failed.
    fn get(&self, task_id: &str) -> BoxFuture<'_, Result<Option<StoredTask>, TaskStoreError>>;

    /// Replaces a live task that has not reached a terminal status; `Ok(false)` (and nothing
    /// written) when the stored task is terminal, expired or gone. A terminal status is final.
    ///
    /// # Errors
    /// [`TaskStoreError::Backend`] when the store failed.
    fn update(&self, task: StoredTask) -> BoxFuture<'_, Result<bool, TaskStoreError>>;

    /// Deletes a task, whatever its state; whether it existed. (A call answered inline frees
    /// the slot it reserved.)
    ///
    /// # Errors
    /// [`TaskStoreError::Backend`] when the store failed.
    fn delete(&self, task_id: &str) -> BoxFuture<'_, Result<bool, TaskStoreError>>;

    /// Deletes the expired tasks; how many there were.
    ///
    /// # Errors
    /// [`TaskStoreError::Backend`] when the store failed.
    fn purge_expired(&self) -> BoxFuture<'_, Result<usize, TaskStoreError>>;
}

/// A shared store is a store (so the caller can keep a handle on the one it configures).
impl<T: TaskStore + ?Sized> TaskStore for std::sync::Arc<T> {
    fn create(&self, task: StoredTask, limit: usize) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        (**self).create(task, limit)
    }

    fn get(&self, task_id: &str) -> BoxFuture<'_, Result<Option<StoredTask>, TaskStoreError>> {
        (**self).get(task_id)
    }

    fn update(&self, task: StoredTask) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        (**self).update(task)
    }

    fn delete(&self, task_id: &str) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        (**self).delete(task_id)
    }

    fn purge_expired(&self) -> BoxFuture<'_, Result<usize, TaskStoreError>> {
        (**self).purge_expired()
    }
}

/// A [`TaskStore`] in the server's memory: tasks last as long as the process.
#[derive(Default)]
pub struct InMemoryTaskStore {
    tasks: Mutex<HashMap<String, StoredTask>>,
}

impl fmt::Debug for InMemoryTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryTaskStore")
            .field("tasks", &self.len())
            .finish()
    }
}

impl InMemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, StoredTask>> {
        self.tasks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How many tasks are stored, expired ones not yet purged included.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no task is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn purge(tasks: &mut HashMap<String, StoredTask>) -> usize {
        let now = SystemTime::now();
        let before = tasks.len();
        tasks.retain(|_, task| !task.is_expired(now));
        before - tasks.len()
    }
}

impl TaskStore for InMemoryTaskStore {
    fn create(&self, task: StoredTask, limit: usize) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        let mut tasks = self.lock();
        Self::purge(&mut tasks);
        let outcome = if tasks.contains_key(&task.task.task_id) {
            Err(TaskStoreError::Exists(task.task.task_id))
        } else if tasks.len() >= limit {
            Err(TaskStoreError::Full(limit))
        } else {
            tasks.insert(task.task.task_id.clone(), task);
            Ok(())
        };
        ready(outcome).boxed()
    }

    fn get(&self, task_id: &str) -> BoxFuture<'_, Result<Option<StoredTask>, TaskStoreError>> {
        let now = SystemTime::now();
        let found = self
            .lock()
            .get(task_id)
            .filter(|task| !task.is_expired(now))
            .cloned();
        ready(Ok(found)).boxed()
    }

    fn update(&self, task: StoredTask) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        let now = SystemTime::now();
        let mut tasks = self.lock();
        let written = match tasks.get_mut(&task.task.task_id) {
            Some(stored) if !stored.is_expired(now) && !stored.task.is_terminal() => {
                *stored = task;
                true
            }
            _ => false,
        };
        ready(Ok(written)).boxed()
    }

    fn delete(&self, task_id: &str) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        let existed = self.lock().remove(task_id).is_some();
        ready(Ok(existed)).boxed()
    }

    fn purge_expired(&self) -> BoxFuture<'_, Result<usize, TaskStoreError>> {
        let purged = Self::purge(&mut self.lock());
        ready(Ok(purged)).boxed()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures::executor::block_on;

    use super::*;
    use crate::protocol::TaskStatus;

    fn stored(id: &str, status: TaskStatus, expires_in: Option<Duration>) -> StoredTask {
        StoredTask {
            task: DetailedTask {
                task_id: id.into(),
                status,
                status_message: None,
                created_at: String::new(),
                last_updated_at: String::new(),
                ttl_ms: None,
                poll_interval_ms: None,
                input_requests: None,
                result: None,
                error: None,
            },
            expires_at: expires_in.map(|d| SystemTime::now() + d),
            owner: None,
        }
    }

    #[test]
    fn a_full_store_refuses_new_tasks_until_some_expire() {
        let store = InMemoryTaskStore::new();
        let soon = Some(Duration::ZERO);
        assert_eq!(
            block_on(store.create(stored("a", TaskStatus::Working, soon), 1)),
            Ok(())
        );
        // "a" has expired: purged, so "b" fits.
        assert_eq!(
            block_on(store.create(stored("b", TaskStatus::Working, None), 1)),
            Ok(())
        );
        assert_eq!(
            block_on(store.create(stored("c", TaskStatus::Working, None), 1)),
            Err(TaskStoreError::Full(1))
        );
        assert_eq!(block_on(store.get("a")), Ok(None));
    }

    #[test]
    fn a_terminal_status_is_final() {
        let store = InMemoryTaskStore::new();
        let _ = block_on(store.create(stored("t", TaskStatus::Working, None), 10));
        assert_eq!(
            block_on(store.update(stored("t", TaskStatus::Cancelled, None))),
            Ok(true)
        );
        assert_eq!(
            block_on(store.update(stored("t", TaskStatus::Completed, None))),
            Ok(false)
        );
        let status = block_on(store.get("t"))
            .ok()
            .flatten()
            .map(|t| t.task.status);
        assert_eq!(status, Some(TaskStatus::Cancelled));
        assert_eq!(
            block_on(store.update(stored("gone", TaskStatus::Working, None))),
            Ok(false)
        );
    }
}
