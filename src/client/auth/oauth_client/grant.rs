//! How a token is obtained once discovery is done: a [`Grant`]. The flow
//! ([`OAuth`](super::OAuth)) finds the resource, its authorization server and the client's
//! registration, selects the scopes, then hands a [`GrantContext`] to the grant, which returns
//! a token. [`AuthorizationCode`](super::AuthorizationCode) is the grant of the MCP spec;
//! the extensions' grants (`grants` module: client credentials, JWT bearer, enterprise-managed
//! authorization) plug in the same way.

use std::fmt;
use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;

use super::client_auth::TokenEndpointAuth;
use super::dpop::DpopKey;
use super::http::AuthHttp;
use super::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
use super::registration::{ClientMetadata, ClientRegistration};
use super::token::{Token, request_token};
use crate::client::error::ClientError;

/// A way of obtaining an access token from an authorization server whose metadata is known.
pub trait Grant: Send + Sync + fmt::Debug {
    /// Obtains a token for `cx.resource()`, asking for `cx.scopes()`.
    ///
    /// # Errors
    /// Any [`ClientError`]; [`ClientError::Auth`] for the refusals of the flow.
    fn obtain<'a>(&'a self, cx: GrantContext<'a>) -> BoxFuture<'a, Result<Token, ClientError>>;

    /// Fills in the grant's part of the client metadata sent in a dynamic registration
    /// (`redirect_uris`, `grant_types`, `response_types`). The default adds nothing.
    fn client_metadata(&self, metadata: &mut ClientMetadata) {
        let _ = metadata;
    }

    /// Checks the grant's settings when the [`OAuth`](super::OAuth) client is built. The
    /// default accepts them.
    ///
    /// # Errors
    /// [`AuthError::Config`](super::AuthError::Config) saying what is wrong.
    fn check(&self) -> Result<(), super::AuthError> {
        Ok(())
    }

    /// Whether the client may register dynamically (RFC 7591) at a server it has no
    /// registration for. Default `true`; the grants of clients whose credentials are given
    /// (client credentials, workload identity, enterprise-managed authorization) answer
    /// `false`, and the flow then fails with
    /// [`AuthError::NoRegistration`](super::AuthError::NoRegistration) rather than register.
    fn dynamic_registration(&self) -> bool {
        true
    }

    /// Whether the grant may use a public pre-registration bound to no issuer (a
    /// [`ClientRegistration::pre_registered`] without
    /// [`issuer`](ClientRegistration::issuer)) at whichever authorization server the MCP
    /// server names. Such a registration has no secret and no key, so the grant sends its
    /// `client_id` and nothing another server could replay; a grant that sends an assertion or
    /// a token it did not get from that server must answer `false`. Default `false`;
    /// [`AuthorizationCode`](super::AuthorizationCode) answers `true` (the code it redeems
    /// comes from the server it redeems it at).
    fn accepts_unbound_client(&self) -> bool {
        false
    }

    /// Whether the grant may yield refresh tokens, so that the client asks for
    /// `offline_access` where the server offers it. Default `false`.
    fn refreshable(&self) -> bool {
        false
    }
}

/// What a [`Grant`] works with: the resource, its authorization server, the client's
/// registration there, the scopes to ask for, and the way to the token endpoint.
#[derive(Clone, Copy)]
pub struct GrantContext<'a> {
    pub(crate) http: &'a AuthHttp,
    pub(crate) resource: &'a ProtectedResourceMetadata,
    pub(crate) server: &'a AuthorizationServerMetadata,
    pub(crate) client: &'a ClientRegistration,
    pub(crate) scopes: &'a [String],
    pub(crate) dpop: Option<&'a DpopKey>,
    pub(crate) interaction: &'a Interaction,
}

/// Default time limit of the user's part of an authorization.
pub(crate) const DEFAULT_AUTHORIZATION_TIMEOUT: Duration = Duration::from_secs(300);

/// The user's part of the flow: its time limit, and the time spent in it so far (which the
/// client does not count against its request timeouts).
#[derive(Debug)]
pub(crate) struct Interaction {
    timeout: Duration,
    clock: Mutex<Clock>,
}

/// Time spent in interactions: the finished ones, and since when some are running.
#[derive(Debug, Default)]
struct Clock {
    finished: Duration,
    running: usize,
    since: Option<Instant>,
}

impl Interaction {
    pub(crate) fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            clock: Mutex::new(Clock::default()),
        }
    }

    fn clock(&self) -> std::sync::MutexGuard<'_, Clock> {
        self.clock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The time spent waiting for the user, in all (overlapping interactions counted once).
    pub(crate) fn elapsed(&self) -> Duration {
        let clock = self.clock();
        clock.finished + clock.since.map_or(Duration::ZERO, |since| since.elapsed())
    }

    /// Runs `step` as an interaction, within the time limit.
    async fn run<T>(
        &self,
        step: impl Future<Output = Result<T, ClientError>>,
    ) -> Result<T, ClientError> {
        /// Ends the interaction however the step ends (dropped included).
        struct Running<'a>(&'a Interaction);
        impl Drop for Running<'_> {
            fn drop(&mut self) {
                let mut clock = self.0.clock();
                clock.running = clock.running.saturating_sub(1);
                if clock.running == 0
                    && let Some(since) = clock.since.take()
                {
                    clock.finished += since.elapsed();
                }
            }
        }
        {
            let mut clock = self.clock();
            clock.running += 1;
            clock.since.get_or_insert_with(Instant::now);
        }
        let _running = Running(self);
        tokio::time::timeout(self.timeout, step)
            .await
            .map_err(|_| {
                super::AuthError::Authorizer(format!(
                    "the user did not complete the authorization within {:?}",
                    self.timeout
                ))
            })?
    }
}

impl fmt::Debug for GrantContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrantContext")
            .field("resource", &self.resource.resource)
            .field("issuer", &self.server.issuer)
            .field("client", &self.client)
            .field("scopes", &self.scopes)
            .field("dpop", &self.dpop.is_some())
            .finish()
    }
}

impl<'a> GrantContext<'a> {
    /// The resource identifier, exactly as the protected resource metadata publishes it (the
    /// `resource` parameter, RFC 8707).
    pub fn resource(&self) -> &'a str {
        &self.resource.resource
    }

    /// The protected resource metadata.
    pub fn resource_metadata(&self) -> &'a ProtectedResourceMetadata {
        self.resource
    }

    /// The authorization server's metadata (its issuer checked).
    pub fn server(&self) -> &'a AuthorizationServerMetadata {
        self.server
    }

    /// The client's registration at that server.
    pub fn client(&self) -> &'a ClientRegistration {
        self.client
    }

    /// The scopes to ask for (possibly none: then no `scope` parameter is sent).
    pub fn scopes(&self) -> &'a [String] {
        self.scopes
    }

    /// The DPoP key the flow proves possession of to this server, when it uses DPoP with it
    /// (the authorization-code grant sends its thumbprint as `dpop_jkt`).
    pub fn dpop_key(&self) -> Option<&'a DpopKey> {
        self.dpop
    }

    /// Runs `step`, the user's part of the grant (the authorizer's), as an interaction: the
    /// client does not count the time it takes against its request and discovery timeouts,
    /// and it is bounded by the flow's own limit
    /// ([`OAuthBuilder::authorization_timeout`](super::OAuthBuilder::authorization_timeout)).
    ///
    /// # Errors
    /// The step's; [`AuthError::Authorizer`](super::AuthError::Authorizer) when it does not
    /// end within the limit.
    pub async fn interact<T>(
        &self,
        step: impl Future<Output = Result<T, ClientError>>,
    ) -> Result<T, ClientError> {
        self.interaction.run(step).await
    }

    /// The token endpoint authentication this client uses with this server.
    pub fn token_endpoint_auth(&self) -> TokenEndpointAuth {
        self.client.token_endpoint_auth(self.server)
    }

    /// Sends a token request: `grant_type` and `params`, plus `resource`, authenticated as
    /// the client, through the request hook; reads the answer as a token.
    ///
    /// # Errors
    /// [`ClientError::Auth`] with [`AuthError::TokenRequest`](super::AuthError::TokenRequest)
    /// when the server refuses, or the other reasons of the flow.
    pub async fn token_request(
        &self,
        grant_type: &str,
        params: &[(&str, &str)],
    ) -> Result<Token, ClientError> {
        request_token(
            self.http,
            self.server,
            self.client,
            &self.token_endpoint_auth(),
            Some(self.resource()),
            grant_type,
            params,
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_rt::test]
    async fn interactions_are_timed_and_bounded() {
        let interaction = Interaction::new(Duration::from_millis(300));
        assert_eq!(interaction.elapsed(), Duration::ZERO);
        let done = interaction
            .run(async {
                tokio::time::sleep(Duration::from_millis(50)).await;
                Ok(7)
            })
            .await;
        assert!(matches!(done, Ok(7)));
        let after_one = interaction.elapsed();
        assert!(after_one >= Duration::from_millis(50), "{after_one:?}");
        let late = interaction
            .run(async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok(())
            })
            .await;
        assert!(matches!(
            late,
            Err(ClientError::Auth(super::super::AuthError::Authorizer(_)))
        ));
        let after_two = interaction.elapsed();
        assert!(
            after_two >= after_one + Duration::from_millis(300),
            "{after_two:?}"
        );
        // Nothing runs now: the clock stands still.
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(interaction.elapsed(), after_two);
    }
}
