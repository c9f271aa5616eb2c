//! `WWW-Authenticate` challenges (RFC 9110 section 11.6.1) and the bearer parameters the
//! authorization flow reads from them (RFC 6750 section 3, RFC 9728 section 5.1):
//! `resource_metadata`, `scope`, `error`, `error_description`.
//!
//! One header value may hold several challenges, and a response may carry several header
//! values; both are read. A parameter value is a token or a quoted string (with `\` escapes);
//! a challenge may instead carry a `token68` (as `Basic` and `Negotiate` do). Whatever cannot be
//! read is skipped rather than failing the whole header: the next challenge is looked for at
//! the next comma.
//!
//! Spec: <https://www.rfc-editor.org/rfc/rfc9110#section-11.6.1>

use reqwest::header::{HeaderMap, WWW_AUTHENTICATE};

use super::scope;

/// One challenge of a `WWW-Authenticate` header: an authentication scheme and its
/// parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    scheme: String,
    token68: Option<String>,
    params: Vec<(String, String)>,
}

impl Challenge {
    /// Every challenge in one `WWW-Authenticate` header value, in order.
    ///
    /// ```
    /// use actix_mcp::client::auth::Challenge;
    ///
    /// let header = r#"Basic realm="mcp", Bearer scope="files:read", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource""#;
    /// let challenges = Challenge::parse_all(header);
    /// assert_eq!(challenges.len(), 2);
    /// assert!(challenges[1].is("bearer"));
    /// assert_eq!(challenges[1].param("SCOPE"), Some("files:read"));
    /// ```
    pub fn parse_all(header: &str) -> Vec<Challenge> {
        Parser::new(header).challenges()
    }

    /// The authentication scheme, as sent.
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// Whether the scheme is `scheme` (schemes are case-insensitive).
    pub fn is(&self, scheme: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(scheme)
    }

    /// The value of parameter `name` (names are case-insensitive); the first one when it is
    /// given twice.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// Every parameter, names lowercased, in order.
    pub fn params(&self) -> &[(String, String)] {
        &self.params
    }

    /// The `token68` the challenge carries instead of parameters, if any.
    pub fn token68(&self) -> Option<&str> {
        self.token68.as_deref()
    }
}

/// What a `Bearer` (or `DPoP`) challenge tells an OAuth client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BearerChallenge {
    /// The scheme of the challenge these come from (`Bearer`, `DPoP`).
    pub scheme: String,
    /// `resource_metadata`: where the protected resource metadata is (RFC 9728).
    pub resource_metadata: Option<String>,
    /// `scope`, split on spaces: the scopes the request needs.
    pub scope: Option<Vec<String>>,
    /// `error` (`invalid_token`, `insufficient_scope`, ...).
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// The bearer challenge among all `WWW-Authenticate` headers of a response: the first
    /// `Bearer` challenge, else the first `DPoP` one, else the first challenge that has a
    /// `resource_metadata` parameter. `None` when there is none of these.
    pub fn from_headers(headers: &HeaderMap) -> Option<BearerChallenge> {
        let challenges: Vec<Challenge> = headers
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(Challenge::parse_all)
            .collect();
        Self::pick(&challenges)
    }

    /// The bearer challenge among `challenges` (see [`from_headers`](Self::from_headers)).
    pub fn pick(challenges: &[Challenge]) -> Option<BearerChallenge> {
        let chosen = challenges
            .iter()
            .find(|c| c.is("bearer"))
            .or_else(|| challenges.iter().find(|c| c.is("dpop")))
            .or_else(|| {
                challenges
                    .iter()
                    .find(|c| c.param("resource_metadata").is_some())
            })?;
        Some(Self::from_challenge(chosen))
    }

    /// The bearer parameters of one challenge.
    pub fn from_challenge(challenge: &Challenge) -> BearerChallenge {
        let text = |name: &str| {
            challenge
                .param(name)
                .map(str::trim)
                .filter(|value| !value.is_empty())
                .map(str::to_owned)
        };
        BearerChallenge {
            scheme: challenge.scheme.clone(),
            resource_metadata: text("resource_metadata"),
            scope: challenge.param("scope").map(scope::parse),
            error: text("error"),
            error_description: text("error_description"),
        }
    }

    /// Whether this is an `insufficient_scope` challenge (the step-up signal on a `403`).
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// `tchar` of RFC 9110: what a token is made of.
fn is_tchar(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// `token68` adds these to letters and digits (and ends with optional `=` padding).
fn is_token68_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"-._~+/".contains(&byte)
}

/// A cursor over one header value.
struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text: text.as_bytes(),
            pos: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_spaces(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    /// Skips spaces and commas (empty list elements are allowed).
    fn skip_separators(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.pos += 1;
        }
    }

    fn token(&mut self) -> Option<String> {
        let start = self.pos;
        while self.peek().is_some_and(is_tchar) {
            self.pos += 1;
        }
        (self.pos > start).then(|| String::from_utf8_lossy(&self.text[start..self.pos]).into())
    }

    /// A quoted string, the opening quote under the cursor; `None` when it is not closed.
    fn quoted(&mut self) -> Option<String> {
        self.pos += 1;
        let mut value = Vec::new();
        loop {
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    return Some(String::from_utf8_lossy(&value).into());
                }
                b'\\' => {
                    self.pos += 1;
                    value.push(self.peek()?);
                    self.pos += 1;
                }
                byte => {
                    value.push(byte);
                    self.pos += 1;
                }
            }
        }
    }

    /// Moves past the next comma that is not inside a quoted string (error recovery).
    fn skip_to_comma(&mut self) {
        while let Some(byte) = self.peek() {
            match byte {
                b',' => return,
                b'"' => {
                    if self.quoted().is_none() {
                        self.pos = self.text.len();
                    }
                }
                _ => self.pos += 1,
            }
        }
    }

    /// Whether an `auth-param` (`name BWS = BWS value`) starts at the cursor, as opposed to
    /// the next challenge's scheme or a `token68`.
    fn at_param(&self) -> bool {
        let mut pos = self.pos;
        let start = pos;
        while self.text.get(pos).copied().is_some_and(is_tchar) {
            pos += 1;
        }
        if pos == start {
            return false;
        }
        while matches!(self.text.get(pos), Some(b' ' | b'\t')) {
            pos += 1;
        }
        if self.text.get(pos) != Some(&b'=') {
            return false;
        }
        // `name=` followed by the end, a comma or more `=` is a token68 with padding.
        pos += 1;
        while matches!(self.text.get(pos), Some(b' ' | b'\t')) {
            pos += 1;
        }
        !matches!(self.text.get(pos), None | Some(b',' | b'='))
    }

    /// A `token68` at the cursor, if one is there (and nothing else before the next comma).
    fn token68(&mut self) -> Option<String> {
        let start = self.pos;
        let mut pos = start;
        while self.text.get(pos).copied().is_some_and(is_token68_char) {
            pos += 1;
        }
        if pos == start {
            return None;
        }
        while self.text.get(pos) == Some(&b'=') {
            pos += 1;
        }
        let mut end = pos;
        while matches!(self.text.get(end), Some(b' ' | b'\t')) {
            end += 1;
        }
        if !matches!(self.text.get(end), None | Some(b',')) {
            return None;
        }
        self.pos = end;
        Some(String::from_utf8_lossy(&self.text[start..pos]).into())
    }

    fn challenges(mut self) -> Vec<Challenge> {
        let mut challenges = Vec::new();
        loop {
            self.skip_separators();
            if self.peek().is_none() {
                return challenges;
            }
            let Some(scheme) = self.token() else {
                self.skip_to_comma();
                continue;
            };
            let mut challenge = Challenge {
                scheme,
                token68: None,
                params: Vec::new(),
            };
            let spaced = matches!(self.peek(), Some(b' ' | b'\t'));
            self.skip_spaces();
            if spaced && !self.at_param() {
                challenge.token68 = self.token68();
            }
            if challenge.token68.is_none() {
                self.params(&mut challenge.params);
            }
            challenges.push(challenge);
        }
    }

    /// The parameters of one challenge, up to the next challenge's scheme.
    fn params(&mut self, params: &mut Vec<(String, String)>) {
        loop {
            self.skip_separators();
            if !self.at_param() {
                return;
            }
            let Some(name) = self.token() else {
                return;
            };
            self.skip_spaces();
            self.pos += 1; // `=`, checked by `at_param`
            self.skip_spaces();
            let value = match self.peek() {
                Some(b'"') => self.quoted(),
                _ => self.token(),
            };
            match value {
                Some(value) => params.push((name.to_ascii_lowercase(), value)),
                None => self.skip_to_comma(),
            }
            self.skip_spaces();
            match self.peek() {
                None | Some(b',') => {}
                // Garbage after a value: drop it and go on at the next comma.
                Some(_) => self.skip_to_comma(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(header: &str) -> Challenge {
        let mut all = Challenge::parse_all(header);
        assert_eq!(all.len(), 1, "{all:?}");
        all.remove(0)
    }

    #[test]
    fn quoted_values_keep_commas_and_escapes() {
        let c = one(r#"Bearer error="invalid_token", error_description="a, \"b\" c""#);
        assert_eq!(c.param("error"), Some("invalid_token"));
        assert_eq!(c.param("error_description"), Some(r#"a, "b" c"#));
    }

    #[test]
    fn several_challenges_and_token68() {
        let all = Challenge::parse_all(
            "Negotiate abc/+def==, Bearer realm=x,scope=\"a b\",  DPoP algs=\"ES256\"",
        );
        assert_eq!(all.len(), 3, "{all:?}");
        assert_eq!(all[0].token68(), Some("abc/+def=="));
        assert_eq!(all[1].param("realm"), Some("x"));
        assert_eq!(all[1].param("scope"), Some("a b"));
        assert!(all[2].is("DPOP"));
    }

    #[test]
    fn spaces_around_equals_and_unterminated_quotes() {
        let c = one(r#"Bearer scope = "x" , error = invalid_token"#);
        assert_eq!(c.param("scope"), Some("x"));
        assert_eq!(c.param("error"), Some("invalid_token"));
        let broken = Challenge::parse_all(r#"Bearer scope="never closed"#);
        assert_eq!(broken.len(), 1);
        assert_eq!(broken[0].param("scope"), None);
    }

    #[test]
    fn a_bare_scheme_is_a_challenge() {
        let all = Challenge::parse_all("Basic, Bearer");
        assert_eq!(all.len(), 2);
        assert!(all[1].is("bearer"));
    }
}
