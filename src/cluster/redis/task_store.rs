//! The task store (Tasks extension) on Redis.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::protocol::DetailedTask;
use crate::server::tasks::{StoredTask, TaskStore, TaskStoreError};

use super::connection::{Batch, Redis, now_millis};

/// The [`TaskStore`] on Redis (Tasks extension): a task's state as JSON under
/// `mcp:task:{<id>}`, expiring with the task, and a sorted set `mcp:tasks` of the live tasks by
/// expiry for the store's limit. A terminal status is final: an update is a compare-and-set
/// run on the server, so no node overwrites a task another node finished or cancelled.
#[derive(Debug, Clone)]
pub struct RedisTaskStore {
    redis: Redis,
}

impl RedisTaskStore {
    /// The store on `redis`.
    pub fn new(redis: Redis) -> Self {
        Self { redis }
    }

    fn key(&self, task_id: &str) -> String {
        format!("{}:task:{{{task_id}}}", self.redis.prefix)
    }

    fn live_key(&self) -> String {
        format!("{}:tasks", self.redis.prefix)
    }
}

/// A task as the Redis store keeps it.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskEntry {
    task: DetailedTask,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
}

fn epoch_millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn task_backend(err: &redis::RedisError) -> TaskStoreError {
    TaskStoreError::Backend(format!("redis: {err}"))
}

fn task_entry(task: &StoredTask) -> Result<(String, Option<u64>), TaskStoreError> {
    let expires = task.expires_at.map(epoch_millis);
    let json = serde_json::to_string(&TaskEntry {
        task: task.task.clone(),
        expires_at_ms: expires,
        owner: task.owner.clone(),
    })
    .map_err(|err| TaskStoreError::Backend(err.to_string()))?;
    Ok((json, expires))
}

/// Replaces a task unless the stored one is terminal or gone: KEYS[1] the task, ARGV[1] the
/// new JSON, ARGV[2] its expiry (Unix ms, or 0 for none).
const UPDATE_TASK: &str = r"
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local status = cjson.decode(current)['task']['status']
if status == 'completed' or status == 'failed' or status == 'cancelled' then return 0 end
if ARGV[2] == '0' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
end
return 1
";

impl TaskStore for RedisTaskStore {
    fn create(
        &self,
        task: StoredTask,
        limit: usize,
    ) -> futures::future::BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let (json, expires) = task_entry(&task)?;
            let id = task.task.task_id.clone();
            let mut conn = self.redis.shared_conn();
            let (live,): (usize,) = redis::pipe()
                .cmd("ZREMRANGEBYSCORE")
                .arg(self.live_key())
                .arg("-inf")
                .arg(now_millis())
                .ignore()
                .cmd("ZCARD")
                .arg(self.live_key())
                .query_async(&mut conn)
                .await
                .map_err(|err| task_backend(&err))?;
            if live >= limit {
                return Err(TaskStoreError::Full(limit));
            }
            let mut set = redis::cmd("SET");
            set.arg(self.key(&id)).arg(json).arg("NX");
            if let Some(at) = expires {
                set.arg("PXAT").arg(at.max(1));
            }
            let created: Option<String> = set
                .query_async(&mut conn)
                .await
                .map_err(|err| task_backend(&err))?;
            if created.is_none() {
                return Err(TaskStoreError::Exists(id));
            }
            redis::cmd("ZADD")
                .arg(self.live_key())
                .arg(expires.unwrap_or(u64::MAX >> 11))
                .arg(&id)
                .query_async::<()>(&mut conn)
                .await
                .map_err(|err| task_backend(&err))?;
            Ok(())
        })
    }

    fn get(
        &self,
        task_id: &str,
    ) -> futures::future::BoxFuture<'_, Result<Option<StoredTask>, TaskStoreError>> {
        let key = self.key(task_id);
        Box::pin(async move {
            let mut conn = self.redis.shared_conn();
            let json: Option<String> = redis::cmd("GET")
                .arg(key)
                .query_async(&mut conn)
                .await
                .map_err(|err| task_backend(&err))?;
            let Some(json) = json else {
                return Ok(None);
            };
            let entry: TaskEntry = serde_json::from_str(&json)
                .map_err(|err| TaskStoreError::Backend(format!("unreadable task: {err}")))?;
            let stored = StoredTask {
                task: entry.task,
                expires_at: entry
                    .expires_at_ms
                    .map(|ms| UNIX_EPOCH + Duration::from_millis(ms)),
                owner: entry.owner,
            };
            Ok((!stored.is_expired(SystemTime::now())).then_some(stored))
        })
    }

    fn update(
        &self,
        task: StoredTask,
    ) -> futures::future::BoxFuture<'_, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let (json, expires) = task_entry(&task)?;
            let mut conn = self.redis.shared_conn();
            let written: i64 = redis::cmd("EVAL")
                .arg(UPDATE_TASK)
                .arg(1)
                .arg(self.key(&task.task.task_id))
                .arg(json)
                .arg(expires.unwrap_or(0))
                .query_async(&mut conn)
                .await
                .map_err(|err| task_backend(&err))?;
            Ok(written == 1)
        })
    }

    fn delete(
        &self,
        task_id: &str,
    ) -> futures::future::BoxFuture<'_, Result<bool, TaskStoreError>> {
        let key = self.key(task_id);
        let id = task_id.to_owned();
        Box::pin(async move {
            let mut del = redis::cmd("DEL");
            del.arg(key);
            let mut zrem = redis::cmd("ZREM");
            zrem.arg(self.live_key()).arg(id);
            let mut batch = Batch::default();
            batch.add(del).add_ignored(zrem);
            let (deleted,): (u64,) = self
                .redis
                .batch(batch)
                .await
                .map_err(|err| TaskStoreError::Backend(err.to_string()))?;
            Ok(deleted > 0)
        })
    }

    fn purge_expired(&self) -> futures::future::BoxFuture<'_, Result<usize, TaskStoreError>> {
        Box::pin(async move {
            // The tasks' own keys expire by themselves; only the count's entries go here.
            let mut conn = self.redis.shared_conn();
            redis::cmd("ZREMRANGEBYSCORE")
                .arg(self.live_key())
                .arg("-inf")
                .arg(now_millis())
                .query_async::<usize>(&mut conn)
                .await
                .map_err(|err| task_backend(&err))
        })
    }
}
