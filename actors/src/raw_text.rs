//! Reading JSON text without building a value: an object's members as text, a string's
//! text as a string, and the checks a parse into a value makes that reading text skips.

use std::fmt;

use serde::Deserialize;
use serde_json::value::RawValue;

/// The members `keys` name of the JSON object `object`, as text (the last one where a key
/// repeats, as a parse into a value keeps); all `None` when `object` is not an object.
pub fn raw_members<'a, const N: usize>(
    object: &'a RawValue,
    keys: [&str; N],
) -> [Option<&'a RawValue>; N] {
    let mut found = [None; N];
    let mut de = serde_json::Deserializer::from_str(object.get());
    // Text the parse accepted once: an error only means `object` is not an object.
    let _ = serde::Deserializer::deserialize_map(
        &mut de,
        MembersVisitor {
            keys: &keys,
            found: &mut found,
        },
    );
    found
}

struct MembersVisitor<'k, 'f, 'a, const N: usize> {
    keys: &'k [&'k str; N],
    found: &'f mut [Option<&'a RawValue>; N],
}

impl<'de, const N: usize> serde::de::Visitor<'de> for MembersVisitor<'_, '_, 'de, N> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let value = map.next_value::<&'de RawValue>()?;
            if let Some(slot) = self.keys.iter().position(|k| *k == key) {
                self.found[slot] = Some(value);
            }
        }
        Ok(())
    }
}

/// An object key, borrowed unless it has escapes.
pub(crate) struct Key<'a>(pub(crate) std::borrow::Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> serde::de::Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(std::borrow::Cow::Borrowed(v)))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key(std::borrow::Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key(std::borrow::Cow::Owned(v)))
    }
}

/// A JSON string's text as a string (`None`: not a string).
pub fn raw_str(raw: &RawValue) -> Option<std::borrow::Cow<'_, str>> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    match serde_json::from_str::<&str>(text) {
        Ok(borrowed) => Some(std::borrow::Cow::Borrowed(borrowed)),
        Err(_) => serde_json::from_str::<String>(text)
            .ok()
            .map(std::borrow::Cow::Owned),
    }
}

/// How deep `_meta` may nest, counting itself, for a message to parse into a value: `serde_json`
/// parses 127 levels, and the message and its params take two.
pub(crate) const MAX_META_NESTING: usize = 125;

/// Checks a JSON value as a parse into a value would, building nothing: its strings' escapes,
/// its numbers' range and (beyond the limit of the parser it runs in) its nesting, here at
/// most this many levels.
#[derive(Clone, Copy)]
pub(crate) struct Valid(pub(crate) usize);

impl<'de> serde::de::DeserializeSeed<'de> for Valid {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Valid {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = Valid(self.0.checked_sub(1).ok_or_else(too_deep)?);
        while map.next_key::<Key<'de>>()?.is_some() {
            map.next_value_seed(inner)?;
        }
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = Valid(self.0.checked_sub(1).ok_or_else(too_deep)?);
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(())
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

fn too_deep<E: serde::de::Error>() -> E {
    E::custom("nested too deep")
}

/// `Err` when a parse into a value refuses `_meta`'s text.
pub(crate) fn valid_meta(text: &RawValue) -> Result<(), serde_json::Error> {
    if !may_be_refused(text.get().as_bytes()) {
        return Ok(());
    }
    let mut de = serde_json::Deserializer::from_str(text.get());
    serde::de::DeserializeSeed::deserialize(Valid(MAX_META_NESTING), &mut de)
}

/// Whether text read without a value can hold what a parse into a value refuses: nesting past
/// [`MAX_META_NESTING`] (two bytes a level), a `\u` escape (a lone surrogate), a number out of
/// range (an exponent, which follows a digit, or over 300 digits).
pub(crate) fn may_be_refused(text: &[u8]) -> bool {
    if text.len() > 2 * MAX_META_NESTING {
        return true;
    }
    // Without branches, so that it compiles to vector code: it runs on every request. (A
    // text's last byte is never a backslash: one always has a byte after it.)
    let next = text.get(1..).unwrap_or_default();
    text.iter().zip(next).fold(false, |found, (&byte, &after)| {
        found | (byte == b'\\') | (byte.is_ascii_digit() & ((after | 0x20) == b'e'))
    })
}
