//! The syntax of a scope (RFC 6749 `scope-token`), checked when a tool, prompt, resource or the
//! server declares the scopes it requires.

use crate::error::BuildError;

/// Whether `scope` is an RFC 6749 `scope-token`: `1*( %x21 / %x23-5B / %x5D-7E )`.
pub(crate) fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
}

/// Collects `scopes` for `owner`, checking each one's syntax; duplicates are dropped.
pub(crate) fn collect<I, S>(
    owner: impl FnOnce() -> String,
    scopes: I,
) -> Result<Vec<String>, BuildError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut out: Vec<String> = Vec::new();
    for scope in scopes {
        let scope = scope.into();
        if !is_scope_token(&scope) {
            return Err(BuildError::InvalidScope {
                owner: owner(),
                scope,
            });
        }
        if !out.contains(&scope) {
            out.push(scope);
        }
    }
    Ok(out)
}

/// Stores checked scopes in `slot`, or the error in `error` (reported by `prepare`/`build`).
pub(crate) fn set<I, S>(
    slot: &mut Vec<String>,
    error: &mut Option<BuildError>,
    owner: impl FnOnce() -> String,
    scopes: I,
) where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    match collect(owner, scopes) {
        Ok(scopes) => *slot = scopes,
        Err(err) => *error = Some(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_tokens_follow_rfc_6749() {
        for good in ["mcp", "files:read", "https://api.example.com/x", "a!#[]~"] {
            assert!(is_scope_token(good), "{good}");
        }
        for bad in ["", "a b", "a\"b", "a\\b", "é", "a\tb"] {
            assert!(!is_scope_token(bad), "{bad:?}");
        }
    }
}
