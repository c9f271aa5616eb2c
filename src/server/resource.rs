//! Resources and resource templates: a static list, each with an optional read handler, plus
//! templates (RFC 6570) whose handlers see the matched variables through [`UriVars`]. Each is
//! written as a closure ([`ResourceDef::new`], [`ResourceTemplateDef::new`]) or as a type
//! implementing [`ResourceHandler`] or [`ResourceTemplateHandler`].
//!
//! `resources/read` tries the static resources first, then each template in registration
//! order, then the server-wide fallback read handler; an unknown uri is `-32002` with
//! `data.uri`. Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/resources>

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use crate::error::{BuildError, McpError};
use crate::protocol::{
    Annotations, Icon, Meta, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use crate::server::context::RequestContext;
use crate::server::handler::{
    Completers, ErasedHandler, Handler, StateNeed, UriVars, complete_method, erase,
};
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
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a resource's contents",
    label = "the read handler's future yields this",
    note = "a read handler returns `String`, `&'static str`, `Vec<u8>` (a blob), `ResourceContents`, `Vec<ResourceContents>`, `ReadResourceResult`, `ResourceOutput`, or `Result` of one of these with an error convertible into `McpError`"
)]
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

/// Lists the resources a template stands for ([`ResourceTemplateDef::list`]).
pub(crate) type Lister = ErasedHandler<Vec<Resource>>;

/// Erases a read handler closure.
pub(crate) fn read_handler<H, M>(handler: H) -> ReadHandler
where
    H: Handler<M>,
    H::Output: IntoResourceOutput,
    M: 'static,
{
    erase(handler, IntoResourceOutput::into_resource_output)
}

/// Sets the wire metadata both listings share (`resources/list` and
/// `resources/templates/list`).
macro_rules! listing_setters {
    ($what:literal) => {
        /// Sets the display title.
        #[must_use]
        pub fn title(mut self, title: impl Into<String>) -> Self {
            self.definition.title = Some(title.into());
            self
        }

        #[doc = concat!("Sets what ", $what, " represent(s).")]
        #[must_use]
        pub fn description(mut self, description: impl Into<String>) -> Self {
            self.definition.description = Some(description.into());
            self
        }

        #[doc = concat!("Sets the MIME type of ", $what, " (also the one a text or blob output is sent with).")]
        #[must_use]
        pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
            self.definition.mime_type = Some(mime_type.into());
            self
        }

        /// Sets the display hints.
        #[must_use]
        pub fn annotations(mut self, annotations: Annotations) -> Self {
            self.definition.annotations = Some(annotations);
            self
        }

        /// Sets the icons.
        #[must_use]
        pub fn icons(mut self, icons: Vec<Icon>) -> Self {
            self.definition.icons = Some(icons);
            self
        }

        /// Sets the listing's `_meta`.
        #[must_use]
        pub fn meta(mut self, meta: Meta) -> Self {
            self.definition.meta = Some(meta);
            self
        }
    };
}

/// A resource written as a type: its uri, name and read. Its value is registered as it is,
/// like a [`ResourceDef`] (`.resource(Readme)`); [`ResourceDef::from`] turns it into one, to
/// set what the trait does not say (size, icons, scopes, ...).
///
/// ```
/// use actix_mcp::{RequestContext, ResourceHandler, Server};
///
/// struct Readme;
///
/// impl ResourceHandler for Readme {
///     type Output = &'static str;
///     fn uri(&self) -> String { "file:///readme.txt".into() }
///     fn name(&self) -> String { "readme".into() }
///     fn mime_type(&self) -> Option<String> { Some("text/plain".into()) }
///     async fn read(&self, _cx: RequestContext) -> &'static str {
///         "What this server is"
///     }
/// }
///
/// let server = Server::builder("docs", "1.0.0").resource(Readme).build();
/// assert!(server.is_ok());
/// ```
pub trait ResourceHandler: Send + Sync + 'static {
    /// What a read returns.
    type Output: IntoResourceOutput;

    /// The resource's uri (unique on the server).
    fn uri(&self) -> String;

    /// The resource's programmatic name.
    fn name(&self) -> String;

    /// A display title (see [`ResourceDef::title`]).
    fn title(&self) -> Option<String> {
        None
    }

    /// What the resource represents (see [`ResourceDef::description`]).
    fn description(&self) -> Option<String> {
        None
    }

    /// The resource's MIME type (see [`ResourceDef::mime_type`]).
    fn mime_type(&self) -> Option<String> {
        None
    }

    /// Reads the resource.
    fn read(&self, cx: RequestContext) -> impl Future<Output = Self::Output> + Send;
}

/// A resource template written as a type: its uri template, name and read, which gets the
/// variables the template matched. Registered as it is (`.resource_template(Item)`), or through
/// [`ResourceTemplateDef::from`] to set more.
///
/// ```
/// use actix_mcp::{RequestContext, ResourceTemplateHandler, Server, UriVars};
///
/// struct Item;
///
/// impl ResourceTemplateHandler for Item {
///     type Output = String;
///     fn uri_template(&self) -> String { "test://item/{id}".into() }
///     fn name(&self) -> String { "item".into() }
///     async fn read(&self, vars: UriVars, _cx: RequestContext) -> String {
///         format!("item {}", vars.get("id").unwrap_or_default())
///     }
/// }
///
/// let server = Server::builder("items", "1.0.0").resource_template(Item).build();
/// assert!(server.is_ok());
/// ```
pub trait ResourceTemplateHandler: Send + Sync + 'static {
    /// What a read returns.
    type Output: IntoResourceOutput;

    /// The RFC 6570 uri template (unique on the server).
    fn uri_template(&self) -> String;

    /// The template's programmatic name.
    fn name(&self) -> String;

    /// A display title (see [`ResourceTemplateDef::title`]).
    fn title(&self) -> Option<String> {
        None
    }

    /// What the matching resources represent (see [`ResourceTemplateDef::description`]).
    fn description(&self) -> Option<String> {
        None
    }

    /// The MIME type of every matching resource (see [`ResourceTemplateDef::mime_type`]).
    fn mime_type(&self) -> Option<String> {
        None
    }

    /// Reads the resource at a matching uri; `vars` are the variables the template matched.
    fn read(&self, vars: UriVars, cx: RequestContext) -> impl Future<Output = Self::Output> + Send;
}

/// A resource as the server serves it: its wire definition (the
/// [`protocol::Resource`](Resource) that `resources/list` shows) plus, optionally, its own read
/// handler and its scopes.
///
/// Made from a closure with [`ResourceDef::new`], from a [`ResourceHandler`] impl with
/// [`ResourceDef::from`], or from a bare [`protocol::Resource`](Resource) (listed, read by the
/// server's fallback [`read_resource`](crate::ServerBuilder::read_resource) handler); the wire
/// metadata is set with the builder methods ([`title`](Self::title),
/// [`description`](Self::description), [`mime_type`](Self::mime_type), ...). Registered with
/// [`ServerBuilder::resource`](crate::ServerBuilder::resource) or
/// [`Server::define_resource`](crate::Server::define_resource), which check its scopes.
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) definition: Resource,
    pub(crate) handler: Option<ReadHandler>,
    /// Scopes a read needs on a bearer-protected endpoint (beyond the server's base set).
    pub(crate) required_scopes: Vec<String>,
    /// An invalid scope given to `required_scopes`, reported when it is registered.
    pub(crate) scope_error: Option<BuildError>,
    /// The application state the handler's extractors read, checked at `build`.
    pub(crate) state_needs: Vec<StateNeed>,
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
///
/// **Deprecated:** [`ResourceDef::new`] takes the uri, the name and the closure; the rest of
/// the listing is set by builder methods.
#[deprecated(
    since = "0.2.0",
    note = "use `ResourceDef::new(uri, name, handler)` and its `.description()`, `.mime_type()`, ..."
)]
pub fn resource<H, M>(definition: Resource, handler: H) -> ResourceDef
where
    H: Handler<M>,
    H::Output: IntoResourceOutput,
    M: 'static,
{
    ResourceDef {
        handler: Some(read_handler(handler)),
        ..ResourceDef::from(definition)
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
            state_needs: Vec::new(),
        }
    }
}

impl<R: ResourceHandler> From<R> for ResourceDef {
    /// The resource a [`ResourceHandler`] impl defines, with the metadata its methods give.
    fn from(resource_impl: R) -> Self {
        let resource_impl = Arc::new(resource_impl);
        let mut definition = Resource::new(resource_impl.uri(), resource_impl.name());
        definition.title = resource_impl.title();
        definition.description = resource_impl.description();
        definition.mime_type = resource_impl.mime_type();
        let handler = move |cx: RequestContext| {
            let resource_impl = resource_impl.clone();
            async move { resource_impl.read(cx).await }
        };
        Self {
            handler: Some(read_handler(handler)),
            ..Self::from(definition)
        }
    }
}

impl ResourceDef {
    /// The resource at `uri` named `name`, read by a closure with extractors
    /// ([`ResourceUri`](crate::ResourceUri), [`RequestContext`], [`State`](crate::State), ...).
    ///
    /// ```
    /// use actix_mcp::{RequestContext, ResourceDef};
    ///
    /// let readme = ResourceDef::new("file:///readme.txt", "readme", |_cx: RequestContext| async {
    ///     "What this server is"
    /// })
    /// .description("What this server is")
    /// .mime_type("text/plain");
    /// assert_eq!(readme.definition().mime_type.as_deref(), Some("text/plain"));
    /// ```
    pub fn new<H, M>(uri: impl Into<String>, name: impl Into<String>, handler: H) -> Self
    where
        H: Handler<M>,
        H::Output: IntoResourceOutput,
        M: 'static,
    {
        Self {
            handler: Some(read_handler(handler)),
            state_needs: H::required_state(),
            ..Self::from(Resource::new(uri, name))
        }
    }

    listing_setters!("the resource");

    /// Sets the size of the raw content in bytes.
    #[must_use]
    pub fn size(mut self, size: u64) -> Self {
        self.definition.size = Some(size);
        self
    }

    /// Scopes a `resources/read` (or subscription) of this resource needs on an endpoint
    /// protected by [`bearer_auth`](crate::transport::http::McpHttp::bearer_auth), beyond the
    /// server's [`required_scopes`](crate::ServerBuilder::required_scopes): without one, HTTP
    /// 403 with `error="insufficient_scope"`. `resources/list` still lists the resource. Each
    /// scope must be an RFC 6749 scope token: registering
    /// ([`ServerBuilder::resource`](crate::ServerBuilder::resource),
    /// [`Server::define_resource`](crate::Server::define_resource)) fails with
    /// [`BuildError::InvalidScope`] otherwise.
    #[must_use]
    pub fn required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let uri = &self.definition.uri;
        crate::server::auth::scope_token::set(
            &mut self.required_scopes,
            &mut self.scope_error,
            || format!("resource `{uri}`"),
            scopes,
        );
        self
    }

    /// The listing `resources/list` shows.
    pub fn definition(&self) -> &Resource {
        &self.definition
    }

    /// Checks what registering refuses (an invalid scope).
    pub(crate) fn prepare(mut self) -> Result<Self, BuildError> {
        match self.scope_error.take() {
            Some(err) => Err(err),
            None => Ok(self),
        }
    }
}

/// A resource template as the server serves it: its wire definition (the
/// [`protocol::ResourceTemplate`](ResourceTemplate) that `resources/templates/list` shows), its
/// parsed template, its read handler and its scopes.
///
/// Made from a closure with [`ResourceTemplateDef::new`] or from a [`ResourceTemplateHandler`]
/// impl with [`ResourceTemplateDef::from`]; the wire metadata is set with the builder methods
/// ([`title`](Self::title), [`description`](Self::description), [`mime_type`](Self::mime_type),
/// ...). Registered with
/// [`ServerBuilder::resource_template`](crate::ServerBuilder::resource_template), which checks
/// it (template syntax, scopes).
#[derive(Clone)]
pub struct ResourceTemplateDef {
    pub(crate) definition: ResourceTemplate,
    pub(crate) template: Option<UriTemplate>,
    pub(crate) handler: ReadHandler,
    /// Scopes a read of a matching uri needs on a bearer-protected endpoint.
    pub(crate) required_scopes: Vec<String>,
    /// An invalid scope given to `required_scopes`, reported by `prepare`.
    scope_error: Option<BuildError>,
    /// The application state the handler's extractors read, checked at `build`.
    pub(crate) state_needs: Vec<StateNeed>,
    /// Completers by variable name.
    pub(crate) completers: Completers,
    /// Lists the resources the template stands for, in `resources/list`.
    pub(crate) lister: Option<Lister>,
}

impl fmt::Debug for ResourceTemplateDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceTemplateDef")
            .field("uri_template", &self.definition.uri_template)
            .field("lists", &self.lister.is_some())
            .finish()
    }
}

/// A resource template with its read handler.
///
/// **Deprecated:** [`ResourceTemplateDef::new`] takes the uri template, the name and the
/// closure; the rest of the listing is set by builder methods.
#[deprecated(
    since = "0.2.0",
    note = "use `ResourceTemplateDef::new(uri_template, name, handler)` and its `.description()`, `.mime_type()`, ..."
)]
pub fn resource_template<H, M>(definition: ResourceTemplate, handler: H) -> ResourceTemplateDef
where
    H: Handler<M>,
    H::Output: IntoResourceOutput,
    M: 'static,
{
    ResourceTemplateDef::with_definition(definition, read_handler(handler))
}

impl<T: ResourceTemplateHandler> From<T> for ResourceTemplateDef {
    /// The template a [`ResourceTemplateHandler`] impl defines, with the metadata its methods
    /// give.
    fn from(template_impl: T) -> Self {
        let template_impl = Arc::new(template_impl);
        let mut definition =
            ResourceTemplate::new(template_impl.uri_template(), template_impl.name());
        definition.title = template_impl.title();
        definition.description = template_impl.description();
        definition.mime_type = template_impl.mime_type();
        let handler = move |vars: UriVars, cx: RequestContext| {
            let template_impl = template_impl.clone();
            async move { template_impl.read(vars, cx).await }
        };
        Self::with_definition(definition, read_handler(handler))
    }
}

impl ResourceTemplateDef {
    /// The template `uri_template` (RFC 6570) named `name`, read by a closure with extractors;
    /// the [`UriVars`] extractor gives the variables the template matched.
    ///
    /// ```
    /// use actix_mcp::{ResourceTemplateDef, UriVars};
    ///
    /// let item = ResourceTemplateDef::new("test://item/{id}", "item", |vars: UriVars| async move {
    ///     format!("item {}", vars.get("id").unwrap_or_default())
    /// })
    /// .mime_type("text/plain");
    /// assert_eq!(item.definition().uri_template, "test://item/{id}");
    /// ```
    pub fn new<H, M>(uri_template: impl Into<String>, name: impl Into<String>, handler: H) -> Self
    where
        H: Handler<M>,
        H::Output: IntoResourceOutput,
        M: 'static,
    {
        let mut def = Self::with_definition(
            ResourceTemplate::new(uri_template, name),
            read_handler(handler),
        );
        def.state_needs = H::required_state();
        def
    }

    fn with_definition(definition: ResourceTemplate, handler: ReadHandler) -> Self {
        Self {
            definition,
            template: None,
            handler,
            required_scopes: Vec::new(),
            scope_error: None,
            state_needs: Vec::new(),
            completers: Completers::new(),
            lister: None,
        }
    }

    complete_method! {
        /// Completes the variable `variable` (`completion/complete` naming this template).
        /// `completer` is a handler like any other: its extractors are
        /// [`CompleteRequestParams`](crate::protocol::CompleteRequestParams) (the value typed
        /// so far, the other variables' values), [`State<T>`](crate::State),
        /// [`RequestContext`](crate::RequestContext) or your own; it returns the suggestions
        /// (`Vec<String>`, or a `Result` of them), at most 100 of which are sent. Variables
        /// without a completer of their own are answered by the server's
        /// [`completion`](crate::ServerBuilder::completion) handler.
        variable
    }

    /// Lists the resources this template stands for (the TypeScript SDK's `list` callback):
    /// `resources/list` shows them after the server's own resources, and after those of the
    /// templates registered before this one. `lister` is a handler (extractors such as
    /// [`State<T>`](crate::State) and [`RequestContext`]) and is run
    /// by every `resources/list` whose page reaches this template's resources (the pages are
    /// cut from the whole list, so it should list the same resources, in the same order, from
    /// one page to the next). A listed resource without a MIME type gets the template's.
    ///
    /// The listed uris should match the template: a read of one is routed as any read is, so
    /// it goes to this template's handler unless a resource of the server's own, or a template
    /// registered before this one, matches it first.
    ///
    /// An error of `lister` (or its panic, as an internal error) is the answer to that
    /// `resources/list`: the page is not served without the template's resources.
    ///
    /// On an endpoint protected by
    /// [`bearer_auth`](crate::transport::http::McpHttp::bearer_auth), `lister` is not run for a
    /// caller whose token lacks one of this template's
    /// [`required_scopes`](Self::required_scopes), and each listed resource is shown only to a
    /// caller whose scopes cover a read of it, as a resource update reaches only such a
    /// subscriber. (The server's own resources are listed to every caller.)
    ///
    /// ```
    /// use actix_mcp::protocol::Resource;
    /// use actix_mcp::{ResourceTemplateDef, UriVars};
    ///
    /// let item = ResourceTemplateDef::new("test://item/{id}", "item", |vars: UriVars| async move {
    ///     format!("item {}", vars.get("id").unwrap_or_default())
    /// })
    /// .mime_type("text/plain")
    /// .list(|| async {
    ///     let ids = [1, 2, 3];
    ///     Ok(ids
    ///         .iter()
    ///         .map(|id| Resource::new(format!("test://item/{id}"), format!("item {id}")))
    ///         .collect())
    /// });
    /// # let _ = item;
    /// ```
    #[must_use]
    pub fn list<H, M>(mut self, lister: H) -> Self
    where
        H: Handler<M, Output = Result<Vec<Resource>, McpError>>,
        M: 'static,
    {
        self.state_needs.extend(H::required_state());
        self.lister = Some(erase(lister, |listed| listed));
        self
    }

    listing_setters!("the matching resources");

    /// Scopes a read (or subscription) of a uri this template matches, or a completion of its
    /// variables, needs on an endpoint protected by
    /// [`bearer_auth`](crate::transport::http::McpHttp::bearer_auth), beyond the server's
    /// [`required_scopes`](crate::ServerBuilder::required_scopes). A listed resource's own
    /// scopes win over a template's. The resources its [`list`](Self::list) callback gives are
    /// listed only to a caller holding them. Each scope must be an RFC 6749 scope token:
    /// registering fails with [`BuildError::InvalidScope`] otherwise.
    #[must_use]
    pub fn required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let template = &self.definition.uri_template;
        crate::server::auth::scope_token::set(
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
