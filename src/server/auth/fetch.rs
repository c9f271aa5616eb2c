//! What the validators share to reach the authorization server: the URL policy (https, or
//! plain http only to loopback unless allowed), the HTTP client (no redirects, bounded time),
//! and reading an answer of bounded size.

#[cfg(feature = "auth")]
use std::time::Duration;

use url::Url;

use super::AuthConfigError;
#[cfg(feature = "auth")]
use super::AuthError;

/// Parses `raw` as an absolute `http(s)` URL; plain `http` only to loopback hosts unless
/// `allow_http`.
pub(super) fn parse_url(
    what: &'static str,
    raw: &str,
    allow_http: bool,
) -> Result<Url, AuthConfigError> {
    let invalid = |reason: &str| AuthConfigError::InvalidUrl {
        what,
        url: raw.to_owned(),
        reason: reason.to_owned(),
    };
    let url = Url::parse(raw).map_err(|err| invalid(&err.to_string()))?;
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("it has no host"));
    }
    match url.scheme() {
        "https" => Ok(url),
        "http" if allow_http || is_loopback(&url) => Ok(url),
        "http" => Err(AuthConfigError::InsecureUrl {
            what,
            url: raw.to_owned(),
        }),
        _ => Err(invalid("only http and https URLs can be fetched")),
    }
}

/// Whether the URL's host is a loopback name or address.
pub(super) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// The HTTP client of a validator: bounded in time, and following no redirects (a redirect
/// could lead a key fetch somewhere less trustworthy).
#[cfg(feature = "auth")]
pub(super) fn client(timeout: Duration) -> Result<reqwest::Client, AuthConfigError> {
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|err| AuthConfigError::HttpClient(err.to_string()))
}

/// Sends `request` and reads a 2xx JSON answer of at most `limit` bytes.
///
/// # Errors
/// [`AuthError::Unavailable`] for a transport failure, a timeout, another status, a larger
/// answer, or one that is not a JSON object.
#[cfg(feature = "auth")]
pub(super) async fn json_object(
    what: &str,
    request: reqwest::RequestBuilder,
    limit: usize,
) -> Result<serde_json::Map<String, serde_json::Value>, AuthError> {
    let mut response = request
        .send()
        .await
        .map_err(|err| AuthError::unavailable(format!("{what}: {err}")))?;
    let status = response.status();
    if !status.is_success() {
        return Err(AuthError::unavailable(format!("{what}: HTTP {status}")));
    }
    let too_large = || AuthError::unavailable(format!("{what}: the answer exceeds {limit} bytes"));
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|err| AuthError::unavailable(format!("{what}: {err}")))?
    {
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    match serde_json::from_slice(&body) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err(AuthError::unavailable(format!(
            "{what}: the answer is not a JSON object"
        ))),
        Err(err) => Err(AuthError::unavailable(format!(
            "{what}: the answer is not JSON: {err}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_everywhere_and_http_only_to_loopback() {
        assert!(parse_url("x", "https://as.example.com/jwks", false).is_ok());
        assert!(parse_url("x", "http://127.0.0.1:9/jwks", false).is_ok());
        assert!(parse_url("x", "http://[::1]/jwks", false).is_ok());
        assert!(parse_url("x", "http://localhost/jwks", false).is_ok());
        assert!(matches!(
            parse_url("x", "http://as.example.com/jwks", false),
            Err(AuthConfigError::InsecureUrl { .. })
        ));
        assert!(parse_url("x", "http://as.example.com/jwks", true).is_ok());
        assert!(matches!(
            parse_url("x", "ftp://as.example.com/jwks", true),
            Err(AuthConfigError::InvalidUrl { .. })
        ));
        assert!(matches!(
            parse_url("x", "not a url", true),
            Err(AuthConfigError::InvalidUrl { .. })
        ));
    }
}
