//! The session store on Redis: a session's record is a hash, so that a change of one field of
//! its state is applied to what is stored (by a script), never as a whole record written over
//! another node's change.
//!
//! | field | what |
//! | --- | --- |
//! | `record` | the [`SessionRecord`] as it was created, as JSON |
//! | `rev` | its revision: raised by each change |
//! | `est` | `1` once the handshake is complete |
//! | `w` | the stamp of the last write: unique to it, across nodes and failovers |
//! | `f:<field>` | the JSON value of a field of the record's state changed since (`null`: removed) |

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use actix_mcp_actors::{
    Created, SessionId, SessionRecord, SessionStore, StateUpdate, StoreError, StoreFuture,
};
use serde_json::Value;

use super::connection::{Batch, Redis, ScriptCall, millis, now_millis};

/// `create_within` in one round trip: prunes the expired from the count, refuses when the
/// cluster is full (-1), else stores the record unless its id is taken (0) and counts it (1).
/// KEYS: the record, the count; ARGV: the record's JSON, its time to live (ms), its expiry
/// (ms since the epoch), now (ms), the cap, the session id, its revision, whether it is
/// established (`1` or `0`), the write's stamp. With the record's key only (on a Redis Cluster, where the count is
/// in another slot), the record alone: stored (1) unless its id is taken (0).
static CREATE_SESSION: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if #KEYS == 2 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[4])
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then
    return -1
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
if ARGV[8] == '1' then
  redis.call('HSET', KEYS[1], 'record', ARGV[1], 'rev', ARGV[7], 'w', ARGV[9], 'est', '1')
else
  redis.call('HSET', KEYS[1], 'record', ARGV[1], 'rev', ARGV[7], 'w', ARGV[9])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if #KEYS == 2 then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[6])
end
return 1
",
    )
});

/// `establish` in one round trip: the time to live renewed (which tells whether there is a
/// record: 0 when there is none), then `est` set (the revision raised and the stamp replaced
/// when it was not; writing fields keeps the time to live). KEYS: the record; ARGV: its time to
/// live (ms), the write's stamp.
static ESTABLISH_SESSION: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then
  return 0
end
if redis.call('HSETNX', KEYS[1], 'est', '1') == 1 then
  redis.call('HINCRBY', KEYS[1], 'rev', 1)
  redis.call('HSET', KEYS[1], 'w', ARGV[2])
end
return 1
",
    )
});

/// `update` in one round trip: each change applied to the stored fields, in order (a set's
/// first change starts from the created record's value of it), the revision raised and the time
/// to live renewed and the stamp replaced; the whole hash then, or nil when there is no record.
/// KEYS: the record; ARGV: its time to live (ms), the write's stamp, then per change its operation (`set`, `insert`, `remove`), the
/// state's field, and the JSON value (`set`) or the string (`insert`, `remove`). The time to
/// live is renewed first, which tells whether there is a record (writing fields keeps it).
static UPDATE_SESSION: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then
  return false
end
local created = nil
for i = 3, #ARGV - 2, 3 do
  local op, field, arg = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local name = 'f:' .. field
  if op == 'set' then
    redis.call('HSET', KEYS[1], name, arg)
  else
    local items = nil
    local current = redis.call('HGET', KEYS[1], name)
    if current then
      items = cjson.decode(current)
    else
      if not created then
        created = cjson.decode(redis.call('HGET', KEYS[1], 'record'))
      end
      if type(created) == 'table' and type(created['state']) == 'table' then
        items = created['state'][field]
      end
    end
    if type(items) ~= 'table' then
      items = {}
    end
    local kept = {}
    local present = false
    for _, item in ipairs(items) do
      if item == arg then
        present = true
        if op == 'insert' then
          table.insert(kept, item)
        end
      else
        table.insert(kept, item)
      end
    end
    if op == 'insert' and not present then
      table.insert(kept, arg)
    end
    if #kept == 0 then
      redis.call('HSET', KEYS[1], name, '[]')
    else
      redis.call('HSET', KEYS[1], name, cjson.encode(kept))
    end
  end
end
redis.call('HINCRBY', KEYS[1], 'rev', 1)
redis.call('HSET', KEYS[1], 'w', ARGV[2])
return redis.call('HGETALL', KEYS[1])
",
    )
});

/// `save` in one round trip: the hash replaced by the given record, of the stored revision
/// plus one; 0 when there is no record. KEYS: the record; ARGV: the record's JSON, its time to
/// live (ms), whether it is established (`1` or `0`), the write's stamp.
static SAVE_SESSION: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local rev = redis.call('HINCRBY', KEYS[1], 'rev', 1)
redis.call('DEL', KEYS[1])
if ARGV[3] == '1' then
  redis.call('HSET', KEYS[1], 'record', ARGV[1], 'rev', rev, 'w', ARGV[4], 'est', '1')
else
  redis.call('HSET', KEYS[1], 'record', ARGV[1], 'rev', rev, 'w', ARGV[4])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
",
    )
});

/// `load` in one round trip: the time to live renewed; `1` when the stored stamp is the one
/// given (the caller holds that write's record), else the whole hash (empty when there is no
/// record). KEYS: the record; ARGV: its time to live (ms), the stamp of the record the caller
/// holds (empty: none).
static LOAD_SESSION: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then
  return {}
end
if ARGV[2] ~= '' and redis.call('HGET', KEYS[1], 'w') == ARGV[2] then
  return 1
end
return redis.call('HGETALL', KEYS[1])
",
    )
});

/// A stamp for a write of a record: this process's random prefix and a count, so no two writes
/// share one (on any node, before or after a failover).
fn stamp() -> String {
    static PREFIX: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| uuid::Uuid::new_v4().simple().to_string());
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}{n:x}", &PREFIX[..16])
}

/// The [`SessionStore`] on Redis. See the [module docs](super) for its keys.
///
/// A record is a hash: `record` (the record as created, JSON), `rev` (its revision, raised by
/// each change), `est` (`1` once the handshake is complete), `w` (the stamp of the last write,
/// unique to it) and `f:<field>` (the JSON value of each field of its state changed since;
/// `null`: removed). A change of the state's fields ([`update`](SessionStore::update)) is
/// applied to the stored fields by one script, so changes made at the same time on several
/// nodes are all kept. It remembers the records it read last with their stamps: a
/// [`load`](SessionStore::load) of a record not written since is answered by Redis with `1`
/// instead of the hash (one small script, one round trip), and hands out the same `Arc`.
/// The stamp, not the revision, says whether it is the same record: after a failover, a replica
/// that had not received the last change may raise an older record to the same revision, never
/// to the same stamp.
#[derive(Debug, Clone)]
pub struct RedisSessionStore {
    redis: Redis,
    read: Arc<std::sync::Mutex<HashMap<SessionId, ReadRecord>>>,
}

/// A record as this node read it last, and the stamp of the write that made it.
#[derive(Debug)]
struct ReadRecord {
    stamp: String,
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

    /// The record the stored hash of session `id` says (`None` when there is none), remembered
    /// with its stamp (a hash without one, written by an older version, is read every time).
    fn read(
        &self,
        id: &SessionId,
        mut fields: HashMap<String, String>,
    ) -> Result<Option<Arc<SessionRecord>>, StoreError> {
        let corrupt = |what: String| StoreError::Corrupt(format!("session {id}: {what}"));
        let Some(created) = fields.get("record") else {
            if fields.is_empty() {
                self.read_records().remove(id);
                return Ok(None);
            }
            return Err(corrupt("a record hash without its record".into()));
        };
        let revision = match fields.get("rev") {
            Some(rev) => rev
                .parse::<u64>()
                .map_err(|err| corrupt(format!("revision {rev:?}: {err}")))?,
            None => 0,
        };
        let mut record: SessionRecord =
            serde_json::from_str(created).map_err(|err| corrupt(err.to_string()))?;
        record.revision = revision;
        record.established |= fields.get("est").is_some_and(|est| est == "1");
        for (name, value) in &fields {
            let Some(field) = name.strip_prefix("f:") else {
                continue;
            };
            let value: Value = serde_json::from_str(value)
                .map_err(|err| corrupt(format!("field {field}: {err}")))?;
            StateUpdate::Set {
                field: field.to_owned(),
                value,
            }
            .apply_to(&mut record.state);
        }
        let record = Arc::new(record);
        let mut read = self.read_records();
        match fields.remove("w") {
            Some(stamp) => {
                if read.len() >= READ_RECORDS {
                    read.clear();
                }
                read.insert(
                    id.clone(),
                    ReadRecord {
                        stamp,
                        record: record.clone(),
                    },
                );
            }
            None => {
                read.remove(id);
            }
        }
        Ok(Some(record))
    }

    /// The record a load's answer of a whole hash says.
    fn read_answer(
        &self,
        id: &SessionId,
        answer: redis::Value,
    ) -> Result<Option<Arc<SessionRecord>>, StoreError> {
        let fields = redis::from_redis_value::<HashMap<String, String>>(answer)
            .map_err(|err| StoreError::Corrupt(format!("session {id}: {err}")))?;
        self.read(id, fields)
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
            // No cap: the count is kept all the same.
            Ok(self.create_within(record, ttl, usize::MAX).await? == Created::Stored)
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a SessionId,
        ttl: Duration,
    ) -> StoreFuture<'a, Option<Arc<SessionRecord>>> {
        Box::pin(async move {
            // The record only: its place in the cluster-wide count is renewed by `touch`, for
            // the sessions busy on some node. One round trip: the renewal, and the hash unless
            // it is the one held here.
            let mut load = ScriptCall::new(&LOAD_SESSION, 1);
            load.arg(self.redis.session_key_arg(id)).arg(millis(ttl));
            // The stamp of the record held here (empty: none), written into the command.
            let held = {
                let read = self.read_records();
                let held = read.get(id);
                load.arg(held.map_or("", |read| read.stamp.as_str()));
                held.map(|read| read.record.clone())
            };
            let answer: redis::Value = self.redis.query(&load).await?;
            match (answer, held) {
                // The stored record is still the one held here.
                (redis::Value::Int(1), Some(record)) => Ok(Some(record)),
                (answer, _) => self.read_answer(id, answer),
            }
        })
    }

    fn establish<'a>(&'a self, id: &'a SessionId, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let known: i64 = self
                .redis
                .query(
                    ScriptCall::new(&ESTABLISH_SESSION, 1)
                        .arg(self.redis.session_key_arg(id))
                        .arg(millis(ttl))
                        .arg(stamp()),
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
            let mut batch = Batch::default();
            for id in ids {
                let mut renew = redis::cmd("PEXPIRE");
                renew.arg(self.redis.session_key(id)).arg(millis(ttl));
                batch.add_ignored(renew);
            }
            let mut zadd = redis::cmd("ZADD");
            zadd.arg(self.redis.count_key()).arg("XX");
            for id in ids {
                zadd.arg(expiry).arg(id.as_str());
            }
            batch.add_ignored(zadd);
            self.redis.batch::<()>(batch).await
        })
    }

    fn update<'a>(
        &'a self,
        id: &'a SessionId,
        updates: &'a [StateUpdate],
        ttl: Duration,
    ) -> StoreFuture<'a, Option<Arc<SessionRecord>>> {
        Box::pin(async move {
            let mut script = ScriptCall::new(&UPDATE_SESSION, 1);
            script
                .arg(self.redis.session_key_arg(id))
                .arg(millis(ttl))
                .arg(stamp());
            for update in updates {
                match update {
                    StateUpdate::Set { field, value } => {
                        let json = serde_json::to_string(value)
                            .map_err(|err| StoreError::Corrupt(err.to_string()))?;
                        script.arg("set").arg(field).arg(json);
                    }
                    StateUpdate::Insert { field, item } => {
                        script.arg("insert").arg(field).arg(item);
                    }
                    StateUpdate::Remove { field, item } => {
                        script.arg("remove").arg(field).arg(item);
                    }
                }
            }
            let fields: HashMap<String, String> = self.redis.query(&script).await?;
            self.read(id, fields)
        })
    }

    fn save<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let json = encode(record)?;
            let saved: i64 = self
                .redis
                .query(
                    ScriptCall::new(&SAVE_SESSION, 1)
                        .arg(self.redis.session_key_arg(&record.id))
                        .arg(json)
                        .arg(millis(ttl))
                        .arg(if record.established { "1" } else { "0" })
                        .arg(stamp()),
                )
                .await?;
            Ok(saved == 1)
        })
    }

    fn delete<'a>(&'a self, id: &'a SessionId) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let mut del = redis::cmd("DEL");
            del.arg(self.redis.session_key(id));
            let mut unlink = redis::cmd("UNLINK");
            unlink.arg(self.redis.events_key(id));
            let mut zrem = redis::cmd("ZREM");
            zrem.arg(self.redis.count_key()).arg(id.as_str());
            let mut batch = Batch::default();
            batch.add(del).add_ignored(unlink).add_ignored(zrem);
            let (deleted,): (u64,) = self.redis.batch(batch).await?;
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
            let expiry = now.saturating_add(millis(ttl));
            let cluster = self.redis.is_cluster();
            if cluster && cap != usize::MAX && self.count().await?.unwrap_or(0) >= cap {
                // On a cluster, the count is read, then the record written, then counted: the
                // cap holds but for sessions created at the same time on several nodes.
                return Ok(Created::Full);
            }
            let mut script = ScriptCall::new(&CREATE_SESSION, if cluster { 1 } else { 2 });
            script.arg(self.redis.session_key_arg(&record.id));
            if !cluster {
                script.arg(self.redis.count_key());
            }
            let created: i64 = self
                .redis
                .query(
                    script
                        .arg(json)
                        .arg(millis(ttl))
                        .arg(expiry)
                        .arg(now)
                        .arg(cap)
                        .arg(record.id.as_str())
                        .arg(record.revision)
                        .arg(if record.established { "1" } else { "0" })
                        .arg(stamp()),
                )
                .await?;
            if cluster && created == 1 {
                self.redis
                    .query::<(), _>(
                        redis::cmd("ZADD")
                            .arg(self.redis.count_key())
                            .arg(expiry)
                            .arg(record.id.as_str()),
                    )
                    .await?;
            }
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
