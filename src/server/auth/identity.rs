//! [`Identity`]: who made a request, as the endpoint's token validator established it.
//!
//! Built by the validators from a JWT's claims or an introspection response
//! ([`Identity::from_claims`]), or by a custom [`TokenValidator`](super::TokenValidator).
//! Handlers read it through [`RequestContext::identity`](crate::RequestContext::identity).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

#[cfg(feature = "http")]
use super::AuthError;

/// The caller of a request on a bearer-protected endpoint: subject, scopes, client, issuer,
/// audience, expiry, and every claim the token (or its introspection) carried.
///
/// It never holds the access token itself: a server must not pass the client's token on to
/// other services (the spec forbids token passthrough); to call an upstream API, obtain a
/// token of its own for it.
///
/// ```
/// use actix_mcp::server::auth::Identity;
/// use serde_json::json;
///
/// let claims = json!({"sub": "alice", "scope": "files:read files:write", "client_id": "cli",
///                     "iss": "https://auth.example.com", "aud": "https://mcp.example.com/mcp",
///                     "exp": 2_000_000_000, "tenant": "acme"});
/// let identity = Identity::from_claims(claims.as_object().unwrap().clone());
/// assert_eq!(identity.subject(), Some("alice"));
/// assert!(identity.has_scope("files:write"));
/// assert_eq!(identity.claim("tenant"), Some(&json!("acme")));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    subject: Option<String>,
    scopes: Vec<String>,
    client_id: Option<String>,
    issuer: Option<String>,
    audience: Vec<String>,
    expires_at: Option<SystemTime>,
    claims: Map<String, Value>,
}

/// A string claim, or the strings of an array claim.
fn strings(value: Option<&Value>, split: bool) -> Vec<String> {
    match value {
        Some(Value::String(s)) if split => s.split_ascii_whitespace().map(str::to_owned).collect(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

fn string(claims: &Map<String, Value>, key: &str) -> Option<String> {
    claims.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// A NumericDate claim (seconds since the epoch) as a time.
pub(crate) fn numeric_date(value: Option<&Value>) -> Option<SystemTime> {
    let seconds = value?.as_f64()?;
    if !seconds.is_finite() || seconds < 0.0 {
        return None;
    }
    UNIX_EPOCH.checked_add(Duration::try_from_secs_f64(seconds).ok()?)
}

impl Identity {
    /// An identity with only a subject; add the rest with the `with_*` setters.
    pub fn new(subject: impl Into<String>) -> Self {
        Self {
            subject: Some(subject.into()),
            scopes: Vec::new(),
            client_id: None,
            issuer: None,
            audience: Vec::new(),
            expires_at: None,
            claims: Map::new(),
        }
    }

    /// An identity read from a token's claims (or an introspection response): `sub`, the
    /// scopes of `scope` (space-separated, RFC 8693/9068) or else `scp` (a string or an
    /// array), `client_id` or else `azp`, `iss`, `aud` (a string or an array) and `exp`. Every
    /// claim stays readable through [`claims`](Self::claims).
    pub fn from_claims(claims: Map<String, Value>) -> Self {
        let scopes = if claims.contains_key("scope") {
            strings(claims.get("scope"), true)
        } else {
            strings(claims.get("scp"), true)
        };
        Self {
            subject: string(&claims, "sub"),
            scopes,
            client_id: string(&claims, "client_id").or_else(|| string(&claims, "azp")),
            issuer: string(&claims, "iss"),
            audience: strings(claims.get("aud"), false),
            expires_at: numeric_date(claims.get("exp")),
            claims,
        }
    }

    /// Sets the granted scopes.
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the client the token was issued to.
    #[must_use]
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sets the issuer (the authorization server).
    #[must_use]
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Sets the audience the token was issued for.
    #[must_use]
    pub fn with_audience<I, S>(mut self, audience: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.audience = audience.into_iter().map(Into::into).collect();
        self
    }

    /// Sets when the token expires.
    #[must_use]
    pub fn with_expires_at(mut self, at: SystemTime) -> Self {
        self.expires_at = Some(at);
        self
    }

    /// Sets the claims (the typed fields are left as they are).
    #[must_use]
    pub fn with_claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = claims;
        self
    }

    /// The subject (`sub`): the user, or the client acting for itself.
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The granted scopes.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Whether `scope` was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|granted| granted == scope)
    }

    /// The OAuth client the token was issued to (`client_id`, or `azp`).
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The issuer (`iss`).
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// The audience (`aud`).
    pub fn audience(&self) -> &[String] {
        &self.audience
    }

    /// When the token expires (`exp`).
    pub fn expires_at(&self) -> Option<SystemTime> {
        self.expires_at
    }

    /// Every claim, unknown ones included.
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }

    /// One claim.
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims.get(name)
    }

    /// Who holds the token: its subject, or, without one, the client it was issued to (a
    /// client acting for itself). Empty values name no one.
    fn principal(&self) -> Option<&str> {
        let subject = self.subject.as_deref().filter(|s| !s.is_empty());
        subject.or_else(|| self.client_id.as_deref().filter(|c| !c.is_empty()))
    }

    /// Refuses an identity a protected endpoint cannot use: one naming no principal (neither
    /// `sub` nor `client_id`/`azp`), which would share its owner (sessions, tasks, request
    /// states, per-principal limits) with every other such token of its issuer; and one bound to
    /// a DPoP key (`cnf.jkt`, RFC 9449 §6), which is only valid with a DPoP proof, never as the
    /// plain bearer token the endpoint accepts (RFC 9449 §7.1).
    #[cfg(feature = "http")]
    pub(crate) fn check_usable(&self) -> Result<(), AuthError> {
        if self.principal().is_none() {
            return Err(AuthError::invalid_token(
                "the token names no subject (`sub`) and no client (`client_id` or `azp`): \
                 its holder cannot be told apart from others",
            ));
        }
        let dpop_bound = self
            .claims
            .get("cnf")
            .and_then(|cnf| cnf.get("jkt"))
            .is_some();
        if dpop_bound {
            return Err(AuthError::invalid_token(
                "the token is bound to a DPoP key (`cnf.jkt`): it cannot be used as a bearer token",
            ));
        }
        Ok(())
    }

    /// The key a session (a task, a request state, a per-principal limit) is bound to: the
    /// issuer and the principal (the subject or, without one, the client id). Separated by a
    /// NUL, which neither may contain. An identity without a principal never gets this far on a
    /// protected endpoint ([`check_usable`](Self::check_usable)).
    pub(crate) fn owner_key(&self) -> String {
        format!(
            "{}\0{}",
            self.issuer.as_deref().unwrap_or_default(),
            self.principal().unwrap_or_default()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn reads_the_standard_claims_in_their_usual_shapes() {
        let identity = Identity::from_claims(claims(json!({
            "sub": "u1", "scp": ["a", "b"], "azp": "app", "iss": "https://as",
            "aud": ["x", "y"], "exp": 100
        })));
        assert_eq!(identity.scopes(), ["a", "b"]);
        assert_eq!(identity.client_id(), Some("app"));
        assert_eq!(identity.audience(), ["x", "y"]);
        assert_eq!(
            identity.expires_at(),
            Some(UNIX_EPOCH + Duration::from_secs(100))
        );
        let identity = Identity::from_claims(claims(json!({"scope": " a  b ", "aud": "x"})));
        assert_eq!(identity.scopes(), ["a", "b"]);
        assert_eq!(identity.audience(), ["x"]);
        assert_eq!(identity.subject(), None);
    }

    #[test]
    fn owners_differ_by_issuer_and_subject() {
        let a = Identity::new("alice").with_issuer("https://one");
        let b = Identity::new("alice").with_issuer("https://two");
        let c = Identity::new("bob").with_issuer("https://one");
        assert_ne!(a.owner_key(), b.owner_key());
        assert_ne!(a.owner_key(), c.owner_key());
        assert_eq!(a.owner_key(), a.clone().with_scopes(["x"]).owner_key());
    }

    #[test]
    #[cfg(feature = "http")]
    fn an_identity_without_subject_or_client_or_bound_to_dpop_is_unusable() {
        let usable = |value: Value| Identity::from_claims(claims(value)).check_usable().is_ok();
        assert!(usable(json!({"sub": "u"})));
        assert!(usable(json!({"client_id": "c"})));
        assert!(usable(json!({"sub": "", "azp": "app"})));
        assert!(!usable(json!({"iss": "https://as"})));
        assert!(!usable(json!({"sub": "", "client_id": ""})));
        assert!(!usable(json!({"sub": "u", "cnf": {"jkt": "0ZcOCORZNYy"}})));
        assert!(usable(
            json!({"sub": "u", "cnf": {"x5t#S256": "bwcK0esc3ACC3DB2"}})
        ));
        let client = Identity::from_claims(claims(json!({"sub": "", "client_id": "c"})));
        assert_eq!(client.owner_key(), "\0c");
    }
}
