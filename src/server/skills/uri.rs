//! `skill://` URIs: written with each path segment percent-encoded where RFC 3986 requires it,
//! and read back into checked, decoded segments.
//!
//! A URI is read by decoding percent-encoding exactly once per segment; a segment that is then
//! empty, `.` or `..`, or that holds `/`, `\` or NUL, is refused, so that no spelling of a URI can
//! step out of the namespace. The segments are only ever looked up in the in-memory snapshot.

use std::fmt::Write as _;

/// The scheme prefix of every URI this module serves.
pub(crate) const SCHEME: &str = "skill://";

/// Appends `segment` to `out`, percent-encoding every byte that is not allowed in a URI path
/// segment (`pchar`); for the first segment (the URI's authority, a `reg-name`), `:` and `@` as
/// well.
fn push_segment(out: &mut String, segment: &str, authority: bool) {
    for byte in segment.bytes() {
        let keep = byte.is_ascii_alphanumeric()
            || matches!(
                byte,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
            )
            || (!authority && matches!(byte, b':' | b'@'));
        if keep {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
}

/// The URI of `path` (decoded segments joined by `/`), e.g. `skill://acme/a%20b.md`.
pub(crate) fn to_uri(path: &str) -> String {
    let mut out = String::with_capacity(SCHEME.len() + path.len() + 8);
    out.push_str(SCHEME);
    for (i, segment) in path.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        push_segment(&mut out, segment, i == 0);
    }
    out
}

/// Checks one decoded segment: not empty, `.` or `..`; no `/`, `\` or NUL.
pub(crate) fn check_segment(segment: &str) -> Result<(), String> {
    if segment.is_empty() {
        return Err("an empty path segment".to_owned());
    }
    if segment == "." || segment == ".." {
        return Err(format!("a {segment:?} path segment"));
    }
    if segment.contains(['/', '\\', '\0']) {
        return Err(format!(
            "a path segment holding '/', '\\' or NUL: {segment:?}"
        ));
    }
    Ok(())
}

/// Checks a `/`-separated relative path of decoded segments (a skill path or a file path).
pub(crate) fn check_path(path: &str) -> Result<(), String> {
    if path.starts_with('/') {
        return Err("an absolute path".to_owned());
    }
    path.split('/').try_for_each(check_segment)
}

/// Decodes percent-encoding in one raw segment, once.
fn decode_segment(raw: &str) -> Result<String, String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("a malformed percent-encoding in {raw:?}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("a segment that is not UTF-8: {raw:?}"))
}

/// Reads a `skill://` URI into its decoded path (segments joined by `/`).
///
/// `Ok(None)` when `uri` is not a `skill://` URI; `Err` (the reason) when it is one but is
/// malformed: a query or fragment, bad percent-encoding, or a segment [`check_segment`] refuses
/// (which covers `..`, `%2e%2e`, `%2F`, `skill:///etc/passwd` and trailing slashes).
pub(crate) fn parse(uri: &str) -> Result<Option<String>, String> {
    let Some(rest) = uri.strip_prefix(SCHEME) else {
        return Ok(None);
    };
    if rest.contains(['?', '#']) {
        return Err("a query or fragment".to_owned());
    }
    let mut path = String::with_capacity(rest.len());
    for (i, raw) in rest.split('/').enumerate() {
        let segment = decode_segment(raw)?;
        check_segment(&segment)?;
        if i > 0 {
            path.push('/');
        }
        path.push_str(&segment);
    }
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_encoded_and_read_back() {
        assert_eq!(
            to_uri("acme/billing/refunds/SKILL.md"),
            "skill://acme/billing/refunds/SKILL.md"
        );
        let path = "a b/c%d/ü@x:y/é+q.txt";
        let uri = to_uri(path);
        assert_eq!(uri, "skill://a%20b/c%25d/%C3%BC@x:y/%C3%A9+q.txt");
        assert_eq!(parse(&uri), Ok(Some(path.to_owned())));
        assert_eq!(to_uri("u@h:1/x"), "skill://u%40h%3A1/x");
        assert_eq!(
            parse("skill://git-workflow/SKILL%2Emd"),
            Ok(Some("git-workflow/SKILL.md".to_owned()))
        );
    }

    #[test]
    fn traversal_spellings_are_refused() {
        for uri in [
            "skill://a/../b/SKILL.md",
            "skill://a/%2e%2e/b",
            "skill://a/%2E%2E/b",
            "skill://a/./b",
            "skill://a/%2e/b",
            "skill://a/b%2Fc",
            "skill://a/b%5Cc",
            "skill://a/..%5C..%5Cetc",
            "skill://a/b\\c",
            "skill://a/b%00",
            "skill:///etc/passwd",
            "skill://a//b",
            "skill://a/",
            "skill://",
            "skill://a/%zz",
            "skill://a/%2",
            "skill://a/%ff",
            "skill://a/b?x=1",
            "skill://a/b#frag",
        ] {
            assert!(parse(uri).is_err(), "{uri}");
        }
        assert_eq!(parse("/etc/passwd"), Ok(None));
        assert_eq!(parse("file:///etc/passwd"), Ok(None));
        assert_eq!(parse("https://a/b"), Ok(None));
    }

    #[test]
    fn relative_paths_are_checked() {
        assert!(check_path("references/GUIDE.md").is_ok());
        for bad in ["", "/abs", "a//b", "a/../b", "./a", "a\\b", "a/\0"] {
            assert!(check_path(bad).is_err(), "{bad:?}");
        }
    }
}
