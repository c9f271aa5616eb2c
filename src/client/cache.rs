//! The client's cache of list and read results (2026-07-28 caching hints).
//!
//! A complete result of `tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list` or `resources/read` is kept for its `ttlMs` (absent or negative:
//! 0, not kept), keyed by method and params (without `_meta`), so each page and each URI is
//! its own entry. Requests that carry `inputResponses` or `requestState` (MRTR retries) are
//! never served from it nor stored. The session actor drops entries when a matching
//! notification arrives (`notifications/tools/list_changed` drops the `tools/list` pages,
//! `notifications/resources/updated` the reads of that URI, ...), and remembers when it did: a
//! result whose request was sent before a change that concerns it (a list in flight when its
//! `list_changed` arrived) is not stored, since it may predate the change ([`Ticket`]). Both
//! scopes are reused: one client is one authorization context, so `private` results stay
//! within it, and nothing is shared between clients.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching>

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use crate::protocol::method;

/// The methods whose results may be cached.
const CACHEABLE: &[&str] = &[
    method::TOOLS_LIST,
    method::PROMPTS_LIST,
    method::RESOURCES_LIST,
    method::RESOURCES_TEMPLATES_LIST,
    method::RESOURCES_READ,
];

/// Entries kept at most; past it, expired entries go first, then everything.
const MAX_ENTRIES: usize = 1024;
/// Changes remembered at most (by method, and by URI for reads); past it, every request sent
/// before the last change counts as older than it.
const MAX_CHANGES: usize = 1024;

struct Entry {
    method: String,
    uri: Option<String>,
    value: Value,
    expires: Instant,
}

/// When a request was sent, in the cache's count of changes: its result is stored only if
/// nothing it concerns changed since.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Ticket(u64);

#[derive(Default)]
struct State {
    entries: HashMap<String, Entry>,
    /// Changes so far (invalidations, forgets).
    clock: u64,
    /// The clock of the last change of each method (`tools/list`), or of each read URI
    /// (`resources/read\n{uri}`).
    changed: HashMap<String, u64>,
    /// Requests sent before this count as older than any change (the `changed` table was
    /// emptied).
    floor: u64,
}

impl State {
    /// Notes a change of `scope` (a method, or a read URI's key).
    fn change(&mut self, scope: String) {
        self.clock += 1;
        if self.changed.len() >= MAX_CHANGES {
            self.changed.clear();
            self.floor = self.clock;
        }
        self.changed.insert(scope, self.clock);
    }

    /// Whether a result of `method_name` (on `uri`) asked at `ticket` may predate a change.
    fn changed_since(&self, ticket: Ticket, method_name: &str, uri: Option<&str>) -> bool {
        let after = |scope: &str| self.changed.get(scope).is_some_and(|&at| at > ticket.0);
        ticket.0 < self.floor
            || after(method_name)
            || uri.is_some_and(|uri| after(&read_scope(uri)))
    }
}

/// The change scope of the reads of `uri`.
fn read_scope(uri: &str) -> String {
    format!("{}\n{uri}", method::RESOURCES_READ)
}

/// Cached results by key. Shared by the client (which reads and fills it) and its session
/// actor (which invalidates it).
#[derive(Default)]
pub(crate) struct ResultCache {
    state: Mutex<State>,
}

impl fmt::Debug for ResultCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResultCache")
            .field("entries", &self.lock().entries.len())
            .finish()
    }
}

/// The time to live a result asks for: `ttlMs`, with absent, negative or malformed read as 0.
pub(crate) fn ttl_of(result: &Value) -> Duration {
    let ms = result.get("ttlMs").and_then(Value::as_f64).unwrap_or(0.0);
    if ms.is_finite() && ms > 0.0 {
        Duration::from_millis(ms.min(u64::MAX as f64) as u64)
    } else {
        Duration::ZERO
    }
}

impl ResultCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The ticket of a request about to be sent.
    pub(crate) fn ticket(&self) -> Ticket {
        Ticket(self.lock().clock)
    }

    /// The cache key of a request, or `None` when its result is not cacheable (another method,
    /// or an MRTR retry).
    pub(crate) fn key(method_name: &str, params: Option<&Value>) -> Option<String> {
        if !CACHEABLE.contains(&method_name) {
            return None;
        }
        let mut params = params.cloned().unwrap_or(Value::Null);
        if let Value::Object(map) = &mut params {
            if map.contains_key("inputResponses") || map.contains_key("requestState") {
                return None;
            }
            map.remove("_meta");
        }
        Some(format!("{method_name}\n{params}"))
    }

    /// The fresh result under `key`, if any (a stale one is dropped).
    pub(crate) fn get(&self, key: &str) -> Option<Value> {
        let entries = &mut self.lock().entries;
        let entry = entries.get(key)?;
        if entry.expires > Instant::now() {
            return Some(entry.value.clone());
        }
        entries.remove(key);
        None
    }

    /// Keeps `value`, the result of `method_name` with `params` asked at `ticket`, for its
    /// `ttlMs`; not when something it concerns changed since `ticket`.
    pub(crate) fn put(
        &self,
        key: String,
        method_name: &str,
        params: Option<&Value>,
        value: &Value,
        ticket: Ticket,
    ) {
        let ttl = ttl_of(value);
        if ttl.is_zero() {
            return;
        }
        let uri = params
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let now = Instant::now();
        let mut state = self.lock();
        if state.changed_since(ticket, method_name, uri.as_deref()) {
            return;
        }
        let entries = &mut state.entries;
        if entries.len() >= MAX_ENTRIES {
            entries.retain(|_, entry| entry.expires > now);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(
            key,
            Entry {
                method: method_name.to_owned(),
                uri,
                value: value.clone(),
                expires: now.checked_add(ttl).unwrap_or(now),
            },
        );
    }

    /// Drops what a notification says changed: the list pages of a `list_changed`, the reads
    /// of an updated resource.
    pub(crate) fn invalidate(&self, notification: &str, params: Option<&Value>) {
        match notification {
            method::NOTIFICATION_TOOLS_LIST_CHANGED => self.forget(method::TOOLS_LIST),
            method::NOTIFICATION_PROMPTS_LIST_CHANGED => self.forget(method::PROMPTS_LIST),
            method::NOTIFICATION_RESOURCES_LIST_CHANGED => {
                self.forget(method::RESOURCES_LIST);
                self.forget(method::RESOURCES_TEMPLATES_LIST);
            }
            method::NOTIFICATION_RESOURCES_UPDATED => {
                let Some(uri) = params.and_then(|p| p.get("uri")).and_then(Value::as_str) else {
                    return;
                };
                let mut state = self.lock();
                state.change(read_scope(uri));
                state.entries.retain(|_, e| {
                    e.method != method::RESOURCES_READ || e.uri.as_deref() != Some(uri)
                });
            }
            _ => {}
        }
    }

    /// Drops everything of `method_name` (a change, an invalid cursor, a refused call), and
    /// what its requests in flight will answer.
    pub(crate) fn forget(&self, method_name: &str) {
        let mut state = self.lock();
        state.change(method_name.to_owned());
        state.entries.retain(|_, e| e.method != method_name);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn ttl_reads_absent_and_negative_as_zero() {
        assert_eq!(ttl_of(&json!({})), Duration::ZERO);
        assert_eq!(ttl_of(&json!({"ttlMs": -5})), Duration::ZERO);
        assert_eq!(ttl_of(&json!({"ttlMs": "x"})), Duration::ZERO);
        assert_eq!(ttl_of(&json!({"ttlMs": 1500})), Duration::from_millis(1500));
    }

    #[test]
    fn keys_ignore_meta_and_refuse_retries() {
        let a = ResultCache::key(
            "tools/list",
            Some(&json!({"_meta": {"x": 1}, "cursor": "c"})),
        );
        let b = ResultCache::key("tools/list", Some(&json!({"cursor": "c"})));
        assert_eq!(a, b);
        assert_ne!(a, ResultCache::key("tools/list", None));
        assert_eq!(ResultCache::key("tools/call", None), None);
        let retry = json!({"uri": "u", "inputResponses": {}});
        assert_eq!(ResultCache::key("resources/read", Some(&retry)), None);
        let state = json!({"uri": "u", "requestState": "s"});
        assert_eq!(ResultCache::key("resources/read", Some(&state)), None);
    }

    #[test]
    fn notifications_drop_matching_entries_only() {
        let cache = ResultCache::default();
        let fresh = json!({"ttlMs": 60_000});
        for (method_name, params) in [
            ("tools/list", None),
            ("prompts/list", None),
            ("resources/read", Some(json!({"uri": "a"}))),
            ("resources/read", Some(json!({"uri": "b"}))),
        ] {
            let key = ResultCache::key(method_name, params.as_ref()).unwrap_or_default();
            cache.put(key, method_name, params.as_ref(), &fresh, cache.ticket());
        }
        cache.invalidate(method::NOTIFICATION_TOOLS_LIST_CHANGED, None);
        cache.invalidate(
            method::NOTIFICATION_RESOURCES_UPDATED,
            Some(&json!({"uri": "a"})),
        );
        let has = |m: &str, p: Option<Value>| {
            cache
                .get(&ResultCache::key(m, p.as_ref()).unwrap_or_default())
                .is_some()
        };
        assert!(!has("tools/list", None));
        assert!(has("prompts/list", None));
        assert!(!has("resources/read", Some(json!({"uri": "a"}))));
        assert!(has("resources/read", Some(json!({"uri": "b"}))));
    }

    #[test]
    fn a_result_asked_before_a_change_it_concerns_is_not_kept() {
        let cache = ResultCache::default();
        let fresh = json!({"ttlMs": 60_000});
        let has = |m: &str, p: Option<Value>| {
            cache
                .get(&ResultCache::key(m, p.as_ref()).unwrap_or_default())
                .is_some()
        };
        let put = |m: &str, p: Option<Value>, ticket| {
            let key = ResultCache::key(m, p.as_ref()).unwrap_or_default();
            cache.put(key, m, p.as_ref(), &fresh, ticket);
        };
        let before = cache.ticket();
        cache.invalidate(method::NOTIFICATION_TOOLS_LIST_CHANGED, None);
        cache.invalidate(
            method::NOTIFICATION_RESOURCES_UPDATED,
            Some(&json!({"uri": "a"})),
        );
        put("tools/list", None, before);
        put("prompts/list", None, before);
        put("resources/read", Some(json!({"uri": "a"})), before);
        put("resources/read", Some(json!({"uri": "b"})), before);
        assert!(!has("tools/list", None), "in flight when its list changed");
        assert!(has("prompts/list", None));
        assert!(!has("resources/read", Some(json!({"uri": "a"}))));
        assert!(has("resources/read", Some(json!({"uri": "b"}))));
        put("tools/list", None, cache.ticket());
        assert!(has("tools/list", None), "asked after the change");
    }
}
