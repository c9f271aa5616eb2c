//! Which network addresses the requests of the authorization flow may reach: the guard against
//! server-side request forgery through discovery. The MCP server chooses the URLs the client
//! fetches (its `resource_metadata`, the authorization servers it names, their endpoints), so
//! without a guard a hostile one could have the client send requests to the services of the
//! client's own network: a cloud metadata endpoint on `169.254.169.254`, an admin port on
//! loopback, an internal host.
//!
//! Every address a request would go to is classed: loopback (`127.0.0.0/8`, `::1`), private
//! (`10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`, the shared `100.64.0.0/10`, the
//! benchmarking `198.18.0.0/15`, the old site-local `fec0::/10`), link-local (`169.254.0.0/16`,
//! `fe80::/10`), unique-local (`fc00::/7`), never usable (unspecified `0.0.0.0/8` and `::`,
//! multicast, broadcast, `240.0.0.0/4`), or public (every other). An IPv6 address that carries
//! an IPv4 one (`::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`) is classed by it.
//!
//! A request may reach a public address, and an address of a class **the MCP server itself is
//! on**: the classes of the addresses its host resolves to (or of its literal address). An MCP
//! server on loopback may lead the client to loopback, one on a private network to private
//! addresses, a public one to public addresses only; a server on both (a name with a private
//! and a public address) to both. [`OAuthBuilder::allow_private_network`] lets every request
//! reach loopback, private, link-local and unique-local addresses whatever the MCP server is
//! on. Never-usable addresses are never reached. A `localhost` name must resolve to loopback
//! only.
//!
//! How: a literal address in a URL is checked before the request goes out. A host name is
//! checked where the flow's own HTTP client resolves it, by its resolver: every address of the
//! answer must pass, and the connection goes only to the addresses checked (an answer that
//! changes between a check and a connection cannot slip through). Through a proxy named by the
//! environment (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`), the proxy is reached unchecked (the
//! operator chose it) and resolves the names itself: the client resolves each name first and
//! checks its addresses, and lets a name it cannot resolve go to the proxy. With a client given
//! by [`OAuthBuilder::http_client`], which resolves with its own resolver, names are resolved
//! and checked before each request only.
//!
//! [`OAuthBuilder::allow_private_network`]: super::OAuthBuilder::allow_private_network
//! [`OAuthBuilder::http_client`]: super::OAuthBuilder::http_client

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// The kind of network an address is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AddressClass {
    /// Any address not below.
    Public,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918, `100.64.0.0/10`, `198.18.0.0/15`, `fec0::/10`.
    Private,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// `fc00::/7`.
    UniqueLocal,
    /// Unspecified, multicast, broadcast, reserved: never reached.
    Unusable,
}

impl AddressClass {
    /// The class, as an error message names it.
    fn describe(self) -> &'static str {
        match self {
            Self::Public => "a public address",
            Self::Loopback => "a loopback address",
            Self::Private => "a private address",
            Self::LinkLocal => "a link-local address",
            Self::UniqueLocal => "a unique-local address",
            Self::Unusable => "an unspecified, multicast, broadcast or reserved address",
        }
    }

    /// Its bit in a [`Reach`] (none for the public and unusable classes).
    fn bit(self) -> u8 {
        match self {
            Self::Public | Self::Unusable => 0,
            Self::Loopback => 1,
            Self::Private => 2,
            Self::LinkLocal => 4,
            Self::UniqueLocal => 8,
        }
    }
}

/// The class of `ip`.
pub(crate) fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    let [a, b, _, _] = ip.octets();
    if ip.is_loopback() {
        AddressClass::Loopback
    } else if ip.is_private()
        || (a == 100 && (64..128).contains(&b))
        || (a == 198 && (b == 18 || b == 19))
    {
        AddressClass::Private
    } else if ip.is_link_local() {
        AddressClass::LinkLocal
    } else if a == 0 || a >= 224 {
        // 0.0.0.0/8 ("this network": 0.0.0.0 reaches this host), multicast, reserved,
        // broadcast.
        AddressClass::Unusable
    } else {
        AddressClass::Public
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    let segments = ip.segments();
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        // NAT64 (RFC 6052): the gateway connects to the IPv4 address inside.
        let [_, _, _, _, _, _, high, low] = segments;
        return classify_v4(Ipv4Addr::from((u32::from(high) << 16) | u32::from(low)));
    }
    if ip.is_loopback() {
        AddressClass::Loopback
    } else if ip.is_unspecified() || ip.is_multicast() || segments[..6] == [0; 6] {
        // `::`, multicast, and the deprecated IPv4-compatible `::a.b.c.d`.
        AddressClass::Unusable
    } else if segments[0] & 0xffc0 == 0xfe80 {
        AddressClass::LinkLocal
    } else if segments[0] & 0xffc0 == 0xfec0 {
        AddressClass::Private
    } else if segments[0] & 0xfe00 == 0xfc00 {
        AddressClass::UniqueLocal
    } else {
        AddressClass::Public
    }
}

/// The classes of address a request may reach besides public ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) struct Reach(u8);

impl Reach {
    /// Public addresses only.
    pub(crate) const PUBLIC: Self = Self(0);
    /// Every class but the unusable one.
    pub(crate) const PRIVATE_NETWORK: Self = Self(1 | 2 | 4 | 8);

    /// The same, with `class` too.
    #[must_use]
    pub(crate) fn with(self, class: AddressClass) -> Self {
        Self(self.0 | class.bit())
    }

    /// Whether an address of `class` may be reached.
    pub(crate) fn allows(self, class: AddressClass) -> bool {
        match class {
            AddressClass::Public => true,
            AddressClass::Unusable => false,
            other => self.0 & other.bit() != 0,
        }
    }
}

/// Why a request may not go to an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    reason: String,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Refused {}

/// Whether `host` names this host (`localhost`, `*.localhost`).
fn is_localhost(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

/// The resolver of the operating system (`getaddrinfo`, on a blocking thread).
#[derive(Debug, Clone, Copy)]
struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            let addrs: Addrs = Box::new(found.collect::<Vec<_>>().into_iter());
            Ok(addrs)
        })
    }
}

/// The environment's proxy variables, as reqwest reads them.
const PROXY_VARIABLES: [&str; 6] = [
    "ALL_PROXY",
    "all_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
];

/// The address policy of the authorization requests, and the resolver it checks with.
pub(crate) struct Network {
    resolver: Arc<dyn Resolve>,
    allow_private: bool,
    /// The host names of the environment's proxies (lower case), resolved unchecked.
    proxies: Vec<String>,
}

impl fmt::Debug for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Network")
            .field("allow_private", &self.allow_private)
            .field("proxies", &self.proxies)
            .finish_non_exhaustive()
    }
}

impl Network {
    /// The policy, resolving with `resolver` (the system's when `None`), with private
    /// networks allowed whatever the MCP server is on when `allow_private`.
    pub(crate) fn new(resolver: Option<Arc<dyn Resolve>>, allow_private: bool) -> Self {
        let proxies = PROXY_VARIABLES
            .iter()
            .filter_map(|variable| std::env::var(variable).ok())
            .filter_map(|value| {
                let value = value.trim();
                Url::parse(value)
                    .ok()
                    .filter(|url| url.has_host())
                    .or_else(|| Url::parse(&format!("http://{value}")).ok())
            })
            .filter_map(|url| match url.host() {
                Some(url::Host::Domain(name)) => Some(name.to_ascii_lowercase()),
                _ => None,
            })
            .collect();
        Self {
            resolver: resolver.unwrap_or_else(|| Arc::new(SystemResolver)),
            allow_private,
            proxies,
        }
    }

    /// Whether the environment names a proxy (which may resolve names the client cannot).
    pub(crate) fn proxied(&self) -> bool {
        !self.proxies.is_empty()
    }

    /// The addresses `host` resolves to.
    pub(crate) async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, String> {
        let name: Name = host
            .parse()
            .map_err(|_| format!("{host:?} is not a host name"))?;
        let addrs = self
            .resolver
            .resolve(name)
            .await
            .map_err(|err| format!("{host} could not be resolved: {err}"))?;
        Ok(addrs.map(|addr| addr.ip()).collect())
    }

    /// What the requests of the flow for the MCP server at `server` may reach: public
    /// addresses, and the classes of the server's own (every class but the unusable one with
    /// `allow_private`). A server whose host cannot be resolved leads to public addresses only.
    pub(crate) async fn reach_of(&self, server: &Url) -> Reach {
        if self.allow_private {
            return Reach::PRIVATE_NETWORK;
        }
        let ips = match server.host() {
            Some(url::Host::Ipv4(ip)) => vec![IpAddr::V4(ip)],
            Some(url::Host::Ipv6(ip)) => vec![IpAddr::V6(ip)],
            Some(url::Host::Domain(name)) => match self.resolve(name).await {
                Ok(ips) => ips,
                Err(error) => {
                    tracing::debug!(%error, "the MCP server's addresses are unknown");
                    Vec::new()
                }
            },
            None => Vec::new(),
        };
        ips.into_iter()
            .fold(Reach::PUBLIC, |reach, ip| reach.with(classify(ip)))
    }

    /// Checks the addresses `host` resolved to (or is, for a literal address) against
    /// `reach`: all of them must pass.
    ///
    /// # Errors
    /// [`Refused`] naming the first that does not, or an empty answer.
    pub(crate) fn check(
        &self,
        reach: Reach,
        host: &str,
        ips: impl IntoIterator<Item = IpAddr>,
    ) -> Result<(), Refused> {
        let localhost = is_localhost(host);
        let mut any = false;
        for ip in ips {
            any = true;
            let class = classify(ip);
            let shown = if host.trim_matches(['[', ']']) == ip.to_string() {
                format!("{ip} is")
            } else {
                format!("{host} resolves to {ip},")
            };
            if localhost && class != AddressClass::Loopback {
                return Err(Refused {
                    reason: format!("{shown} not loopback, for a name of this host"),
                });
            }
            if !reach.allows(class) {
                let hint = if class == AddressClass::Unusable {
                    ""
                } else {
                    " (reached only from an MCP server on one, or with \
                     OAuthBuilder::allow_private_network)"
                };
                return Err(Refused {
                    reason: format!("{shown} {}{hint}", class.describe()),
                });
            }
        }
        if any {
            Ok(())
        } else {
            Err(Refused {
                reason: format!("{host} resolves to no address"),
            })
        }
    }

    /// Checks the literal address of `url`, if it has one.
    ///
    /// # Errors
    /// [`Refused`] when `reach` does not allow it.
    pub(crate) fn check_literal(&self, reach: Reach, url: &Url) -> Result<(), Refused> {
        let ip = match url.host() {
            Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
            _ => return Ok(()),
        };
        self.check(reach, &ip.to_string(), [ip])
    }

    /// Resolves the host name of `url`, if it has one, and checks its addresses (for requests
    /// whose connection resolves it elsewhere: a proxy, a client given by the application).
    /// A name that cannot be resolved passes when `unresolved_passes` (the proxy resolves it).
    ///
    /// # Errors
    /// [`Refused`] when `reach` does not allow an address, or the name cannot be resolved
    /// and `unresolved_passes` is false.
    pub(crate) async fn check_name(
        &self,
        reach: Reach,
        url: &Url,
        unresolved_passes: bool,
    ) -> Result<(), Refused> {
        let Some(url::Host::Domain(name)) = url.host() else {
            return Ok(());
        };
        match self.resolve(name).await {
            Ok(ips) => self.check(reach, name, ips),
            Err(_) if unresolved_passes => Ok(()),
            Err(reason) => Err(Refused { reason }),
        }
    }

    /// The resolver of an HTTP client whose connections may reach `reach`.
    pub(crate) fn checking_resolver(self: &Arc<Self>, reach: Reach) -> Arc<dyn Resolve> {
        Arc::new(CheckingResolver {
            network: self.clone(),
            reach,
        })
    }
}

/// Resolves with the [`Network`]'s resolver and answers only addresses its policy allows:
/// the resolver of the flow's own HTTP clients, one per [`Reach`].
struct CheckingResolver {
    network: Arc<Network>,
    reach: Reach,
}

impl Resolve for CheckingResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_ascii_lowercase();
        let network = self.network.clone();
        let reach = self.reach;
        let resolving = network.resolver.resolve(name);
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = resolving.await?.collect();
            if !network.proxies.contains(&host) {
                network.check(reach, &host, addrs.iter().map(SocketAddr::ip))?;
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The [`Refused`] among the causes of `error`, if any (a refusal by a checking resolver,
/// wrapped by the HTTP client).
pub(crate) fn refusal_in<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Refused> {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(refused) = error.downcast_ref::<Refused>() {
            return Some(refused);
        }
        cause = error.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse()
            .unwrap_or_else(|err| panic!("{text:?} is not an address: {err}"))
    }

    #[test]
    fn addresses_are_classed() {
        use AddressClass::*;
        for (address, class) in [
            ("127.0.0.1", Loopback),
            ("127.255.0.9", Loopback),
            ("::1", Loopback),
            ("10.1.2.3", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("100.64.0.1", Private),
            ("198.18.0.1", Private),
            ("fec0::1", Private),
            ("169.254.169.254", LinkLocal),
            ("fe80::1", LinkLocal),
            ("fd00::1", UniqueLocal),
            ("fc00::1", UniqueLocal),
            ("0.0.0.0", Unusable),
            ("0.1.2.3", Unusable),
            ("::", Unusable),
            ("224.0.0.1", Unusable),
            ("255.255.255.255", Unusable),
            ("240.0.0.1", Unusable),
            ("ff02::1", Unusable),
            ("::7f00:1", Unusable),
            ("::ffff:127.0.0.1", Loopback),
            ("::ffff:169.254.169.254", LinkLocal),
            ("64:ff9b::a9fe:a9fe", LinkLocal),
            ("64:ff9b::808:808", Public),
            ("172.32.0.1", Public),
            ("100.128.0.1", Public),
            ("8.8.8.8", Public),
            ("203.0.113.10", Public),
            ("2001:db8::1", Public),
            ("2606:4700::1111", Public),
        ] {
            assert_eq!(classify(ip(address)), class, "{address}");
        }
    }

    #[test]
    fn a_reach_allows_public_addresses_and_its_own_classes() {
        let loopback = Reach::PUBLIC.with(AddressClass::Loopback);
        assert!(loopback.allows(AddressClass::Public));
        assert!(loopback.allows(AddressClass::Loopback));
        assert!(!loopback.allows(AddressClass::Private));
        assert!(!loopback.allows(AddressClass::LinkLocal));
        assert!(!Reach::PUBLIC.allows(AddressClass::Loopback));
        assert!(Reach::PRIVATE_NETWORK.allows(AddressClass::UniqueLocal));
        assert!(!Reach::PRIVATE_NETWORK.allows(AddressClass::Unusable));
        assert_eq!(
            Reach::PUBLIC.with(AddressClass::Public),
            Reach::PUBLIC,
            "public adds nothing"
        );
    }

    #[test]
    fn every_address_of_a_name_must_pass() {
        let network = Network::new(None, false);
        let public = Reach::PUBLIC;
        assert!(
            network
                .check(public, "as.example.com", [ip("203.0.113.1")])
                .is_ok()
        );
        let mixed = network.check(
            public,
            "as.example.com",
            [ip("203.0.113.1"), ip("10.0.0.1")],
        );
        let reason = mixed.map_err(|refused| refused.to_string()).err();
        assert!(
            reason
                .as_deref()
                .is_some_and(|r| r.contains("10.0.0.1") && r.contains("private")),
            "{reason:?}"
        );
        assert!(network.check(public, "empty.example", []).is_err());
        // A name of this host must be loopback, whatever the reach.
        let everything = Reach::PRIVATE_NETWORK;
        assert!(
            network
                .check(everything, "localhost", [ip("127.0.0.1")])
                .is_ok()
        );
        assert!(
            network
                .check(everything, "evil.localhost", [ip("203.0.113.1")])
                .is_err()
        );
    }

    #[test]
    fn literal_addresses_are_checked_and_names_are_left_to_the_resolver() {
        let network = Network::new(None, false);
        let url = |text: &str| Url::parse(text).unwrap_or_else(|err| panic!("{text}: {err}"));
        let refused = network.check_literal(Reach::PUBLIC, &url("https://169.254.169.254/x"));
        assert!(
            refused
                .as_ref()
                .is_err_and(|r| r.to_string().starts_with("169.254.169.254 is a link-local")),
            "{refused:?}"
        );
        assert!(
            network
                .check_literal(Reach::PUBLIC, &url("https://[fd00::1]/x"))
                .is_err()
        );
        let loopback = Reach::PUBLIC.with(AddressClass::Loopback);
        assert!(
            network
                .check_literal(loopback, &url("http://127.0.0.1:9/x"))
                .is_ok()
        );
        assert!(
            network
                .check_literal(Reach::PUBLIC, &url("https://as.example.com/x"))
                .is_ok()
        );
    }

    #[test]
    fn a_refusal_is_found_among_the_causes() {
        #[derive(Debug)]
        struct Wrapper(Refused);
        impl fmt::Display for Wrapper {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("wrapped")
            }
        }
        impl std::error::Error for Wrapper {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let refused = Refused {
            reason: "no".into(),
        };
        let wrapped = Wrapper(refused.clone());
        assert_eq!(refusal_in(&wrapped), Some(&refused));
        assert_eq!(refusal_in(&std::fmt::Error), None);
    }
}
