//! The shared catalog ([`Server::define_shared_tool`](crate::Server::define_shared_tool)) on
//! Redis.

use actix_mcp_actors::{StoreError, StoreFuture};

use crate::server::{CatalogStore, SharedTool};

use super::connection::{Redis, unavailable};

/// The [`CatalogStore`] on Redis: one hash, `mcp:catalog:tools`, of each shared tool's name to
/// its factory and arguments (JSON). It has no time to live: a shared tool stays until
/// [`Server::remove_shared_tool`](crate::Server::remove_shared_tool) removes it.
#[derive(Debug, Clone)]
pub struct RedisCatalogStore {
    redis: Redis,
}

impl RedisCatalogStore {
    /// The store on `redis`.
    pub fn new(redis: Redis) -> Self {
        Self { redis }
    }

    fn key(&self) -> String {
        format!("{}:catalog:tools", self.redis.prefix)
    }
}

fn decode(name: &str, json: &str) -> Result<SharedTool, StoreError> {
    serde_json::from_str(json)
        .map_err(|err| StoreError::Corrupt(format!("shared tool {name}: {err}")))
}

impl CatalogStore for RedisCatalogStore {
    fn tools(&self) -> StoreFuture<'_, Vec<SharedTool>> {
        Box::pin(async move {
            let mut conn = self.redis.shared_conn();
            let entries: Vec<(String, String)> = redis::cmd("HGETALL")
                .arg(self.key())
                .query_async(&mut conn)
                .await
                .map_err(|err| unavailable(&err))?;
            entries
                .iter()
                .map(|(name, json)| decode(name, json))
                .collect()
        })
    }

    fn tool<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<SharedTool>> {
        Box::pin(async move {
            let mut conn = self.redis.shared_conn();
            let json: Option<String> = redis::cmd("HGET")
                .arg(self.key())
                .arg(name)
                .query_async(&mut conn)
                .await
                .map_err(|err| unavailable(&err))?;
            json.map(|json| decode(name, &json)).transpose()
        })
    }

    fn put_tool<'a>(&'a self, tool: &'a SharedTool) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let json = serde_json::to_string(tool)
                .map_err(|err| StoreError::Corrupt(format!("shared tool {}: {err}", tool.name)))?;
            let mut conn = self.redis.shared_conn();
            redis::cmd("HSET")
                .arg(self.key())
                .arg(&tool.name)
                .arg(json)
                .query_async::<()>(&mut conn)
                .await
                .map_err(|err| unavailable(&err))
        })
    }

    fn remove_tool<'a>(&'a self, name: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let mut conn = self.redis.shared_conn();
            let removed: u64 = redis::cmd("HDEL")
                .arg(self.key())
                .arg(name)
                .query_async(&mut conn)
                .await
                .map_err(|err| unavailable(&err))?;
            Ok(removed > 0)
        })
    }
}
