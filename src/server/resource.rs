//! Resources and resource templates: a static list, each with an optional read handler, plus
//! templates (RFC 6570) whose handlers see the matched variables through [`UriVars`].
//!
//! `resources/read` tries the static resources first, then each template in registration
//! order, then the server-wide fallback read handler; an unknown uri is `-32002` with
//! `data.uri`. Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/resources>
//!
//! [`UriVars`]: crate::UriVars

use std::fmt;

use crate::error::{BuildError, McpError};
use crate::protocol::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use crate::server::handler::{ErasedHandler, Handler, erase};
use crate::server::uri_template::UriTemplate;

/// What a resource read handler returns.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResourceOutput {
    /// A complete result.
    Result(ReadResourceResult),
    /// Contents, sent as they are.
    Contents(Vec<ResourceContents>),
    /// Text, sent as one text content with the requested uri and the resource's MIME type.
    Text(String),
    /// Bytes, sent base64-encoded as one blob content.
    Blob(Vec<u8>),
}

/// Converts a read handler's output into a [`ResourceOutput`].
pub trait IntoResourceOutput: Send + 'static {
    /// The conversion.
    ///
    /// # Errors
    /// When the output is itself an error.
    fn into_resource_output(self) -> Result<ResourceOutput, McpError>;
}

impl IntoResourceOutput for ResourceOutput {
    fn into_resource_output(self) -> Result<ResourceOutput, McpError> {
        Ok(self)
    }
}

impl IntoResourceOutput for ReadResourceResult {
    fn into_resource_output(self) -> Result<ResourceOutput, McpError> {
        Ok(ResourceOutput::Result(self))
    }
}

impl IntoResourceOutput for ResourceContents {
    fn into_resource_output(self) -> Result<ResourceOutput, McpError> {
        Ok(ResourceOutput::Contents(vec![self]))
    }
}

impl IntoResourceOutput for Vec<ResourceContents> {
    fn into_resource_output(self) -> Result<ResourceOutput, McpError> {
        Ok(ResourceOutput::Contents(self))
    }
}

impl IntoResourceOutput for String {
    fn into_resource_output(self) -> Result<ResourceOutput, McpError> {
        Ok(ResourceOutput::Text(self))
    }
}

impl IntoResourceOutput for &'static str {
    fn into_resource_output(self) -> Result<ResourceOutput, McpError> {
        Ok(ResourceOutput::Text(self.to_owned()))
    }
}

impl IntoResourceOutput for Vec<u8> {
    fn into_resource_output(self) -> Result<ResourceOutput, McpError> {
        Ok(ResourceOutput::Blob(self))
    }
}

impl<T: IntoResourceOutput, E: Into<McpError> + Send + 'static> IntoResourceOutput
    for Result<T, E>
{
    fn into_resource_output(self) -> Result<ResourceOutput, McpError> {
        self.map_err(Into::into)
            .and_then(IntoResourceOutput::into_resource_output)
    }
}

pub(crate) type ReadHandler = ErasedHandler<ResourceOutput>;

/// Erases a read handler closure.
pub(crate) fn read_handler<H, M>(handler: H) -> ReadHandler
where
    H: Handler<M>,
    H::Output: IntoResourceOutput,
    M: 'static,
{
    erase(handler, IntoResourceOutput::into_resource_output)
}

/// A registered resource: its listing and, optionally, its own read handler.
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) definition: Resource,
    pub(crate) handler: Option<ReadHandler>,
    /// Scopes a read needs on a bearer-protected endpoint (beyond the server's base set).
    pub(crate) required_scopes: Vec<String>,
    /// An invalid scope given to `required_scopes`, reported when it is registered.
    pub(crate) scope_error: Option<BuildError>,
}

impl fmt::Debug for ResourceDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceDef")
            .field("uri", &self.definition.uri)
            .field("has_handler", &self.handler.is_some())
            .finish()
    }
}

/// A resource with its own read handler (a closure with extractors).
pub fn resource<H, M>(definition: Resource, handler: H) -> ResourceDef
where
    H: Handler<M>,
    H::Output: IntoResourceOutput,
    M: 'static,
{
    ResourceDef {
        definition,
        handler: Some(read_handler(handler)),
        required_scopes: Vec::new(),
        scope_error: None,
    }
}

impl From<Resource> for ResourceDef {
    /// A listed resource read by the server's fallback read handler.
    fn from(definition: Resource) -> Self {
        Self {
            definition,
            handler: None,
            required_scopes: Vec::new(),
            scope_error: None,
        }
    }
}

impl ResourceDef {
    /// Scopes a `resources/read` (or subscription) of this resource needs on an endpoint
    /// protected by [`bearer_auth`](crate::transport::http::McpHttp::bearer_auth), beyond the
    /// server's [`required_scopes`](crate::ServerBuilder::required_scopes): without one, HTTP
    /// 403 with `error="insufficient_scope"`. `resources/list` still lists the resource. Each
    /// scope must be an RFC 6749 scope token:
    /// [`ServerBuilder::resource`](crate::ServerBuilder::resource) then fails the build with
    /// [`BuildError::InvalidScope`] (a resource defined at run time is logged and kept, its
    /// scopes as given).
    #[must_use]
    pub fn required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let uri = &self.definition.uri;
        let mut error = None;
        let given: Vec<String> = scopes.into_iter().map(Into::into).collect();
        crate::server::auth::scopes::set(
            &mut self.required_scopes,
            &mut error,
            || format!("resource `{uri}`"),
            given.iter().cloned(),
        );
        if error.is_some() {
            // Fail closed: the scopes stay required as given.
            self.required_scopes = given;
            self.scope_error = error;
        }
        self
    }

    /// The listing `resources/list` shows.
    pub fn definition(&self) -> &Resource {
        &self.definition
    }
}

/// A registered resource template: its listing, parsed template and read handler.
#[derive(Clone)]
pub struct ResourceTemplateDef {
    pub(crate) definition: ResourceTemplate,
    pub(crate) template: Option<UriTemplate>,
    pub(crate) handler: ReadHandler,
    /// Scopes a read of a matching uri needs on a bearer-protected endpoint.
    pub(crate) required_scopes: Vec<String>,
    /// An invalid scope given to `required_scopes`, reported by `prepare`.
    scope_error: Option<BuildError>,
}

impl fmt::Debug for ResourceTemplateDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceTemplateDef")
            .field("uri_template", &self.definition.uri_template)
            .finish()
    }
}

/// A resource template with its read handler; the handler sees the matched variables through
/// the [`UriVars`](crate::UriVars) extractor.
pub fn resource_template<H, M>(definition: ResourceTemplate, handler: H) -> ResourceTemplateDef
where
    H: Handler<M>,
    H::Output: IntoResourceOutput,
    M: 'static,
{
    ResourceTemplateDef {
        definition,
        template: None,
        handler: read_handler(handler),
        required_scopes: Vec::new(),
        scope_error: None,
    }
}

impl ResourceTemplateDef {
    /// Scopes a read (or subscription) of a uri this template matches, or a completion of its
    /// variables, needs on an endpoint protected by
    /// [`bearer_auth`](crate::transport::http::McpHttp::bearer_auth), beyond the server's
    /// [`required_scopes`](crate::ServerBuilder::required_scopes). A listed resource's own
    /// scopes win over a template's. Each scope must be an RFC 6749 scope token: registering
    /// fails with [`BuildError::InvalidScope`] otherwise.
    #[must_use]
    pub fn required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let template = &self.definition.uri_template;
        crate::server::auth::scopes::set(
            &mut self.required_scopes,
            &mut self.scope_error,
            || format!("resource template `{template}`"),
            scopes,
        );
        self
    }

    /// The listing `resources/templates/list` shows.
    pub fn definition(&self) -> &ResourceTemplate {
        &self.definition
    }

    pub(crate) fn prepare(mut self) -> Result<Self, BuildError> {
        if let Some(err) = self.scope_error.take() {
            return Err(err);
        }
        self.template = Some(UriTemplate::parse(&self.definition.uri_template)?);
        Ok(self)
    }

    pub(crate) fn matches(&self, uri: &str) -> Option<std::collections::BTreeMap<String, String>> {
        self.template.as_ref()?.matches(uri)
    }
}

/// Builds the `resources/read` result for `uri` from a handler's output.
pub(crate) fn into_read_result(
    output: ResourceOutput,
    uri: &str,
    mime_type: Option<&str>,
) -> ReadResourceResult {
    use base64::Engine as _;
    let contents = match output {
        ResourceOutput::Result(result) => return result,
        ResourceOutput::Contents(contents) => contents,
        ResourceOutput::Text(text) => vec![ResourceContents::text(
            uri,
            mime_type.map(str::to_owned),
            text,
        )],
        ResourceOutput::Blob(bytes) => {
            let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
            vec![ResourceContents::blob(
                uri,
                mime_type.map(str::to_owned),
                encoded,
            )]
        }
    };
    ReadResourceResult {
        contents,
        meta: None,
    }
}
