//! The cluster's admission counters on Redis.

use std::time::Duration;

use actix_mcp_actors::{StoreError, StoreFuture};

use crate::cluster::{AdmissionAsk, AdmissionStore, AdmissionVerdict};

use super::connection::{Redis, ScriptCall, millis};

/// The [`AdmissionStore`] on Redis: one script per admission (one round trip), under the hash
/// tag `{admission}` so that every key of a script shares a slot of a Redis Cluster.
///
/// | key | type | what | expires |
/// | --- | --- | --- | --- |
/// | `mcp:{admission}:slots:<key>` | sorted set | the leases of a concurrency limit (`global`, `principal:<principal>`), each scored by its expiry (Unix ms, the server's clock) | the lease TTL, renewed with the leases |
/// | `mcp:{admission}:rate:<key>` | hash | a token bucket (`principal-rate:<principal>`): `tokens` and `at` (Unix ms) | when the bucket would be full again |
///
/// A script counts only the leases not yet expired (it prunes the others first), so the slots
/// of a node that died without releasing them are free again once their leases expire. Every
/// time is the Redis server's (`TIME`), so the nodes' clocks do not matter.
#[derive(Debug, Clone)]
pub struct RedisAdmissionStore {
    redis: Redis,
}

impl RedisAdmissionStore {
    /// The store on `redis`.
    pub fn new(redis: Redis) -> Self {
        Self { redis }
    }

    fn slot_key(&self, key: &str) -> String {
        format!("{}:{{admission}}:slots:{key}", self.redis.prefix)
    }

    fn rate_key(&self, key: &str) -> String {
        format!("{}:{{admission}}:rate:{key}", self.redis.prefix)
    }
}

/// Admits a request: KEYS are the slot sets then the rate buckets; ARGV[1] the lease, ARGV[2]
/// its TTL (ms), ARGV[3] the number of slot sets, then each set's limit, then each bucket's
/// rate (tokens per ms) and burst. Returns `{0}` admitted, `{1, i}` slot set `i` full, `{2, i,
/// ms}` bucket `i` empty for `ms`; nothing is written unless admitted.
static ADMIT: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = ARGV[1]
local ttl = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
for i = 1, n do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[3 + i]) then
    return {1, i - 1}
  end
end
local tokens = {}
for j = n + 1, #KEYS do
  local a = 3 + n + 2 * (j - n) - 1
  local per_ms = tonumber(ARGV[a])
  local burst = tonumber(ARGV[a + 1])
  local state = redis.call('HMGET', KEYS[j], 'tokens', 'at')
  local left = tonumber(state[1]) or burst
  local at = tonumber(state[2]) or now
  left = math.min(burst, left + math.max(0, now - at) * per_ms)
  if left < 1 then
    return {2, j - n - 1, math.ceil((1 - left) / per_ms)}
  end
  tokens[j] = {left - 1, math.ceil(burst / per_ms) + 1000}
end
for j = n + 1, #KEYS do
  redis.call('HSET', KEYS[j], 'tokens', tostring(tokens[j][1]), 'at', now)
  redis.call('PEXPIRE', KEYS[j], tokens[j][2])
end
for i = 1, n do
  redis.call('ZADD', KEYS[i], now + ttl, lease)
  redis.call('PEXPIRE', KEYS[i], ttl)
end
return {0}
",
    )
});

/// Renews a lease under each of KEYS: ARGV[1] the lease, ARGV[2] its TTL (ms). A lease gone
/// (released, or expired) is not brought back.
static RENEW: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
for i = 1, #KEYS do
  local at = redis.call('ZSCORE', KEYS[i], ARGV[1])
  if at and tonumber(at) > now then
    redis.call('ZADD', KEYS[i], 'XX', now + ttl, ARGV[1])
    if redis.call('PTTL', KEYS[i]) < ttl then
      redis.call('PEXPIRE', KEYS[i], ttl)
    end
  end
end
return 0
",
    )
});

fn malformed(reply: &[i64]) -> StoreError {
    StoreError::Unavailable(format!("redis: unexpected admission reply {reply:?}"))
}

impl AdmissionStore for RedisAdmissionStore {
    fn acquire<'a>(&'a self, ask: &'a AdmissionAsk) -> StoreFuture<'a, AdmissionVerdict> {
        Box::pin(async move {
            let mut invocation = ScriptCall::new(&ADMIT, ask.slots.len() + ask.rates.len());
            for slot in &ask.slots {
                invocation.arg(self.slot_key(&slot.key));
            }
            for rate in &ask.rates {
                invocation.arg(self.rate_key(&rate.key));
            }
            invocation
                .arg(&ask.lease)
                .arg(millis(ask.lease_ttl))
                .arg(ask.slots.len());
            for slot in &ask.slots {
                invocation.arg(slot.limit.max(1));
            }
            for rate in &ask.rates {
                let per_ms = rate.per_second.max(1e-9) / 1000.0;
                invocation.arg(per_ms.to_string()).arg(rate.burst.max(1));
            }
            let reply: Vec<i64> = self.redis.query(&invocation).await?;
            let index = |i: i64| usize::try_from(i).map_err(|_| malformed(&reply));
            match reply.as_slice() {
                [0] => Ok(AdmissionVerdict::Admitted),
                [1, i] => Ok(AdmissionVerdict::Full(index(*i)?)),
                [2, i, ms] => Ok(AdmissionVerdict::RateLimited(
                    index(*i)?,
                    Duration::from_millis(u64::try_from(*ms).unwrap_or(1).max(1)),
                )),
                _ => Err(malformed(&reply)),
            }
        })
    }

    fn renew<'a>(
        &'a self,
        lease: &'a str,
        keys: &'a [String],
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut invocation = ScriptCall::new(&RENEW, keys.len());
            for key in keys {
                invocation.arg(self.slot_key(key));
            }
            invocation.arg(lease).arg(millis(ttl));
            self.redis.query::<i64, _>(&invocation).await.map(drop)
        })
    }

    fn release<'a>(&'a self, lease: &'a str, keys: &'a [String]) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut pipe = redis::pipe();
            for key in keys {
                pipe.cmd("ZREM").arg(self.slot_key(key)).arg(lease).ignore();
            }
            self.redis.query::<(), _>(&pipe).await
        })
    }
}
