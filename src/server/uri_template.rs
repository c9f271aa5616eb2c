//! RFC 6570 URI templates, for matching `resources/read` uris against resource templates.
//!
//! Supports the expression operators of levels 1–4 that make sense for matching: simple
//! (`{id}`), reserved (`{+path}`), fragment (`{#frag}`), label (`{.ext}`), path segment
//! (`{/seg}`), query (`{?a,b}`) and query continuation (`{&c}`), with comma-separated variable
//! lists. Prefix (`:n`) and explode (`*`) modifiers are accepted and matched loosely.
//!
//! Spec: <https://www.rfc-editor.org/rfc/rfc6570>

use std::collections::BTreeMap;

use crate::error::BuildError;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expr { op: Option<char>, vars: Vec<String> },
}

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses a template.
    ///
    /// # Errors
    /// [`BuildError::InvalidTemplate`] on unbalanced braces, empty expressions, unknown
    /// operators or invalid variable names.
    pub fn parse(source: &str) -> Result<Self, BuildError> {
        let invalid = |reason: &str| BuildError::InvalidTemplate {
            template: source.to_owned(),
            reason: reason.to_owned(),
        };
        let mut parts = Vec::new();
        let mut rest = source;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(start) => {
                    if start > 0 {
                        let literal = &rest[..start];
                        if literal.contains('}') {
                            return Err(invalid("unbalanced '}'"));
                        }
                        parts.push(Part::Literal(literal.to_owned()));
                    }
                    let end = rest[start..]
                        .find('}')
                        .ok_or_else(|| invalid("unclosed '{'"))?
                        + start;
                    let mut body = &rest[start + 1..end];
                    let op = body
                        .chars()
                        .next()
                        .filter(|c| matches!(c, '+' | '#' | '.' | '/' | '?' | '&'));
                    if let Some(op) = op {
                        body = &body[op.len_utf8()..];
                    } else if body.starts_with(['=', ',', '!', '@', '|']) {
                        return Err(invalid("reserved operator"));
                    }
                    let mut vars = Vec::new();
                    for spec in body.split(',') {
                        let name = spec.trim_end_matches('*');
                        let name = name.split(':').next().unwrap_or_default();
                        if name.is_empty()
                            || !name.bytes().all(|b| {
                                b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'%'
                            })
                        {
                            return Err(invalid("invalid variable name"));
                        }
                        vars.push(name.to_owned());
                    }
                    parts.push(Part::Expr { op, vars });
                    rest = &rest[end + 1..];
                }
                None => {
                    if rest.contains('}') {
                        return Err(invalid("unbalanced '}'"));
                    }
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        Ok(Self {
            source: source.to_owned(),
            parts,
        })
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The names of every variable, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().flat_map(|part| match part {
            Part::Expr { vars, .. } => vars.iter().map(String::as_str).collect::<Vec<_>>(),
            Part::Literal(_) => Vec::new(),
        })
    }

    /// Matches a uri, returning the (percent-decoded) variable values.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut vars = BTreeMap::new();
        match_parts(&self.parts, uri, &mut vars).then_some(vars)
    }
}

fn allowed(op: Option<char>, c: char) -> bool {
    match op {
        None | Some('.') => {
            !matches!(c, '/' | '?' | '#' | '&' | ',' | '.') || (op.is_none() && c == '.')
        }
        Some('/') => !matches!(c, '/' | '?' | '#'),
        Some('+') | Some('#') => true,
        _ => !matches!(c, '&' | '#'),
    }
}

fn prefix(op: Option<char>) -> Option<char> {
    match op {
        Some(c @ ('#' | '.' | '/' | '?' | '&')) => Some(c),
        _ => None,
    }
}

fn match_parts(parts: &[Part], uri: &str, vars: &mut BTreeMap<String, String>) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(literal) => uri
            .strip_prefix(literal.as_str())
            .is_some_and(|tail| match_parts(rest, tail, vars)),
        Part::Expr { op, vars: names } => {
            if matches!(op, Some('?') | Some('&')) {
                return match_query(*op, names, rest, uri, vars);
            }
            let mut input = uri;
            if let Some(p) = prefix(*op) {
                match input.strip_prefix(p) {
                    Some(tail) => input = tail,
                    // An undefined variable expands to nothing, prefix included.
                    None => return match_parts(rest, uri, vars),
                }
            }
            // The longest run of allowed characters, then shorter ones (greedy with backtracking).
            let separator = match op {
                Some('/') => '/',
                Some('.') => '.',
                _ => ',',
            };
            let multi = names.len() > 1;
            let limit = input
                .char_indices()
                .find(|&(_, c)| !(allowed(*op, c) || (multi && c == separator)))
                .map_or(input.len(), |(i, _)| i);
            let mut ends: Vec<usize> = input[..limit]
                .char_indices()
                .map(|(i, _)| i)
                .chain(std::iter::once(limit))
                .collect();
            ends.dedup();
            for &end in ends.iter().rev() {
                let value = &input[..end];
                if value.is_empty() {
                    continue;
                }
                let values: Vec<&str> = if names.len() > 1 {
                    value.splitn(names.len(), separator).collect()
                } else {
                    vec![value]
                };
                let mut trial = vars.clone();
                for (name, value) in names.iter().zip(values) {
                    trial.insert(name.clone(), percent_decode(value));
                }
                if match_parts(rest, &input[end..], &mut trial) {
                    *vars = trial;
                    return true;
                }
            }
            false
        }
    }
}

fn match_query(
    op: Option<char>,
    names: &[String],
    rest: &[Part],
    uri: &str,
    vars: &mut BTreeMap<String, String>,
) -> bool {
    let lead = if op == Some('?') { '?' } else { '&' };
    let Some(query) = uri.strip_prefix(lead) else {
        return match_parts(rest, uri, vars);
    };
    let end = query.find('#').unwrap_or(query.len());
    // The query continues through any `{&...}` expressions that follow: they share its pairs.
    let mut known: Vec<&String> = names.iter().collect();
    let mut rest = rest;
    while let Some((
        Part::Expr {
            op: Some('&'),
            vars: more,
        },
        tail,
    )) = rest.split_first()
    {
        known.extend(more);
        rest = tail;
    }
    let mut trial = vars.clone();
    for pair in query[..end].split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if known.iter().any(|name| *name == key) {
            trial.insert(key.to_owned(), percent_decode(value));
        }
    }
    if match_parts(rest, &query[end..], &mut trial) {
        *vars = trial;
        true
    } else {
        false
    }
}

fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(hi * 16 + lo);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(template)
            .ok()?
            .matches(uri)
            .map(|m| m.into_iter().collect())
    }

    fn pair(k: &str, v: &str) -> (String, String) {
        (k.to_owned(), v.to_owned())
    }

    #[test]
    fn matches_simple_and_reserved_expressions() {
        assert_eq!(
            vars("test://template/{id}/data", "test://template/123/data"),
            Some(vec![pair("id", "123")])
        );
        assert_eq!(
            vars("test://template/{id}/data", "test://template/1/2/data"),
            None
        );
        assert_eq!(
            vars("file:///{+path}", "file:///a/b/c.txt"),
            Some(vec![pair("path", "a/b/c.txt")])
        );
        assert_eq!(
            vars("users/{id}", "users/a%20b"),
            Some(vec![pair("id", "a b")])
        );
        assert_eq!(vars("users/{id}", "users/"), None);
        assert_eq!(
            vars("x/{a},{b}", "x/1,2"),
            Some(vec![pair("a", "1"), pair("b", "2")])
        );
    }

    #[test]
    fn matches_path_label_and_query_expressions() {
        assert_eq!(
            vars("api{/a,b}", "api/x/y"),
            Some(vec![pair("a", "x"), pair("b", "y")])
        );
        assert_eq!(
            vars("file{.ext}", "file.json"),
            Some(vec![pair("ext", "json")])
        );
        assert_eq!(
            vars("search{?q,lang}", "search?lang=en&q=rust"),
            Some(vec![pair("lang", "en"), pair("q", "rust")])
        );
        assert_eq!(vars("search{?q}", "search"), Some(vec![]));
        assert_eq!(
            vars("s{?q}{&page}", "s?q=a&page=2"),
            Some(vec![pair("page", "2"), pair("q", "a")])
        );
    }

    /// Odd uris (empty, lone `%`, bad escapes, non-ASCII, emoji, bare separators) against each
    /// kind of expression: every pair gives exactly the result listed, never a panic. A uri not
    /// listed for a template must not match it.
    #[test]
    fn never_panics_on_odd_input() {
        const URIS: [&str; 11] = [
            "",
            "a/",
            "a/\u{e9}\u{e9}",
            "/",
            "?",
            "%",
            "%zz",
            "a/%e9",
            "\u{1f600}/x",
            "x.",
            "//",
        ];
        // For each template, the uris that match it, with their variables.
        type Matching = &'static [(&'static str, &'static [(&'static str, &'static str)])];
        let expected: [(&str, Matching); 6] = [
            (
                "a/{x}",
                &[
                    ("a/\u{e9}\u{e9}", &[("x", "\u{e9}\u{e9}")]),
                    // `%e9` alone is not UTF-8: decoded lossily, never a panic.
                    ("a/%e9", &[("x", "\u{fffd}")]),
                ],
            ),
            (
                // Reserved expansion takes anything non-empty; malformed escapes stay as they are.
                "{+p}",
                &[
                    ("a/", &[("p", "a/")]),
                    ("a/\u{e9}\u{e9}", &[("p", "a/\u{e9}\u{e9}")]),
                    ("/", &[("p", "/")]),
                    ("?", &[("p", "?")]),
                    ("%", &[("p", "%")]),
                    ("%zz", &[("p", "%zz")]),
                    ("a/%e9", &[("p", "a/\u{fffd}")]),
                    ("\u{1f600}/x", &[("p", "\u{1f600}/x")]),
                    ("x.", &[("p", "x.")]),
                    ("//", &[("p", "//")]),
                ],
            ),
            (
                "{/a,b}",
                &[
                    // Both undefined: the expression expands to nothing.
                    ("", &[]),
                    // `a` = `b` = "" expands to `//` (RFC 6570 section 3.2.6).
                    ("//", &[("a", ""), ("b", "")]),
                ],
            ),
            (
                "{?q}",
                &[
                    // No query, or an empty one: `q` is undefined.
                    ("", &[]),
                    ("?", &[]),
                ],
            ),
            // `x.` would need an empty `e`: an empty value never matches.
            ("x{.e}", &[]),
            // The literal `é/` starts none of the uris.
            ("\u{e9}/{id}", &[]),
        ];
        for (template, matching) in expected {
            let parsed = UriTemplate::parse(template)
                .unwrap_or_else(|err| panic!("{template} must parse: {err}"));
            for uri in URIS {
                let want = matching
                    .iter()
                    .find(|(listed, _)| *listed == uri)
                    .map(|(_, found)| found.iter().map(|(k, v)| pair(k, v)).collect::<Vec<_>>());
                let got = parsed
                    .matches(uri)
                    .map(|m| m.into_iter().collect::<Vec<_>>());
                assert_eq!(got, want, "{template:?} against {uri:?}");
            }
        }
        // Odd templates: a non-ASCII name, an operator with no name, a trailing comma, nested
        // braces and a stray `}` are parse errors, each with its reason.
        for (bad, reason) in [
            ("{\u{e9}}", "invalid variable name"),
            ("{+}", "invalid variable name"),
            ("{x,}", "invalid variable name"),
            ("{{x}}", "invalid variable name"),
            ("{x}}", "unbalanced '}'"),
        ] {
            match UriTemplate::parse(bad) {
                Err(BuildError::InvalidTemplate {
                    template,
                    reason: got,
                }) => {
                    assert_eq!((template.as_str(), got.as_str()), (bad, reason));
                }
                other => panic!("{bad:?} gave {other:?}"),
            }
        }
    }

    #[test]
    fn refuses_malformed_templates() {
        for bad in ["a/{id", "a/id}", "a/{}", "a/{=x}", "a/{in valid}"] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad} parsed");
        }
    }
}
