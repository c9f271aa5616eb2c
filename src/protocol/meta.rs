//! `_meta` maps, free-form JSON objects and progress tokens.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/index#meta>

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `_meta` object carried by params, results and many data types; unknown keys are kept.
pub type Meta = serde_json::Map<String, Value>;

/// A free-form JSON object (capability settings, tool arguments, JSON schemas).
pub type JsonObject = serde_json::Map<String, Value>;

/// The `_meta` key under which a requester asks for progress notifications.
pub const PROGRESS_TOKEN_KEY: &str = "progressToken";

/// A token a requester places in `params._meta.progressToken` to receive `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProgressToken {
    /// A string token.
    String(String),
    /// An integer token.
    Integer(i64),
}

impl std::fmt::Display for ProgressToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::String(s) => write!(f, "{s:?}"),
            Self::Integer(n) => n.fmt(f),
        }
    }
}

impl From<String> for ProgressToken {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}

impl From<&str> for ProgressToken {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}

impl From<i64> for ProgressToken {
    fn from(n: i64) -> Self {
        Self::Integer(n)
    }
}

/// Reads `progressToken` from a `_meta` map; `None` when absent or not a string/integer.
pub fn progress_token(meta: Option<&Meta>) -> Option<ProgressToken> {
    match meta?.get(PROGRESS_TOKEN_KEY)? {
        Value::String(s) => Some(ProgressToken::String(s.clone())),
        Value::Number(n) => n.as_i64().map(ProgressToken::Integer),
        _ => None,
    }
}

/// Moves the member `key` out of `object`. A map of a few members is scanned, and its index
/// rebuilt from the hashes it keeps, so that no key is hashed (a large map is looked up); the
/// other members keep their order.
#[cfg(feature = "server")]
pub(crate) fn take_member(object: &mut JsonObject, key: &str) -> Option<Value> {
    if object.len() > SCANNED {
        return object.remove(key);
    }
    let mut taken = None;
    object.retain(|member, value| {
        if taken.is_none() && member == key {
            taken = Some(std::mem::take(value));
            return false;
        }
        true
    });
    taken
}

/// The most members of a map scanned rather than looked up.
const SCANNED: usize = 16;

/// The members `keys` of `object`, in one pass over it: a map of a few members (most params
/// and `_meta` maps) is read without hashing any key, where a lookup per key would hash each
/// (a large map is looked up key by key).
pub(crate) fn members<'a, const N: usize>(
    object: &'a JsonObject,
    keys: [&str; N],
) -> [Option<&'a Value>; N] {
    let mut found = [None; N];
    if object.len() > SCANNED {
        for (slot, key) in found.iter_mut().zip(keys) {
            *slot = object.get(key);
        }
        return found;
    }
    for (key, value) in object {
        if let Some(i) = keys.iter().position(|k| k == key) {
            found[i] = Some(value);
        }
    }
    found
}

/// The member `key` of `value` when it is an object (as [`Value::get`], read as [`members`]).
pub(crate) fn member<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    let [found] = members(value.as_object()?, [key]);
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Meta {
        match v {
            Value::Object(m) => m,
            _ => Meta::new(),
        }
    }

    #[test]
    fn progress_token_reads_string_and_integer() {
        let m = meta(json!({"progressToken": "abc"}));
        assert_eq!(
            progress_token(Some(&m)),
            Some(ProgressToken::String("abc".into()))
        );
        let m = meta(json!({"progressToken": 7}));
        assert_eq!(progress_token(Some(&m)), Some(ProgressToken::Integer(7)));
    }

    #[test]
    fn progress_token_ignores_missing_and_invalid() {
        assert_eq!(progress_token(None), None);
        assert_eq!(progress_token(Some(&meta(json!({})))), None);
        assert_eq!(
            progress_token(Some(&meta(json!({"progressToken": 1.5})))),
            None
        );
        assert_eq!(
            progress_token(Some(&meta(json!({"progressToken": null})))),
            None
        );
        assert_eq!(
            progress_token(Some(&meta(json!({"progressToken": [1]})))),
            None
        );
    }

    #[cfg(feature = "server")]
    #[test]
    fn a_member_taken_leaves_the_others_found_in_a_small_map_and_a_large_one() {
        let mut small = meta(json!({"name": "echo", "arguments": {"a": 1}, "_meta": {}}));
        assert_eq!(take_member(&mut small, "arguments"), Some(json!({"a": 1})));
        assert_eq!(take_member(&mut small, "arguments"), None);
        assert_eq!(small.keys().collect::<Vec<_>>(), ["name", "_meta"]);
        // The index still finds what is left, and what is added after.
        assert_eq!(small.get("_meta"), Some(&json!({})));
        small.insert("x".into(), json!(2));
        assert_eq!(small.get("x"), Some(&json!(2)));
        let mut large: Meta = (0..40).map(|i| (format!("k{i}"), json!(i))).collect();
        assert_eq!(take_member(&mut large, "k7"), Some(json!(7)));
        assert_eq!((large.len(), large.get("k39")), (39, Some(&json!(39))));
        assert_eq!(members(&large, ["k7", "k8"]), [None, Some(&json!(8))]);
    }

    #[test]
    fn progress_token_serializes_untagged() {
        assert_eq!(
            serde_json::to_value(ProgressToken::Integer(3)).ok(),
            Some(json!(3))
        );
        assert_eq!(
            serde_json::to_value(ProgressToken::from("t")).ok(),
            Some(json!("t"))
        );
    }
}

/// Checks an extension identifier: a vendor prefix (dot-separated labels of letters, digits and
/// hyphens), a slash, and a name (letters, digits, `-`, `_`, `.`).
#[cfg(any(feature = "server", feature = "client"))]
pub(crate) fn check_extension_id(id: &str) -> Result<(), &'static str> {
    const SHAPE: &str = "an extension identifier is `vendor-prefix/name`, as `com.example/search`";
    let (prefix, name) = id.split_once('/').ok_or(SHAPE)?;
    let label = |l: &str| {
        !l.is_empty()
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if prefix.split('.').all(label)
        && !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        Ok(())
    } else {
        Err(SHAPE)
    }
}

#[cfg(all(test, any(feature = "server", feature = "client")))]
mod extension_id_tests {
    use super::check_extension_id;

    #[test]
    fn identifiers_are_vendor_prefix_slash_name() {
        for good in [
            "io.modelcontextprotocol/skills",
            "com.example/search",
            "example/x_y.z-1",
        ] {
            assert_eq!(check_extension_id(good), Ok(()), "{good}");
        }
        for bad in [
            "skills",
            "/skills",
            "io.example/",
            "io..example/x",
            "-io.example/x",
            "io.example/a/b",
            "io example/x",
        ] {
            assert!(check_extension_id(bad).is_err(), "{bad}");
        }
    }
}

/// The `_meta` object of `params`, to edit: made when absent (params that are not an object,
/// and a `_meta` that is not one, are replaced by objects). Middleware edit `_meta` with it.
#[cfg(any(feature = "server", feature = "client"))]
pub(super) fn meta_in(params: &mut Option<Value>) -> &mut Meta {
    object_in(
        object_in(params.get_or_insert(Value::Null))
            .entry("_meta")
            .or_insert(Value::Null),
    )
}

/// The object in `slot`, made (replacing what was there) when it holds none.
#[cfg(any(feature = "server", feature = "client"))]
fn object_in(slot: &mut Value) -> &mut Meta {
    if !slot.is_object() {
        *slot = Value::Object(Meta::new());
    }
    match slot {
        Value::Object(map) => map,
        _ => unreachable!("made an object above"),
    }
}
