//! DNS-rebinding protection: `Host` and `Origin` checked against an allow-list.
//!
//! `Origin` is checked whenever a request carries one, whatever address the server listens on:
//! a browser's request is refused unless its origin is a loopback one (`http://localhost:3000`)
//! or an allowed one. `Origin: null` (sandboxed frames, `file:` pages, some redirects) is
//! refused unless `"null"` is in the allow-list.
//!
//! `Host` is checked when the server listens on a loopback address (the allow-list then holds
//! `localhost`, `127.0.0.1` and `[::1]` with any port) or when an allow-list of hosts is given.
//! A server on an unspecified or public address cannot know its public names: without
//! [`HostPolicy::AllowList`] its `Host` is not checked, and the endpoint says so once, in a
//! warning naming the option.
//!
//! A mismatch is answered 403 with a JSON-RPC error body (`"id": null`: the body is not read).
//! The check fails closed: a value that is not visible ASCII is refused, and so is a request
//! with several `Host` or `Origin` headers unless every one of them is allowed.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#security-warning>

use actix_web::http::header::{self, HeaderMap};

/// Which hosts and origins may reach the endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPolicy {
    /// The default: `Origin` always checked against the loopback origins; `Host` checked
    /// against the loopback names when the server listens on loopback, not checked otherwise
    /// (the endpoint then warns once: give the public names with [`AllowList`](Self::AllowList)).
    LoopbackOnly,
    /// Always check, against the loopback names plus these hosts (`example.com`, with or
    /// without a port) and origins (`https://example.com`; `null` allows `Origin: null`).
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

/// Strips an optional `:port` from a host (keeping IPv6 brackets). `None` when what follows
/// the host is not a port (`[::1]x`, `localhost:80x`).
fn host_name(host: &str) -> Option<&str> {
    // Header values are visible ASCII (with spaces and tabs): ASCII whitespace is all there
    // is to trim, and the last `:` is found a byte at a time.
    let host = host.trim_ascii();
    let (name, rest) = match host.strip_prefix('[') {
        Some(inner) => {
            let end = inner.find(']')? + 2;
            host.split_at(end)
        }
        None => match host.bytes().rposition(|b| b == b':') {
            Some(colon) => host.split_at(colon),
            None => (host, ""),
        },
    };
    let port_ok = rest.is_empty()
        || rest
            .strip_prefix(':')
            .is_some_and(|port| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()));
    port_ok.then_some(name)
}

fn is_loopback_name(host: &str) -> bool {
    host_name(host).is_some_and(|name| {
        LOOPBACK_NAMES
            .iter()
            .any(|allowed| name.eq_ignore_ascii_case(allowed))
    })
}

/// The `host[:port]` of an `http` or `https` origin (an origin has no path).
fn origin_host(origin: &str) -> Option<&str> {
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))?;
    (!rest.is_empty() && !rest.contains('/')).then_some(rest)
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
        let (hosts, origins, check_host): (&[String], &[String], bool) = match self {
            Self::Disabled => return Ok(()),
            Self::LoopbackOnly => (&[], &[], listens_on_loopback),
            Self::AllowList { hosts, origins } => (hosts, origins, true),
        };
        if check_host {
            for value in headers.get_all(header::HOST) {
                let host = super::headers::ascii_str(value)
                    .ok_or("the Host header is not visible ASCII")?;
                let allowed = is_loopback_name(host)
                    || hosts.iter().any(|h| {
                        h.eq_ignore_ascii_case(host)
                            || host_name(host).is_some_and(|name| h.eq_ignore_ascii_case(name))
                    });
                if !allowed {
                    return Err("the Host header is not allowed");
                }
            }
        }
        for value in headers.get_all(header::ORIGIN) {
            let origin =
                super::headers::ascii_str(value).ok_or("the Origin header is not visible ASCII")?;
            let allowed = origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
                || origin_host(origin).is_some_and(is_loopback_name);
            if !allowed {
                return Err("the Origin header is not allowed");
            }
        }
        Ok(())
    }

    /// Whether `Host` goes unchecked on a server listening there: the default policy on an
    /// address that is not loopback.
    pub(crate) fn leaves_host_unchecked(&self, listens_on_loopback: bool) -> bool {
        matches!(self, Self::LoopbackOnly) && !listens_on_loopback
    }
}

/// Says once per endpoint that `Host` goes unchecked on `addr` (see
/// [`HostPolicy::leaves_host_unchecked`]).
pub(crate) fn warn_unchecked_host(
    warned: &std::sync::atomic::AtomicBool,
    addr: std::net::SocketAddr,
) {
    if !warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
        tracing::warn!(
            %addr,
            "the endpoint listens on a non-loopback address and checks no Host header: \
             DNS-rebinding protection covers only Origin; set \
             host_policy(HostPolicy::AllowList {{ hosts, origins }}) with the server's public names"
        );
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
        // On another address Host goes unchecked, Origin does not.
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

    /// On an unspecified or public bind, the default policy still refuses a browser's
    /// cross-origin request: a DNS-rebinding page's origin is its own name.
    #[test]
    fn origin_is_checked_whatever_the_bind() {
        let policy = HostPolicy::LoopbackOnly;
        assert!(!check(
            &policy,
            false,
            &[
                ("host", b"evil.example.com:8080"),
                ("origin", b"http://evil.example.com:8080")
            ]
        ));
        assert!(check(
            &policy,
            false,
            &[
                ("host", b"10.0.0.5:8080"),
                ("origin", b"http://localhost:3000")
            ]
        ));
        assert!(check(&policy, false, &[("host", b"10.0.0.5:8080")]));
        let custom = HostPolicy::AllowList {
            hosts: vec!["mcp.example.com".into()],
            origins: vec!["https://app.example.com".into()],
        };
        assert!(!check(
            &custom,
            false,
            &[
                ("host", b"mcp.example.com"),
                ("origin", b"https://other.example.com")
            ]
        ));
    }

    /// `Origin: null` is not an allowed origin unless the allow-list names it.
    #[test]
    fn a_null_origin_passes_only_when_allowed() {
        for loopback in [true, false] {
            assert!(!check(
                &HostPolicy::LoopbackOnly,
                loopback,
                &[("host", b"localhost"), ("origin", b"null")]
            ));
        }
        let listed = HostPolicy::AllowList {
            hosts: vec![],
            origins: vec!["null".into()],
        };
        assert!(check(
            &listed,
            true,
            &[("host", b"localhost"), ("origin", b"null")]
        ));
        let unlisted = HostPolicy::AllowList {
            hosts: vec![],
            origins: vec!["https://app.example.com".into()],
        };
        assert!(!check(
            &unlisted,
            true,
            &[("host", b"localhost"), ("origin", b"null")]
        ));
    }

    /// A loopback name followed by anything but a port is not a loopback name.
    #[test]
    fn trailing_garbage_after_a_loopback_name_is_refused() {
        let policy = HostPolicy::LoopbackOnly;
        for host in [
            &b"[::1]anything"[..],
            b"[::1].evil.example.com",
            b"[::1]:",
            b"[::1]:80x",
            b"localhost:",
            b"localhost:80:80",
        ] {
            assert!(!check(&policy, true, &[("host", host)]), "{host:?}");
        }
        assert!(!check(
            &policy,
            true,
            &[("host", b"localhost"), ("origin", b"http://[::1]x")]
        ));
        assert!(!check(
            &policy,
            true,
            &[("host", b"localhost"), ("origin", b"http://localhost/path")]
        ));
        assert!(check(&policy, true, &[("host", b"[::1]:8080")]));
        assert!(check(&policy, true, &[("host", b"[::1]")]));
    }
}
