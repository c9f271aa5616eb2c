//! DNS-rebinding protection: `Host` and `Origin` checked against an allow-list.
//!
//! On by default when the server listens on a loopback address; the allow-list then holds
//! `localhost`, `127.0.0.1` and `[::1]` with any port. A mismatch is answered 403 with a
//! JSON-RPC error body (`"id": null`: the body is not read). The check fails closed: a value
//! that is not visible ASCII is refused, and so is a request with several `Host` or `Origin`
//! headers unless every one of them is allowed.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#security-warning>

use actix_web::http::header::{self, HeaderMap};

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
    ///
    /// Fails closed: every `Host` and every `Origin` value must be allowed (a request with two
    /// `Origin` headers passes only when both are allowed), and a value that is not visible
    /// ASCII is refused, never skipped as if absent.
    pub(crate) fn check(
        &self,
        listens_on_loopback: bool,
        headers: &HeaderMap,
    ) -> Result<(), &'static str> {
        let (hosts, origins): (&[String], &[String]) = match self {
            Self::Disabled => return Ok(()),
            Self::LoopbackOnly if !listens_on_loopback => return Ok(()),
            Self::LoopbackOnly => (&[], &[]),
            Self::AllowList { hosts, origins } => (hosts, origins),
        };
        for value in headers.get_all(header::HOST) {
            let host = value
                .to_str()
                .map_err(|_| "the Host header is not visible ASCII")?;
            let allowed = is_loopback_name(host)
                || hosts.iter().any(|h| {
                    h.eq_ignore_ascii_case(host) || h.eq_ignore_ascii_case(host_name(host))
                });
            if !allowed {
                return Err("the Host header is not allowed");
            }
        }
        for value in headers.get_all(header::ORIGIN) {
            let origin = value
                .to_str()
                .map_err(|_| "the Origin header is not visible ASCII")?;
            if origin == "null" {
                continue;
            }
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
    use actix_web::http::header::HeaderValue;

    /// Headers from `(name, value)` pairs, repeated names appended.
    fn headers(pairs: &[(&str, &[u8])]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            let name = header::HeaderName::from_bytes(name.as_bytes()).unwrap_or(header::HOST);
            let value = HeaderValue::from_bytes(value).unwrap_or(HeaderValue::from_static("?"));
            map.append(name, value);
        }
        map
    }

    fn check(policy: &HostPolicy, loopback: bool, pairs: &[(&str, &[u8])]) -> bool {
        policy.check(loopback, &headers(pairs)).is_ok()
    }

    #[test]
    fn loopback_names_pass_and_others_are_refused() {
        let policy = HostPolicy::LoopbackOnly;
        assert!(check(&policy, true, &[("host", b"127.0.0.1:8080")]));
        assert!(check(
            &policy,
            true,
            &[("host", b"localhost"), ("origin", b"http://localhost:3000")]
        ));
        assert!(check(
            &policy,
            true,
            &[("host", b"[::1]:9"), ("origin", b"https://[::1]")]
        ));
        assert!(!check(&policy, true, &[("host", b"evil.example.com")]));
        assert!(!check(
            &policy,
            true,
            &[
                ("host", b"127.0.0.1:1"),
                ("origin", b"http://evil.example.com")
            ]
        ));
        assert!(check(&policy, false, &[("host", b"evil.example.com")]));
        let custom = HostPolicy::AllowList {
            hosts: vec!["mcp.example.com".into()],
            origins: vec!["https://app.example.com".into()],
        };
        assert!(check(
            &custom,
            false,
            &[
                ("host", b"mcp.example.com:443"),
                ("origin", b"https://app.example.com")
            ]
        ));
        assert!(!check(&custom, false, &[("host", b"other.example.com")]));
    }

    #[test]
    fn non_ascii_values_are_refused_not_skipped() {
        let policy = HostPolicy::LoopbackOnly;
        assert!(!check(&policy, true, &[("host", b"localhost\xff")]));
        assert!(!check(
            &policy,
            true,
            &[("host", b"localhost"), ("origin", b"http://localhost\xe9")]
        ));
    }

    #[test]
    fn every_repeated_value_must_be_allowed() {
        let policy = HostPolicy::LoopbackOnly;
        assert!(!check(
            &policy,
            true,
            &[
                ("host", b"localhost"),
                ("origin", b"http://localhost"),
                ("origin", b"http://evil.example.com")
            ]
        ));
        assert!(!check(
            &policy,
            true,
            &[("host", b"localhost"), ("host", b"evil.example.com")]
        ));
        assert!(check(
            &policy,
            true,
            &[
                ("host", b"localhost"),
                ("origin", b"http://localhost"),
                ("origin", b"http://127.0.0.1:9")
            ]
        ));
    }
}
