//! Sealed `requestState`: every `requestState` the server hands a 2026-07-28 client is
//! encrypted and authenticated (ChaCha20-Poly1305) under a key of the server's [`StateKeys`],
//! expires after a time to live, and is bound to the request it answers (method, target and a
//! digest of the arguments). The client echoes it byte for byte; a retry whose state fails any
//! check is refused with `-32602` before any handler runs.
//!
//! The sealed [`Payload`] carries the handler's own state (explicit style) and what the SDK needs
//! to resume or replay an implicit-style call: the parked call's id, the round, and every answer
//! of the earlier rounds.
//!
//! Wire form: base64url (no padding) of `1 | key id length | key id | nonce (12) | ciphertext`;
//! the version byte and the key id are authenticated as associated data.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>
//! (requestState integrity, anti-replay).

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, Generate, KeyInit, Payload as AeadPayload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::protocol::{InputResponses, members, method};

/// The format version, the first byte of every sealed state.
const VERSION: u8 = 1;
/// What the associated data starts with (then the version byte and the key id).
const AAD_PREFIX: &[u8] = b"actix-mcp/requestState";
const NONCE_LEN: usize = 12;

/// The keys `requestState` is sealed with: one current key (new states) and older keys still
/// accepted (rotation). Built from [`ServerBuilder`](crate::ServerBuilder) settings; without
/// any, one random key per process.
#[derive(Clone)]
pub(crate) struct StateKeys {
    current: (String, ChaCha20Poly1305),
    accepted: Vec<(String, ChaCha20Poly1305)>,
    pub(crate) ttl: Duration,
}

impl fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Key ids only: never the keys.
        f.debug_struct("StateKeys")
            .field("current", &self.current.0)
            .field(
                "accepted",
                &self.accepted.iter().map(|(id, _)| id).collect::<Vec<_>>(),
            )
            .field("ttl", &self.ttl)
            .finish()
    }
}

/// The default time to live of a sealed state.
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(600);

impl Default for StateKeys {
    fn default() -> Self {
        let key = Key::generate();
        Self {
            current: ("process".to_owned(), ChaCha20Poly1305::new(&key)),
            accepted: Vec::new(),
            ttl: DEFAULT_TTL,
        }
    }
}

impl StateKeys {
    /// Makes `key` (named `id`) the key new states are sealed with; the previous current key
    /// stays accepted unless it was the per-process random one.
    pub(crate) fn set_current(&mut self, id: String, key: &[u8; 32], keep_previous: bool) {
        let cipher = ChaCha20Poly1305::new(&Key::from(*key));
        let previous = std::mem::replace(&mut self.current, (id, cipher));
        if keep_previous {
            self.accepted.push(previous);
        }
    }

    /// Accepts states sealed with `key` (named `id`) without sealing new ones with it.
    pub(crate) fn accept(&mut self, id: String, key: &[u8; 32]) {
        self.accepted
            .push((id, ChaCha20Poly1305::new(&Key::from(*key))));
    }

    fn find(&self, id: &str) -> Option<&ChaCha20Poly1305> {
        std::iter::once(&self.current)
            .chain(&self.accepted)
            .find(|(known, _)| known == id)
            .map(|(_, cipher)| cipher)
    }

    /// Seals `payload` for the request `binding` describes, expiring after the ring's TTL.
    pub(crate) fn seal(&self, binding: &Binding, payload: Payload) -> String {
        let sealed = Sealed {
            method: binding.method.clone(),
            target: binding.target.clone(),
            digest: binding.digest.clone(),
            caller: binding.caller.clone(),
            expires: now_ms()
                .saturating_add(u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX)),
            payload,
        };
        let plain = serde_json::to_vec(&sealed).unwrap_or_default();
        let (id, cipher) = &self.current;
        let nonce = Nonce::generate();
        let header = header(id);
        let Ok(ciphertext) = cipher.encrypt(
            &nonce,
            AeadPayload {
                msg: &plain,
                aad: &aad(&header),
            },
        ) else {
            // Encryption fails only for messages past the cipher's limit (256 GiB).
            return String::new();
        };
        let mut out = header;
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&ciphertext);
        URL_SAFE_NO_PAD.encode(out)
    }

    /// Opens a state a client echoed, checking its integrity, its expiry and that it was
    /// issued for the request `binding` describes.
    ///
    /// # Errors
    /// See [`StateError`].
    pub(crate) fn open(&self, binding: &Binding, text: &str) -> Result<Payload, StateError> {
        let bytes = URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| StateError::Malformed)?;
        let (&version, rest) = bytes.split_first().ok_or(StateError::Malformed)?;
        if version != VERSION {
            return Err(StateError::Malformed);
        }
        let (&id_len, rest) = rest.split_first().ok_or(StateError::Malformed)?;
        let id_len = usize::from(id_len);
        if rest.len() < id_len + NONCE_LEN {
            return Err(StateError::Malformed);
        }
        let (id, rest) = rest.split_at(id_len);
        let (nonce, ciphertext) = rest.split_at(NONCE_LEN);
        let id = std::str::from_utf8(id).map_err(|_| StateError::Malformed)?;
        let cipher = self.find(id).ok_or(StateError::UnknownKey)?;
        let nonce = <&Nonce>::try_from(nonce).map_err(|_| StateError::Malformed)?;
        let plain = cipher
            .decrypt(
                nonce,
                AeadPayload {
                    msg: ciphertext,
                    aad: &aad(&header(id)),
                },
            )
            .map_err(|_| StateError::Tampered)?;
        let sealed: Sealed = serde_json::from_slice(&plain).map_err(|_| StateError::Tampered)?;
        if sealed.expires < now_ms() {
            return Err(StateError::Expired);
        }
        if sealed.method != binding.method {
            return Err(StateError::Rebound("method"));
        }
        if sealed.target != binding.target {
            return Err(StateError::Rebound(target_word(&binding.method)));
        }
        if sealed.digest != binding.digest {
            return Err(StateError::Rebound("arguments"));
        }
        if sealed.caller != binding.caller {
            return Err(StateError::Rebound("caller"));
        }
        let mut payload = sealed.payload;
        payload.expires = sealed.expires;
        Ok(payload)
    }
}

fn header(id: &str) -> Vec<u8> {
    // Key ids are at most 255 bytes (checked by the builder); a longer one is cut.
    let id = &id.as_bytes()[..id.len().min(255)];
    let mut header = Vec::with_capacity(2 + id.len());
    header.push(VERSION);
    header.push(u8::try_from(id.len()).unwrap_or(u8::MAX));
    header.extend_from_slice(id);
    header
}

fn aad(header: &[u8]) -> Vec<u8> {
    [AAD_PREFIX, header].concat()
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn target_word(method_name: &str) -> &'static str {
    if method_name == method::RESOURCES_READ {
        "resource uri"
    } else if method_name == method::PROMPTS_GET {
        "prompt"
    } else {
        "tool"
    }
}

/// Why an echoed `requestState` was refused. Each becomes `-32602`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum StateError {
    /// Not base64url, or not of this SDK's format.
    #[error("requestState is malformed")]
    Malformed,
    /// Sealed with a key the server does not (or no longer) accept.
    #[error("requestState was sealed with a key this server does not accept")]
    UnknownKey,
    /// The integrity check failed: the state was altered.
    #[error("requestState failed its integrity check")]
    Tampered,
    /// Past its time to live.
    #[error("requestState has expired; start the request again without it")]
    Expired,
    /// Issued for another request: the method, target or arguments differ.
    #[error("requestState was issued for another {0}")]
    Rebound(&'static str),
}

/// What a sealed state is bound to: the request's method, its target (tool or prompt name,
/// resource uri), a digest of its arguments (canonical JSON: keys sorted) and, on an endpoint
/// with bearer auth, the caller (the owner key of its identity), so that another caller
/// cannot replay it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    pub(crate) method: String,
    pub(crate) target: String,
    pub(crate) digest: String,
    pub(crate) caller: Option<String>,
}

impl Binding {
    /// The binding of a request (its params as received).
    pub(crate) fn of(method_name: &str, params: Option<&Value>, caller: Option<String>) -> Self {
        let (target, arguments) = Self::parts(method_name, params);
        Self::new(method_name, target, arguments, caller)
    }

    /// What a binding reads of a request's params: its target (`uri` of `resources/read`,
    /// `name` otherwise; empty when absent) and its arguments (absent when null).
    pub(crate) fn parts<'a>(
        method_name: &str,
        params: Option<&'a Value>,
    ) -> (&'a str, Option<&'a Value>) {
        let key = if method_name == method::RESOURCES_READ {
            "uri"
        } else {
            "name"
        };
        let [target, arguments] = match params.and_then(Value::as_object) {
            Some(params) => members(params, [key, "arguments"]),
            None => [None, None],
        };
        (
            target.and_then(Value::as_str).unwrap_or_default(),
            arguments.filter(|a| !a.is_null()),
        )
    }

    /// The binding of a request of `method_name` from its [`parts`](Self::parts).
    pub(crate) fn new(
        method_name: &str,
        target: &str,
        arguments: Option<&Value>,
        caller: Option<String>,
    ) -> Self {
        let mut canonical = String::new();
        match arguments {
            // No arguments and `{}` are the same call.
            None => canonical.push_str("{}"),
            Some(value) => write_canonical(value, &mut canonical),
        }
        Self {
            method: method_name.to_owned(),
            target: target.to_owned(),
            digest: URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes())),
            caller,
        }
    }
}

/// Canonical JSON: object keys sorted, no whitespace.
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(inner) = map.get(key) {
                    write_canonical(inner, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// What a sealed state carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Payload {
    /// The handler's own state (explicit style), as it wrote it.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub(crate) state: Option<String>,
    /// The parked call to resume (implicit style), when one was parked.
    #[serde(rename = "p", default, skip_serializing_if = "Option::is_none")]
    pub(crate) parked: Option<String>,
    /// The round this state answers (1 for the first `input_required`).
    #[serde(rename = "r", default)]
    pub(crate) round: u32,
    /// The answers of the earlier rounds, by key, replayed when the call runs again.
    #[serde(
        rename = "a",
        default,
        skip_serializing_if = "InputResponses::is_empty"
    )]
    pub(crate) answers: InputResponses,
    /// The method of each input request the round asked, by key: the retry's answers are
    /// checked against them.
    #[serde(
        rename = "k",
        default,
        skip_serializing_if = "std::collections::BTreeMap::is_empty"
    )]
    pub(crate) asked: std::collections::BTreeMap<String, String>,
    /// This state's own id: a single-use state is refused once a retry has used it.
    #[serde(rename = "u", default, skip_serializing_if = "Option::is_none")]
    pub(crate) id: Option<String>,
    /// When the state expires, milliseconds since the Unix epoch (set when it is opened).
    #[serde(skip)]
    pub(crate) expires: u64,
}

#[derive(Serialize, Deserialize)]
struct Sealed {
    #[serde(rename = "m")]
    method: String,
    #[serde(rename = "t")]
    target: String,
    #[serde(rename = "d")]
    digest: String,
    #[serde(rename = "c", default, skip_serializing_if = "Option::is_none")]
    caller: Option<String>,
    #[serde(rename = "x")]
    expires: u64,
    #[serde(flatten)]
    payload: Payload,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(name: &str, arguments: Value) -> Binding {
        Binding::of(
            method::TOOLS_CALL,
            Some(&json!({ "name": name, "arguments": arguments })),
            None,
        )
    }

    /// An opened payload without its expiry (which `open` sets), to compare with `payload()`.
    fn unexpiring(mut opened: Payload) -> Payload {
        assert!(
            opened.expires > now_ms(),
            "an opened state carries its expiry"
        );
        opened.expires = 0;
        opened
    }

    fn payload() -> Payload {
        Payload {
            state: Some("mine".into()),
            round: 1,
            ..Payload::default()
        }
    }

    #[test]
    fn a_sealed_state_opens_for_its_own_request_only() {
        let keys = StateKeys::default();
        let binding = call("t", json!({ "a": 1, "b": [1, { "y": 2, "x": 1 }] }));
        let sealed = keys.seal(&binding, payload());
        assert!(!sealed.contains("mine"));
        // Key order does not matter.
        let same = call("t", json!({ "b": [1, { "x": 1, "y": 2 }], "a": 1 }));
        assert_eq!(keys.open(&same, &sealed).map(unexpiring), Ok(payload()));
        assert_eq!(
            keys.open(&call("u", json!({ "a": 1 })), &sealed),
            Err(StateError::Rebound("tool"))
        );
        assert_eq!(
            keys.open(&call("t", json!({ "a": 2 })), &sealed),
            Err(StateError::Rebound("arguments"))
        );
        let prompt = Binding {
            method: method::PROMPTS_GET.into(),
            ..binding.clone()
        };
        assert_eq!(
            keys.open(&prompt, &sealed),
            Err(StateError::Rebound("method"))
        );
        // Another caller (or an anonymous one) cannot replay a caller's state.
        let alice = Binding {
            caller: Some("iss\0alice".into()),
            ..binding.clone()
        };
        let sealed = keys.seal(&alice, payload());
        assert_eq!(keys.open(&alice, &sealed).map(unexpiring), Ok(payload()));
        let bob = Binding {
            caller: Some("iss\0bob".into()),
            ..binding.clone()
        };
        assert_eq!(keys.open(&bob, &sealed), Err(StateError::Rebound("caller")));
        assert_eq!(
            keys.open(&binding, &sealed),
            Err(StateError::Rebound("caller"))
        );
    }

    #[test]
    fn tampered_and_foreign_states_are_refused() {
        let keys = StateKeys::default();
        let binding = call("t", json!({}));
        let sealed = keys.seal(&binding, payload());
        assert!(keys.open(&binding, &format!("{sealed}-TAMPERED")).is_err());
        let mut bytes = URL_SAFE_NO_PAD.decode(&sealed).unwrap_or_default();
        if let Some(last) = bytes.last_mut() {
            *last ^= 1;
        }
        assert_eq!(
            keys.open(&binding, &URL_SAFE_NO_PAD.encode(&bytes)),
            Err(StateError::Tampered)
        );
        assert_eq!(
            StateKeys::default().open(&binding, &sealed),
            Err(StateError::Tampered)
        );
        assert_eq!(keys.open(&binding, ""), Err(StateError::Malformed));
    }

    #[test]
    fn rotation_keeps_old_keys_and_refuses_unknown_ones() {
        let mut old = StateKeys::default();
        old.set_current("k1".into(), &[1; 32], false);
        let binding = call("t", json!({}));
        let sealed = old.seal(&binding, payload());
        let mut new = StateKeys::default();
        new.set_current("k2".into(), &[2; 32], false);
        assert_eq!(new.open(&binding, &sealed), Err(StateError::UnknownKey));
        new.accept("k1".into(), &[1; 32]);
        assert_eq!(new.open(&binding, &sealed).map(unexpiring), Ok(payload()));
    }

    #[test]
    fn expired_states_are_refused() {
        let keys = StateKeys {
            ttl: Duration::ZERO,
            ..StateKeys::default()
        };
        let binding = call("t", json!({}));
        let sealed = keys.seal(&binding, payload());
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(keys.open(&binding, &sealed), Err(StateError::Expired));
    }
}
