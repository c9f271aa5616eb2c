//! Opaque cursors for `*/list` pagination: an offset, prefixed and base64-encoded so clients
//! treat it as opaque; anything else is `-32602`.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/pagination>

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::error::McpError;

const PREFIX: &str = "o:";

/// Encodes an offset as a cursor.
pub(crate) fn encode(offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{PREFIX}{offset}"))
}

/// Decodes a cursor into an offset no greater than `len`.
pub(crate) fn decode(cursor: &str, len: usize) -> Result<usize, McpError> {
    let invalid = || McpError::invalid_params(format!("invalid cursor: {cursor:?}"));
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| invalid())?;
    let text = std::str::from_utf8(&bytes).map_err(|_| invalid())?;
    let offset: usize = text
        .strip_prefix(PREFIX)
        .and_then(|n| n.parse().ok())
        .ok_or_else(invalid)?;
    if offset > len {
        return Err(invalid());
    }
    Ok(offset)
}

/// One page of `items` starting at `cursor`, and the cursor of the next page.
pub(crate) fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    page_size: Option<usize>,
) -> Result<(Vec<T>, Option<String>), McpError> {
    let start = match cursor {
        Some(cursor) => decode(cursor, items.len())?,
        None => 0,
    };
    let size = page_size.unwrap_or(usize::MAX);
    let end = start.saturating_add(size).min(items.len());
    let next = (end < items.len()).then(|| encode(end));
    Ok((items[start..end].to_vec(), next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_walk_the_list_and_bad_cursors_are_refused() {
        let items: Vec<u32> = (0..5).collect();
        let (first, next) = page(&items, None, Some(2)).unwrap_or_default();
        assert_eq!(first, vec![0, 1]);
        let (second, next) = page(&items, next.as_deref(), Some(2)).unwrap_or_default();
        assert_eq!(second, vec![2, 3]);
        let (third, next) = page(&items, next.as_deref(), Some(2)).unwrap_or_default();
        assert_eq!((third, next), (vec![4], None));
        assert!(page(&items, Some("nope"), Some(2)).is_err());
        assert!(page(&items, Some(&encode(99)), Some(2)).is_err());
        assert_eq!(
            page(&items, None, None)
                .map(|(all, next)| (all.len(), next))
                .ok(),
            Some((5, None))
        );
    }
}
