//! Which scopes the client asks for (the MCP scope selection strategy): the challenge's
//! `scope` first, else every scope of the protected resource metadata's `scopes_supported`,
//! else none (the `scope` parameter is then left out); on a step-up, the union of what the
//! client holds (what it asked for before, and what it was granted) and what the challenge
//! asks now (SEP-2350). `offline_access` is asked for only when the authorization server
//! lists it (and the client wants refresh tokens), and never otherwise.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#scope-selection-strategy>

use super::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};

/// The scope that asks for a refresh token (OpenID Connect, SEP-2207).
pub const OFFLINE_ACCESS: &str = "offline_access";

/// A space-delimited scope string as a list, without empty entries or repeats.
pub fn parse(scope: &str) -> Vec<String> {
    let mut scopes: Vec<String> = Vec::new();
    for scope in scope.split([' ', '\t']).filter(|s| !s.is_empty()) {
        if !scopes.iter().any(|known| known == scope) {
            scopes.push(scope.to_owned());
        }
    }
    scopes
}

/// The scopes of an initial authorization: the challenge's, else the resource's
/// `scopes_supported`, else `fallback` (the application's own choice), else none.
pub fn select(
    challenge: Option<&[String]>,
    resource: &ProtectedResourceMetadata,
    fallback: &[String],
) -> Vec<String> {
    if let Some(scopes) = challenge.filter(|s| !s.is_empty()) {
        return scopes.to_vec();
    }
    if let Some(scopes) = resource.scopes_supported.as_ref().filter(|s| !s.is_empty()) {
        return scopes.clone();
    }
    fallback.to_vec()
}

/// `before` followed by the scopes of `now` it lacks.
pub fn union(before: &[String], now: &[String]) -> Vec<String> {
    let mut scopes = before.to_vec();
    for scope in now {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
    scopes
}

/// Adds `offline_access` when the client wants refresh tokens and the authorization server
/// lists the scope in `scopes_supported`; removes it otherwise (a server that does not list
/// it never receives it, whatever asked for it).
pub fn with_offline_access(
    mut scopes: Vec<String>,
    server: &AuthorizationServerMetadata,
    want_refresh: bool,
) -> Vec<String> {
    let offered = server
        .scopes_supported
        .as_ref()
        .is_some_and(|supported| supported.iter().any(|s| s == OFFLINE_ACCESS));
    scopes.retain(|scope| scope != OFFLINE_ACCESS);
    if offered && want_refresh {
        scopes.push(OFFLINE_ACCESS.to_owned());
    }
    scopes
}

/// The scopes as the `scope` parameter wants them; `None` for none.
pub fn join(scopes: &[String]) -> Option<String> {
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn scope_strings_are_split_without_repeats() {
        assert_eq!(parse("  a b\ta  c "), s(&["a", "b", "c"]));
        assert!(parse("").is_empty());
    }

    #[test]
    fn the_union_keeps_order() {
        assert_eq!(union(&s(&["a", "b"]), &s(&["b", "c"])), s(&["a", "b", "c"]));
    }
}
