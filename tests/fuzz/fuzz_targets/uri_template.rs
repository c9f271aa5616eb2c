//! RFC 6570 matching (`UriTemplate`): the input is a template, a newline, then a uri. Parsing
//! and matching never panic nor take long; a template that parses keeps its text; and a uri
//! expanded from it (alphanumeric values, every operator's prefix and separator) matches it,
//! for templates whose query expressions come last.

#![no_main]

use std::collections::BTreeMap;

use actix_mcp::UriTemplate;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (source, uri) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(template) = UriTemplate::parse(source) else {
        return;
    };
    assert_eq!(template.as_str(), source);
    let _ = template.matches(uri);

    // Values for every variable, from the uri's bytes: alphanumeric and never empty.
    let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut seeds = uri.bytes().cycle();
    let mut values = BTreeMap::new();
    for name in template.variables() {
        values.entry(name.to_owned()).or_insert_with(|| {
            let len = usize::from(seeds.next().unwrap_or(1) % 8) + 1;
            (0..len)
                .map(|_| {
                    char::from(alphabet[usize::from(seeds.next().unwrap_or(0)) % alphabet.len()])
                })
                .collect::<String>()
        });
    }
    // Uris over MAX_MATCHED_URI bytes match no template, by design.
    if let Some(expanded) = expand(source, &values)
        && expanded.len() <= actix_mcp::MAX_MATCHED_URI
    {
        assert!(
            template.matches(&expanded).is_some(),
            "{source:?} does not match its own expansion {expanded:?}"
        );
    }
});

/// Expands `source` (already known to parse), or `None` when a query expression is followed
/// by anything but query continuations and fragments (the matcher reads a query up to the
/// fragment, as RFC 6570 uris put it last).
fn expand(source: &str, values: &BTreeMap<String, String>) -> Option<String> {
    let mut out = String::new();
    let mut rest = source;
    let mut in_query = false;
    while let Some(start) = rest.find('{') {
        let literal = &rest[..start];
        if in_query && !literal.is_empty() {
            return None;
        }
        out.push_str(literal);
        let end = rest[start..].find('}')? + start;
        let body = &rest[start + 1..end];
        let op = body
            .chars()
            .next()
            .filter(|c| matches!(c, '+' | '#' | '.' | '/' | '?' | '&'));
        let names: Vec<&str> = body[op.map_or(0, char::len_utf8)..]
            .split(',')
            .map(|spec| {
                spec.trim_end_matches('*')
                    .split(':')
                    .next()
                    .unwrap_or_default()
            })
            .collect();
        let value = |name: &str| values.get(name).cloned().unwrap_or_default();
        match op {
            Some('?' | '&') => {
                if in_query && op == Some('?') {
                    return None;
                }
                in_query = true;
                out.push(op?);
                let pairs: Vec<String> =
                    names.iter().map(|n| format!("{n}={}", value(n))).collect();
                out.push_str(&pairs.join("&"));
            }
            Some('#') => {
                // The query ends where the fragment starts.
                in_query = false;
                out.push('#');
                let joined: Vec<String> = names.iter().map(|n| value(n)).collect();
                out.push_str(&joined.join(","));
            }
            _ if in_query => return None,
            Some(p @ ('.' | '/')) => {
                out.push(p);
                let joined: Vec<String> = names.iter().map(|n| value(n)).collect();
                out.push_str(&joined.join(&p.to_string()));
            }
            _ => {
                let joined: Vec<String> = names.iter().map(|n| value(n)).collect();
                out.push_str(&joined.join(","));
            }
        }
        rest = &rest[end + 1..];
    }
    if in_query && !rest.is_empty() && !rest.starts_with('#') {
        return None;
    }
    out.push_str(rest);
    Some(out)
}
