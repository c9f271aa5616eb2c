//! DNS-rebinding protection: `Host` and `Origin` checked against an allow-list.
//!
//! On by default when the server listens on a loopback address; the allow-list then holds
//! `localhost`, `127.0.0.1` and `[::1]` with any port. A mismatch is answered 403 with a
//! JSON-RPC error body without id.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#security-warning>

/// Which hosts and origins may reach the endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPolicy {
    /// Check only when the server listens on loopback (the default).
    LoopbackOnly,
    /// Always check, against the loopback names plus these hosts (`example.com`, with or
    /// without a port) and origins (`https://example.com`).
    AllowList {
        /// Extra allowed `Host` values.
        hosts: Vec<String>,
        /// Extra allowed `Origin` values.
        origins: Vec<String>,
    },
    /// Never check (the server sits behind something that does).
    Disabled,
}

const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Strips an optional `:port` from a host (keeping IPv6 brackets).
fn host_name(host: &str) -> &str {
    let host = host.trim();
    if let Some(end) = host.strip_prefix('[').and_then(|rest| rest.find(']')) {
        return &host[..end + 2];
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

fn is_loopback_name(host: &str) -> bool {
    let name = host_name(host);
    LOOPBACK_NAMES
        .iter()
        .any(|allowed| name.eq_ignore_ascii_case(allowed))
}

fn origin_host(origin: &str) -> Option<&str> {
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))?;
    Some(rest.split('/').next().unwrap_or(rest))
}

impl HostPolicy {
    /// Whether a request with these headers, to a server listening on a loopback address (or
    /// not), may pass. `Err` says why not.
    pub(crate) fn check(
        &self,
        listens_on_loopback: bool,
        host: Option<&str>,
        origin: Option<&str>,
    ) -> Result<(), &'static str> {
        let (hosts, origins): (&[String], &[String]) = match self {
            Self::Disabled => return Ok(()),
            Self::LoopbackOnly if !listens_on_loopback => return Ok(()),
            Self::LoopbackOnly => (&[], &[]),
            Self::AllowList { hosts, origins } => (hosts, origins),
        };
        if let Some(host) = host {
            let allowed = is_loopback_name(host)
                || hosts.iter().any(|h| {
                    h.eq_ignore_ascii_case(host) || h.eq_ignore_ascii_case(host_name(host))
                });
            if !allowed {
                return Err("the Host header is not allowed");
            }
        }
        if let Some(origin) = origin
            && origin != "null"
        {
            let allowed = origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
                || origin_host(origin).is_some_and(is_loopback_name);
            if !allowed {
                return Err("the Origin header is not allowed");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_pass_and_others_are_refused() {
        let policy = HostPolicy::LoopbackOnly;
        assert!(policy.check(true, Some("127.0.0.1:8080"), None).is_ok());
        assert!(
            policy
                .check(true, Some("localhost"), Some("http://localhost:3000"))
                .is_ok()
        );
        assert!(
            policy
                .check(true, Some("[::1]:9"), Some("https://[::1]"))
                .is_ok()
        );
        assert!(policy.check(true, Some("evil.example.com"), None).is_err());
        assert!(
            policy
                .check(true, Some("127.0.0.1:1"), Some("http://evil.example.com"))
                .is_err()
        );
        assert!(policy.check(false, Some("evil.example.com"), None).is_ok());
        let custom = HostPolicy::AllowList {
            hosts: vec!["mcp.example.com".into()],
            origins: vec!["https://app.example.com".into()],
        };
        assert!(
            custom
                .check(
                    false,
                    Some("mcp.example.com:443"),
                    Some("https://app.example.com")
                )
                .is_ok()
        );
        assert!(
            custom
                .check(false, Some("other.example.com"), None)
                .is_err()
        );
    }
}
