//! The session store on Redis.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use actix_mcp_actors::{Created, SessionId, SessionRecord, SessionStore, StoreError, StoreFuture};

use super::connection::{Redis, millis, now_millis};

/// `create_within` in one round trip: prunes the expired from the count, refuses when the
/// cluster is full (-1), else stores the record unless its id is taken (0) and counts it (1).
/// KEYS: the record, the count; ARGV: the record's JSON, its time to live (ms), its expiry
/// (ms since the epoch), now (ms), the cap, the session id.
static CREATE_SESSION: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[4])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then
  return -1
end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[6])
return 1
",
    )
});

/// `establish` in one round trip: the record's `"established":false` (its first occurrence is
/// the record's own field: the id and owner before it are JSON strings, whose quotes would be
/// escaped) becomes `true`, its time to live renewed; 0 when there is no record.
/// KEYS: the record; ARGV: its time to live (ms).
static ESTABLISH_SESSION: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r#"
local record = redis.call('GET', KEYS[1])
if not record then
  return 0
end
local established, changed = string.gsub(record, '"established":false', '"established":true', 1)
if changed > 0 then
  redis.call('SET', KEYS[1], established, 'PX', ARGV[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 1
"#,
    )
});

/// The [`SessionStore`] on Redis. See the [module docs](super) for its keys.
///
/// It remembers the records it read last (their text and what it read from it), so a record
/// that has not changed since is not read again, and [`load`](SessionStore::load) hands out
/// the same `Arc` for it.
#[derive(Debug, Clone)]
pub struct RedisSessionStore {
    redis: Redis,
    read: Arc<std::sync::Mutex<HashMap<SessionId, ReadRecord>>>,
}

/// A record as this node read it last: its stored text, and what that text says.
#[derive(Debug)]
struct ReadRecord {
    text: Box<str>,
    record: Arc<SessionRecord>,
}

/// Most records a [`RedisSessionStore`] remembers (it forgets them all when it would hold more:
/// the next load of each reads it again).
const READ_RECORDS: usize = 16_384;

impl RedisSessionStore {
    /// The store on `redis`.
    pub fn new(redis: Redis) -> Self {
        Self {
            redis,
            read: Arc::default(),
        }
    }

    fn read_records(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, ReadRecord>> {
        self.read
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// What the stored `text` of session `id` says: from memory when this node read the same
    /// text last.
    fn read(&self, id: &SessionId, text: String) -> Result<Arc<SessionRecord>, StoreError> {
        if let Some(read) = self.read_records().get(id)
            && *read.text == *text
        {
            return Ok(read.record.clone());
        }
        let record: Arc<SessionRecord> = Arc::new(
            serde_json::from_str(&text)
                .map_err(|err| StoreError::Corrupt(format!("session {id}: {err}")))?,
        );
        let mut read = self.read_records();
        if read.len() >= READ_RECORDS {
            read.clear();
        }
        read.insert(
            id.clone(),
            ReadRecord {
                text: text.into_boxed_str(),
                record: record.clone(),
            },
        );
        Ok(record)
    }
}

fn encode(record: &SessionRecord) -> Result<String, StoreError> {
    serde_json::to_string(record).map_err(|err| StoreError::Corrupt(err.to_string()))
}

impl SessionStore for RedisSessionStore {
    fn claim_once<'a>(&'a self, key: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let claimed: Option<String> = self
                .redis
                .query(
                    redis::cmd("SET")
                        .arg(self.redis.claim_key(key))
                        .arg(1)
                        .arg("NX")
                        .arg("PX")
                        .arg(millis(ttl).max(1)),
                )
                .await?;
            Ok(claimed.is_some())
        })
    }

    fn create<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let json = encode(record)?;
            let (created,): (Option<String>,) = self
                .redis
                .query(
                    &redis::pipe()
                        .cmd("SET")
                        .arg(self.redis.session_key(&record.id))
                        .arg(json)
                        .arg("NX")
                        .arg("PX")
                        .arg(millis(ttl))
                        .cmd("ZADD")
                        .arg(self.redis.count_key())
                        .arg(now_millis().saturating_add(millis(ttl)))
                        .arg(record.id.as_str())
                        .ignore(),
                )
                .await?;
            Ok(created.is_some())
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a SessionId,
        ttl: Duration,
    ) -> StoreFuture<'a, Option<Arc<SessionRecord>>> {
        Box::pin(async move {
            // The record only: its place in the cluster-wide count is renewed by `touch`, for
            // the sessions busy on some node.
            let key = self.redis.session_key(id);
            let mut getex = redis::Cmd::with_capacity(4, key.len() + 32);
            getex.arg("GETEX").arg(key).arg("PX").arg(millis(ttl));
            let json: Option<String> = self.redis.query(&getex).await?;
            match json {
                Some(text) => self.read(id, text).map(Some),
                None => {
                    self.read_records().remove(id);
                    Ok(None)
                }
            }
        })
    }

    fn establish<'a>(&'a self, id: &'a SessionId, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let known: i64 = self
                .redis
                .query(
                    ESTABLISH_SESSION
                        .key(self.redis.session_key(id))
                        .arg(millis(ttl)),
                )
                .await?;
            Ok(known == 1)
        })
    }

    fn touch<'a>(&'a self, ids: &'a [SessionId], ttl: Duration) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            if ids.is_empty() {
                return Ok(());
            }
            let expiry = now_millis().saturating_add(millis(ttl));
            let mut pipe = redis::Pipeline::with_capacity(ids.len() + 1);
            for id in ids {
                pipe.cmd("PEXPIRE")
                    .arg(self.redis.session_key(id))
                    .arg(millis(ttl))
                    .ignore();
            }
            let zadd = pipe.cmd("ZADD").arg(self.redis.count_key()).arg("XX");
            for id in ids {
                zadd.arg(expiry).arg(id.as_str());
            }
            zadd.ignore();
            self.redis.query::<(), _>(&pipe).await
        })
    }

    fn save<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let json = encode(record)?;
            let saved: Option<String> = self
                .redis
                .query(
                    &redis::cmd("SET")
                        .arg(self.redis.session_key(&record.id))
                        .arg(json)
                        .arg("XX")
                        .arg("PX")
                        .arg(millis(ttl)),
                )
                .await?;
            Ok(saved.is_some())
        })
    }

    fn delete<'a>(&'a self, id: &'a SessionId) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let (deleted,): (u64,) = self
                .redis
                .query(
                    &redis::pipe()
                        .cmd("DEL")
                        .arg(self.redis.session_key(id))
                        .cmd("UNLINK")
                        .arg(self.redis.events_key(id))
                        .ignore()
                        .cmd("ZREM")
                        .arg(self.redis.count_key())
                        .arg(id.as_str())
                        .ignore(),
                )
                .await?;
            self.read_records().remove(id);
            Ok(deleted > 0)
        })
    }

    fn create_within<'a>(
        &'a self,
        record: &'a SessionRecord,
        ttl: Duration,
        cap: usize,
    ) -> StoreFuture<'a, Created> {
        Box::pin(async move {
            let json = encode(record)?;
            let now = now_millis();
            let created: i64 = self
                .redis
                .query(
                    CREATE_SESSION
                        .key(self.redis.session_key(&record.id))
                        .key(self.redis.count_key())
                        .arg(json)
                        .arg(millis(ttl))
                        .arg(now.saturating_add(millis(ttl)))
                        .arg(now)
                        .arg(cap)
                        .arg(record.id.as_str()),
                )
                .await?;
            Ok(match created {
                1 => Created::Stored,
                0 => Created::Taken,
                _ => Created::Full,
            })
        })
    }

    fn count(&self) -> StoreFuture<'_, Option<usize>> {
        Box::pin(async move {
            let (count,): (usize,) = self
                .redis
                .query(
                    &redis::pipe()
                        .cmd("ZREMRANGEBYSCORE")
                        .arg(self.redis.count_key())
                        .arg("-inf")
                        .arg(now_millis())
                        .ignore()
                        .cmd("ZCARD")
                        .arg(self.redis.count_key()),
                )
                .await?;
            Ok(Some(count))
        })
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(self.redis.ping())
    }
}
