//! Where tokens and client registrations live between requests (and, with a persistent
//! store, between runs): behind [`TokenStore`], in memory by default.
//!
//! Tokens are keyed by [`TokenKey`]: the protected resource (as its metadata publishes it)
//! and the issuer of the authorization server that minted them, so a token is only ever
//! presented to the resource it was obtained for, and only while that resource still names the
//! same authorization server. Registrations are keyed by issuer alone: a client ID is only
//! valid at the server that issued it.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use futures::future::BoxFuture;

use super::registration::ClientRegistration;
use super::token::Token;

/// The key of a stored token: which resource it is for, and which authorization server
/// minted it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TokenKey {
    /// The protected resource, exactly as its metadata publishes it.
    pub resource: String,
    /// The authorization server's issuer identifier.
    pub issuer: String,
}

/// Storage for tokens and dynamic client registrations. Implement it to persist them (a
/// keychain, a file with restricted permissions); [`InMemoryTokenStore`] is the default.
///
/// The methods cannot fail: a store that cannot read behaves as if it had nothing (the client
/// then authorizes anew), and one that cannot write should log why.
pub trait TokenStore: Send + Sync + fmt::Debug {
    /// The token stored under `key`.
    fn token<'a>(&'a self, key: &'a TokenKey) -> BoxFuture<'a, Option<Token>>;

    /// Stores `token` under `key`, replacing any other.
    fn save_token<'a>(&'a self, key: &'a TokenKey, token: Token) -> BoxFuture<'a, ()>;

    /// Forgets the token under `key`.
    fn remove_token<'a>(&'a self, key: &'a TokenKey) -> BoxFuture<'a, ()>;

    /// The client registration stored for the authorization server `issuer`.
    fn registration<'a>(&'a self, issuer: &'a str) -> BoxFuture<'a, Option<ClientRegistration>>;

    /// Stores the registration at `issuer`.
    fn save_registration<'a>(
        &'a self,
        issuer: &'a str,
        registration: ClientRegistration,
    ) -> BoxFuture<'a, ()>;

    /// Forgets the registration at `issuer`.
    fn remove_registration<'a>(&'a self, issuer: &'a str) -> BoxFuture<'a, ()>;
}

/// A [`TokenStore`] in process memory: everything is gone when the process ends.
#[derive(Default)]
pub struct InMemoryTokenStore {
    tokens: Mutex<HashMap<TokenKey, Token>>,
    registrations: Mutex<HashMap<String, ClientRegistration>>,
}

impl fmt::Debug for InMemoryTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryTokenStore")
            .field("tokens", &lock(&self.tokens).len())
            .field("registrations", &lock(&self.registrations).len())
            .finish()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl InMemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl TokenStore for InMemoryTokenStore {
    fn token<'a>(&'a self, key: &'a TokenKey) -> BoxFuture<'a, Option<Token>> {
        let token = lock(&self.tokens).get(key).cloned();
        Box::pin(async move { token })
    }

    fn save_token<'a>(&'a self, key: &'a TokenKey, token: Token) -> BoxFuture<'a, ()> {
        lock(&self.tokens).insert(key.clone(), token);
        Box::pin(async {})
    }

    fn remove_token<'a>(&'a self, key: &'a TokenKey) -> BoxFuture<'a, ()> {
        lock(&self.tokens).remove(key);
        Box::pin(async {})
    }

    fn registration<'a>(&'a self, issuer: &'a str) -> BoxFuture<'a, Option<ClientRegistration>> {
        let registration = lock(&self.registrations).get(issuer).cloned();
        Box::pin(async move { registration })
    }

    fn save_registration<'a>(
        &'a self,
        issuer: &'a str,
        registration: ClientRegistration,
    ) -> BoxFuture<'a, ()> {
        lock(&self.registrations).insert(issuer.to_owned(), registration);
        Box::pin(async {})
    }

    fn remove_registration<'a>(&'a self, issuer: &'a str) -> BoxFuture<'a, ()> {
        lock(&self.registrations).remove(issuer);
        Box::pin(async {})
    }
}
