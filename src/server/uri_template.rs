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
    ///
    /// A uri longer than [`MAX_MATCHED_URI`] bytes matches no template. A variable may
    /// contain the literal that follows it, so a match is not found left to right alone: which
    /// states can finish the match is computed first, backward, in time linear in the parts
    /// times the uri's length; then each variable takes the longest value from which the rest
    /// can finish (the first match a greedy backtracking search finds, without its cost).
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        if uri.len() > MAX_MATCHED_URI {
            return None;
        }
        let values = match_uri(&self.parts, uri)?;
        let mut vars = BTreeMap::new();
        for (name, value) in values {
            vars.insert(name.to_owned(), percent_decode(value));
        }
        Some(vars)
    }
}

/// The longest uri matched against templates, in bytes.
pub const MAX_MATCHED_URI: usize = 4096;

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

/// The parts from `i` on that a query expression at `i` covers: it and the `{&...}`
/// expressions right after it (they share its pairs). Returns the end of the group.
fn query_group_end(parts: &[Part], i: usize) -> usize {
    let mut j = i + 1;
    while let Some(Part::Expr { op: Some('&'), .. }) = parts.get(j) {
        j += 1;
    }
    j
}

/// Where a query starting at `pos` (after its lead) ends: at `#` or the end of the uri.
fn query_end(uri: &str, from: usize) -> usize {
    uri[from..]
        .find('#')
        .map_or(uri.len(), |offset| from + offset)
}

/// For an expression with operator `op`: at each char boundary, where the run of characters a
/// value may hold ends.
fn run_ends(uri: &str, op: Option<char>, multi: bool, separator: char) -> Vec<usize> {
    let mut ends = vec![uri.len(); uri.len() + 1];
    for (i, c) in uri.char_indices().rev() {
        ends[i] = if allowed(op, c) || (multi && c == separator) {
            ends[i + c.len_utf8()]
        } else {
            i
        };
    }
    ends
}

/// Matches `uri` against `parts`: the raw (not yet decoded) value of each variable, in order.
fn match_uri<'t, 'u>(parts: &'t [Part], uri: &'u str) -> Option<Vec<(&'t str, &'u str)>> {
    let n = uri.len();
    // can[i][pos]: parts[i..] match uri[pos..] (only ever true at char boundaries).
    let mut can: Vec<Vec<bool>> = vec![Vec::new(); parts.len() + 1];
    let mut done = vec![false; n + 1];
    done[n] = true;
    can[parts.len()] = done;
    // Per expression part, where its values may end (kept for the forward pass).
    let mut runs: Vec<Option<Vec<usize>>> = vec![None; parts.len()];
    for i in (0..parts.len()).rev() {
        let mut row = vec![false; n + 1];
        let next = &can[i + 1];
        match &parts[i] {
            Part::Literal(literal) => {
                for (pos, slot) in row.iter_mut().enumerate() {
                    *slot = uri.is_char_boundary(pos)
                        && uri[pos..].starts_with(literal.as_str())
                        && next[pos + literal.len()];
                }
            }
            Part::Expr { op, .. } if matches!(op, Some('?') | Some('&')) => {
                let lead = if *op == Some('?') { '?' } else { '&' };
                let after = &can[query_group_end(parts, i)];
                for (pos, slot) in row.iter_mut().enumerate() {
                    if !uri.is_char_boundary(pos) {
                        continue;
                    }
                    *slot = if uri[pos..].starts_with(lead) {
                        after[query_end(uri, pos + 1)]
                    } else {
                        next[pos]
                    };
                }
            }
            Part::Expr { op, vars: names } => {
                let separator = match op {
                    Some('/') => '/',
                    Some('.') => '.',
                    _ => ',',
                };
                let ends = run_ends(uri, *op, names.len() > 1, separator);
                // How many positions before k the rest can finish from, to ask "any in a range".
                let mut count = vec![0usize; n + 2];
                for k in 0..=n {
                    count[k + 1] = count[k] + usize::from(next[k]);
                }
                let value_from = |start: usize| {
                    let (low, high) = (start + 1, ends[start]);
                    low <= high && count[high + 1] > count[low]
                };
                for (pos, slot) in row.iter_mut().enumerate() {
                    if !uri.is_char_boundary(pos) {
                        continue;
                    }
                    *slot = match prefix(*op) {
                        Some(p) if uri[pos..].starts_with(p) => value_from(pos + p.len_utf8()),
                        // An undefined variable expands to nothing, prefix included.
                        Some(_) => next[pos],
                        None => value_from(pos),
                    };
                }
                runs[i] = Some(ends);
            }
        }
        can[i] = row;
    }
    if !can[0][0] {
        return None;
    }
    // Forward: each variable takes the longest value from which the rest can finish.
    let mut values = Vec::new();
    let (mut i, mut pos) = (0, 0);
    while let Some(part) = parts.get(i) {
        match part {
            Part::Literal(literal) => {
                pos += literal.len();
                i += 1;
            }
            Part::Expr { op, .. } if matches!(op, Some('?') | Some('&')) => {
                let lead = if *op == Some('?') { '?' } else { '&' };
                let group = query_group_end(parts, i);
                if !uri[pos..].starts_with(lead) {
                    i += 1;
                    continue;
                }
                let end = query_end(uri, pos + 1);
                let known: Vec<&'t String> = parts[i..group]
                    .iter()
                    .flat_map(|part| match part {
                        Part::Expr { vars, .. } => vars.iter().collect::<Vec<_>>(),
                        Part::Literal(_) => Vec::new(),
                    })
                    .collect();
                for pair in uri[pos + 1..end].split('&') {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    if let Some(name) = known.iter().find(|name| **name == key) {
                        values.push((name.as_str(), value));
                    }
                }
                pos = end;
                i = group;
            }
            Part::Expr { op, vars: names } => {
                let start = match prefix(*op) {
                    Some(p) if uri[pos..].starts_with(p) => pos + p.len_utf8(),
                    Some(_) => {
                        i += 1;
                        continue;
                    }
                    None => pos,
                };
                let high = runs[i].as_ref().map_or(start, |ends| ends[start]);
                let end = (start + 1..=high).rev().find(|&e| can[i + 1][e])?;
                let value = &uri[start..end];
                let separator = match op {
                    Some('/') => '/',
                    Some('.') => '.',
                    _ => ',',
                };
                if names.len() > 1 {
                    for (name, part) in names.iter().zip(value.splitn(names.len(), separator)) {
                        values.push((name.as_str(), part));
                    }
                } else if let Some(name) = names.first() {
                    values.push((name.as_str(), value));
                }
                pos = end;
                i += 1;
            }
        }
    }
    Some(values)
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
    fn backtracking_remembers_failed_states() {
        // Every split of the dashes between three variables used to be tried (cubic, with a
        // clone and a percent-decoding each): 400 dashes took 20 s.
        let template =
            UriTemplate::parse("archive/{year}-{month}-{day}/index").expect("a valid template");
        let dashes = format!("archive/{}", "-".repeat(MAX_MATCHED_URI - 8));
        assert_eq!(template.matches(&dashes), None);
        assert_eq!(
            vars(
                "archive/{year}-{month}-{day}/index",
                "archive/2026-11-24/index"
            ),
            Some(vec![
                pair("day", "24"),
                pair("month", "11"),
                pair("year", "2026")
            ])
        );
        // Longer uris match no template at all.
        let long = format!("users/{}/profile", "a".repeat(MAX_MATCHED_URI));
        assert_eq!(
            UriTemplate::parse("users/{id}/profile")
                .expect("a valid template")
                .matches(&long),
            None
        );
    }

    #[test]
    fn refuses_malformed_templates() {
        for bad in ["a/{id", "a/id}", "a/{}", "a/{=x}", "a/{in valid}"] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad} parsed");
        }
    }
}
