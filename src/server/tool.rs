//! Tools, written in one of two ways: a closure with extractors ([`ToolDef::new`]) or a type
//! implementing [`ToolHandler`] (typed arguments and optional typed output); either is
//! registered on the builder ([`ServerBuilder::tool`](crate::ServerBuilder::tool)) or at run
//! time ([`Server::define_tool`]).
//!
//! Every tool becomes a [`ToolDef`]: a tool as the server serves it, its wire definition (the
//! [`protocol::Tool`](crate::protocol::Tool) that `tools/list` shows) plus its handler and
//! settings. Arguments are validated against the input schema before the handler runs; a
//! failure is an `isError` result naming what was wrong, so the model can correct itself (spec
//! 2025-11-25, SEP-1303).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/tools>
//!
//! [`Server::define_tool`]: crate::Server::define_tool

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{BuildError, McpError};
use crate::protocol::{
    CallToolResult, ContentBlock, Icon, JsonObject, Meta, TaskSupport, Tool, ToolAnnotations,
};
use crate::server::context::RequestContext;
use crate::server::handler::{
    ErasedHandler, Handler, HandlerError, HandlerParts, Params, StateNeed, erase, schema_of,
};

/// Converts a tool handler's output into a `tools/call` result.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's result",
    label = "the tool's future yields this",
    note = "a tool returns `String`, `&'static str`, `ContentBlock`, `Vec<ContentBlock>`, `CallToolResult`, `Json<T>` (with `T: Serialize + JsonSchema`, for structured content), or `Result` of one of these with an error convertible into `McpError`"
)]
pub trait IntoCallToolResult: Send + 'static {
    /// The conversion; an `Err` is reported as described on [`McpError`].
    ///
    /// # Errors
    /// When the output is itself an error.
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError>;

    /// The output schema this output type declares (for typed structured output).
    fn output_schema() -> Option<JsonObject> {
        None
    }
}

impl IntoCallToolResult for CallToolResult {
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        Ok(self)
    }
}

/// A tool may answer `input_required` (see [`McpError::input_required`]).
impl IntoCallToolResult for crate::protocol::InputRequiredResult {
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        Err(McpError::input_required(self))
    }
}

impl IntoCallToolResult for String {
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoCallToolResult for &'static str {
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoCallToolResult for ContentBlock {
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::success(vec![self]))
    }
}

impl IntoCallToolResult for Vec<ContentBlock> {
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::success(self))
    }
}

impl<T: IntoCallToolResult, E: Into<McpError> + Send + 'static> IntoCallToolResult
    for Result<T, E>
{
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        self.map_err(Into::into)
            .and_then(IntoCallToolResult::into_call_tool_result)
    }

    fn output_schema() -> Option<JsonObject> {
        T::output_schema()
    }
}

/// Typed structured output: serialised into `structuredContent` (and, for older clients, as
/// JSON text), with `T`'s JSON schema as the tool's `outputSchema`.
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema + Send + 'static> IntoCallToolResult for Json<T> {
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        let value = serde_json::to_value(&self.0)?;
        let text = value.to_string();
        let mut result = CallToolResult::text(text);
        result.structured_content = Some(value);
        Ok(result)
    }

    fn output_schema() -> Option<JsonObject> {
        Some(schema_of::<T>())
    }
}

/// A tool written as a type (with state, if it needs any): typed arguments, typed output. Its
/// value is registered as it is, like a [`ToolDef`] (`.tool(Add)`,
/// [`Server::define_tool(Add)`](crate::Server::define_tool)); [`ToolDef::from`] turns it into
/// one, to set what the trait does not say (icons, a time limit, scopes, ...).
///
/// ```
/// use std::time::Duration;
///
/// use actix_mcp::{RequestContext, Server, ToolDef, ToolHandler};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct AddArgs { a: f64, b: f64 }
///
/// struct Add;
///
/// impl ToolHandler for Add {
///     type Args = AddArgs;
///     type Output = String;
///     fn name(&self) -> String { "add".into() }
///     fn description(&self) -> Option<String> { Some("Adds two numbers".into()) }
///     async fn call(&self, args: AddArgs, _cx: RequestContext) -> String {
///         (args.a + args.b).to_string()
///     }
/// }
///
/// let server = Server::builder("calc", "1.0.0")
///     .tool(ToolDef::from(Add).timeout(Duration::from_secs(5))) // or just `.tool(Add)`
///     .build();
/// assert!(server.is_ok());
/// ```
pub trait ToolHandler: Send + Sync + 'static {
    /// The arguments; their JSON schema is the tool's input schema.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// What the tool returns; [`Json<T>`] declares an output schema.
    type Output: IntoCallToolResult;

    /// The tool's name (unique on the server).
    fn name(&self) -> String;

    /// A display title (see [`ToolDef::title`]).
    fn title(&self) -> Option<String> {
        None
    }

    /// A human-readable description for the model (see [`ToolDef::description`]).
    fn description(&self) -> Option<String> {
        None
    }

    /// Behaviour hints (see [`ToolDef::annotations`]).
    fn annotations(&self) -> Option<ToolAnnotations> {
        None
    }

    /// Runs the tool.
    fn call(
        &self,
        args: Self::Args,
        cx: RequestContext,
    ) -> impl Future<Output = Self::Output> + Send;
}

/// A tool's type-erased handler.
pub(crate) type CallHandler = ErasedHandler<CallToolResult>;

/// A tool as the server serves it: its wire definition (the [`protocol::Tool`](Tool) that
/// `tools/list` shows) plus its handler and settings (time limit, scopes, task support).
///
/// Made from a closure with [`ToolDef::new`] (or [`ToolDef::blocking`]), or from a
/// [`ToolHandler`] impl with [`ToolDef::from`]; the wire metadata is set with the builder
/// methods ([`title`](Self::title), [`description`](Self::description), [`icons`](Self::icons),
/// ...). Registered with [`ServerBuilder::tool`](crate::ServerBuilder::tool) or
/// [`Server::define_tool`](crate::Server::define_tool), which check it (name, schemas, scopes).
#[derive(Clone)]
pub struct ToolDef {
    pub(crate) definition: Tool,
    pub(crate) handler: CallHandler,
    pub(crate) timeout: Option<Duration>,
    #[cfg(feature = "validate")]
    pub(crate) validator: Option<Arc<jsonschema::Validator>>,
    /// The output schema's validator: `structuredContent` is checked against it.
    #[cfg(feature = "validate")]
    pub(crate) output_validator: Option<Arc<jsonschema::Validator>>,
    /// The arguments mirrored in `Mcp-Param-*` headers (`x-mcp-header`), from `prepare`.
    pub(crate) param_headers: Vec<ParamHeader>,
    /// Client capabilities a call needs (`-32021` without them).
    pub(crate) required_capabilities: Option<Value>,
    /// Whether a call may become a task (Tasks extension).
    pub(crate) task_support: TaskSupport,
    /// How long a task of this tool is kept (bounded by the server's maximum).
    pub(crate) task_ttl: Option<Duration>,
    /// Scopes a call needs on a bearer-protected endpoint (beyond the server's base set).
    pub(crate) required_scopes: Vec<String>,
    /// An invalid scope given to `required_scopes`, reported by `prepare`.
    scope_error: Option<BuildError>,
    /// The application state the handler's extractors read, checked at `build`.
    pub(crate) state_needs: Vec<StateNeed>,
}

/// An argument a 2026 HTTP client mirrors in an `Mcp-Param-{header}` header: an input-schema
/// property annotated `"x-mcp-header": "{header}"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    /// The header name's suffix, as annotated.
    pub(crate) header: String,
    /// The property's path from the arguments' root (through `properties` only).
    pub(crate) path: Vec<String>,
    /// The path, dotted (for messages).
    pub(crate) property: String,
}

impl ParamHeader {
    /// The argument's value in `arguments`.
    #[cfg(feature = "http")]
    pub(crate) fn value<'a>(&self, arguments: Option<&'a Value>) -> Option<&'a Value> {
        self.path
            .iter()
            .try_fold(arguments?, |value, key| value.get(key))
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Collects the `x-mcp-header` annotations of `schema`'s properties (recursively through
/// `properties`), checking the spec's rules: a non-empty token, on a string, integer or
/// boolean property, unique case-insensitively.
pub(crate) fn param_headers(schema: &JsonObject) -> Result<Vec<ParamHeader>, String> {
    fn walk(
        schema: &JsonObject,
        path: &mut Vec<String>,
        out: &mut Vec<ParamHeader>,
    ) -> Result<(), String> {
        let Some(Value::Object(properties)) = schema.get("properties") else {
            return Ok(());
        };
        for (name, property) in properties {
            let Value::Object(property) = property else {
                continue;
            };
            path.push(name.clone());
            if let Some(header) = property.get("x-mcp-header") {
                let dotted = path.join(".");
                let Value::String(header) = header else {
                    return Err(format!("x-mcp-header of `{dotted}` must be a string"));
                };
                if header.is_empty() || !header.chars().all(is_tchar) {
                    return Err(format!(
                        "x-mcp-header {header:?} of `{dotted}` must be a non-empty HTTP token"
                    ));
                }
                let kind = property.get("type").and_then(Value::as_str);
                if !matches!(kind, Some("string" | "integer" | "boolean")) {
                    return Err(format!(
                        "x-mcp-header on `{dotted}` needs a string, integer or boolean property"
                    ));
                }
                if out.iter().any(|p| p.header.eq_ignore_ascii_case(header)) {
                    return Err(format!("x-mcp-header {header:?} is used twice"));
                }
                out.push(ParamHeader {
                    header: header.clone(),
                    path: path.clone(),
                    property: dotted,
                });
            }
            walk(property, path, out)?;
            path.pop();
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), &mut out)?;
    Ok(out)
}

impl fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.definition.name)
            .field("timeout", &self.timeout)
            .finish()
    }
}

fn empty_input_schema() -> JsonObject {
    JsonObject::from_iter([
        ("type".to_owned(), Value::String("object".into())),
        ("additionalProperties".to_owned(), Value::Bool(false)),
    ])
}

/// A tool from a closure with extractors.
///
/// **Deprecated:** [`ToolDef::new`] takes the name and the closure; the description is set
/// like the rest of the wire metadata.
#[deprecated(
    since = "0.2.0",
    note = "use `ToolDef::new(name, handler).description(description)`"
)]
pub fn tool<H, M>(name: impl Into<String>, description: impl Into<String>, handler: H) -> ToolDef
where
    H: Handler<M>,
    H::Output: IntoCallToolResult,
    M: 'static,
{
    ToolDef::new(name, handler).description(description)
}

/// A blocking tool: `f` runs on the blocking thread pool.
///
/// **Deprecated:** [`ToolDef::blocking`] takes the name and the closure; the description is set
/// like the rest of the wire metadata.
#[deprecated(
    since = "0.2.0",
    note = "use `ToolDef::blocking(name, f).description(description)`"
)]
pub fn blocking_tool<A, O, F>(
    name: impl Into<String>,
    description: impl Into<String>,
    f: F,
) -> ToolDef
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    O: IntoCallToolResult,
    F: Fn(A, RequestContext) -> O + Clone + Send + Sync + 'static,
{
    ToolDef::blocking(name, f).description(description)
}

impl<T: ToolHandler> From<T> for ToolDef {
    /// The tool a [`ToolHandler`] impl defines, with the metadata its methods give.
    fn from(tool_impl: T) -> Self {
        let tool_impl = Arc::new(tool_impl);
        let name = tool_impl.name();
        let description = tool_impl.description();
        let title = tool_impl.title();
        let annotations = tool_impl.annotations();
        let handler = move |Params(args): Params<T::Args>, cx: RequestContext| {
            let tool_impl = tool_impl.clone();
            async move { tool_impl.call(args, cx).await }
        };
        let mut def = ToolDef::new(name, handler);
        def.definition.description = description;
        def.definition.title = title;
        def.definition.annotations = annotations;
        def
    }
}

impl ToolDef {
    /// A tool named `name` (unique on the server; 1 to 128 characters of `A-Z a-z 0-9 _ - . /`)
    /// run by a closure with extractors. Its input schema is the one its extractors impose
    /// ([`Params<T>`]: `T`'s JSON schema; none: an object without properties), its output
    /// schema the one its output declares ([`Json<T>`]).
    ///
    /// ```
    /// use actix_mcp::{Params, RequestContext, ToolDef};
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct EchoArgs { message: String }
    ///
    /// let echo = ToolDef::new("echo", |Params(args): Params<EchoArgs>, _cx: RequestContext| async move {
    ///     args.message
    /// })
    /// .description("Echoes its input");
    /// assert_eq!(echo.definition().description.as_deref(), Some("Echoes its input"));
    /// ```
    pub fn new<H, M>(name: impl Into<String>, handler: H) -> Self
    where
        H: Handler<M>,
        H::Output: IntoCallToolResult,
        M: 'static,
    {
        let input = H::input_schema().unwrap_or_else(empty_input_schema);
        let mut definition = Tool::new(name, input);
        definition.output_schema = <H::Output as IntoCallToolResult>::output_schema();
        Self {
            definition,
            handler: erase(handler, IntoCallToolResult::into_call_tool_result),
            timeout: None,
            #[cfg(feature = "validate")]
            validator: None,
            #[cfg(feature = "validate")]
            output_validator: None,
            param_headers: Vec::new(),
            required_capabilities: None,
            task_support: TaskSupport::Forbidden,
            task_ttl: None,
            required_scopes: Vec::new(),
            scope_error: None,
            state_needs: H::required_state(),
        }
    }

    /// A tool whose closure blocks: `f` runs on the blocking thread pool (never on an HTTP
    /// worker), with typed arguments.
    pub fn blocking<A, O, F>(name: impl Into<String>, f: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        O: IntoCallToolResult,
        F: Fn(A, RequestContext) -> O + Clone + Send + Sync + 'static,
    {
        // The call is supervised once, as any tool's (time limit, cancellation, panics): its
        // future only waits for the closure on the blocking pool, and a panic there unwinds
        // into it. The closure cannot be stopped: it keeps the request's holds (admission
        // slots, its share of the byte budget) until it returns.
        let handler = move |Params(args): Params<A>, cx: RequestContext| {
            let f = f.clone();
            let holds = cx.scope().share_holds();
            async move {
                let joined = tokio::task::spawn_blocking(move || {
                    let _holds = holds;
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        f(args, cx).into_call_tool_result()
                    }))
                })
                .await;
                match joined {
                    Ok(Ok(result)) => result,
                    Ok(Err(payload)) => std::panic::resume_unwind(payload),
                    Err(err) => Err(McpError::internal(format!(
                        "the blocking tool did not run: {err}"
                    ))),
                }
            }
        };
        let mut def = Self::new(name, handler);
        def.definition.output_schema = O::output_schema();
        def
    }

    /// Sets the display title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.definition.title = Some(title.into());
        self
    }

    /// Sets the description the model reads to decide when to call the tool.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.definition.description = Some(description.into());
        self
    }

    /// Sets the behaviour hints.
    #[must_use]
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.definition.annotations = Some(annotations);
        self
    }

    /// Sets the icons.
    #[must_use]
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.definition.icons = Some(icons);
        self
    }

    /// Replaces the input schema (it must have an object root). Arguments are validated
    /// against it.
    #[must_use]
    pub fn input_schema(mut self, schema: JsonObject) -> Self {
        self.definition.input_schema = schema;
        self
    }

    /// Sets the output schema; the tool must then return conforming `structuredContent`.
    #[must_use]
    pub fn output_schema(mut self, schema: JsonObject) -> Self {
        self.definition.output_schema = Some(schema);
        self
    }

    /// Sets the tool's `_meta`.
    #[must_use]
    pub fn meta(mut self, meta: Meta) -> Self {
        self.definition.meta = Some(meta);
        self
    }

    /// Cancels an invocation that runs longer than `timeout` and answers `isError`. Overrides
    /// the server-wide tool timeout.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Declares client capabilities every call needs, as a `ClientCapabilities` fragment
    /// (e.g. `{"sampling": {}}`): a call whose client did not declare them is refused with
    /// `-32021` (`data.requiredCapabilities`; HTTP 400 in 2026-07-28) before the tool runs.
    #[must_use]
    pub fn requires_client_capabilities(mut self, capabilities: Value) -> Self {
        self.required_capabilities = Some(capabilities);
        self
    }

    /// Whether a call of this tool may run as a task of the Tasks extension
    /// (`io.modelcontextprotocol/tasks`, protocol 2026-07-28; enabled with
    /// [`ServerBuilder::tasks`](crate::ServerBuilder::tasks)).
    ///
    /// - [`TaskSupport::Forbidden`] (the default): always answered inline.
    /// - [`TaskSupport::Optional`]: when the request declares the extension, a call the tool
    ///   does not finish at once becomes a task; without it, the call is answered inline.
    /// - [`TaskSupport::Required`]: every call that is not answered with `input_required` at
    ///   once is a task; a request without the extension is refused with `-32021`.
    ///
    /// Either way a tool answering `input_required` at once (before any work) is a
    /// multi-round-trip exchange, not a task: the task starts on the round that does the work.
    /// Inside a task, [`RequestContext::task_id`] names it, and `input_required` answers park
    /// the task until the client answers with `tasks/update`.
    ///
    /// This does not change `tools/list` (2025-11-25 sessions see no `execution` field).
    #[must_use]
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// How long a task of this tool is kept after its creation (`ttlMs`), instead of the
    /// server's [`TaskConfig::ttl`](crate::TaskConfig::ttl), at most its
    /// [`max_ttl`](crate::TaskConfig::max_ttl).
    #[must_use]
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.task_ttl = Some(ttl);
        self
    }

    /// Scopes a call of this tool needs on an endpoint protected by
    /// [`bearer_auth`](crate::transport::http::McpHttp::bearer_auth), beyond the server's
    /// [`required_scopes`](crate::ServerBuilder::required_scopes): a call whose token lacks one
    /// is answered HTTP 403 with `WWW-Authenticate: Bearer error="insufficient_scope",
    /// scope="…"` naming them all, and the tool does not run. `tools/list` still lists the tool
    /// (see [`auth`](crate::server::auth#scopes)). Each scope must be an RFC 6749 scope token
    /// (no spaces): registering the tool fails with [`BuildError::InvalidScope`] otherwise.
    /// Ignored over stdio and in process.
    #[must_use]
    pub fn required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let name = &self.definition.name;
        crate::server::auth::scope_token::set(
            &mut self.required_scopes,
            &mut self.scope_error,
            || format!("tool `{name}`"),
            scopes,
        );
        self
    }

    /// The scopes a call of this tool needs (see [`required_scopes`](Self::required_scopes)).
    pub fn scopes(&self) -> &[String] {
        &self.required_scopes
    }

    /// The definition `tools/list` shows.
    pub fn definition(&self) -> &Tool {
        &self.definition
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.definition.name
    }

    /// Checks the name and compiles the input schema's validator.
    pub(crate) fn prepare(mut self) -> Result<Self, BuildError> {
        validate_name(&self.definition.name)?;
        if let Some(err) = self.scope_error.take() {
            return Err(err);
        }
        if self
            .definition
            .input_schema
            .get("type")
            .and_then(Value::as_str)
            != Some("object")
        {
            return Err(BuildError::InvalidSchema {
                tool: self.definition.name.clone(),
                reason: "the input schema's root must have \"type\": \"object\"".into(),
            });
        }
        #[cfg(feature = "validate")]
        {
            let schema = Value::Object(self.definition.input_schema.clone());
            let validator =
                jsonschema::validator_for(&schema).map_err(|err| BuildError::InvalidSchema {
                    tool: self.definition.name.clone(),
                    reason: err.to_string(),
                })?;
            if let Some(output) = &self.definition.output_schema {
                let output =
                    jsonschema::validator_for(&Value::Object(output.clone())).map_err(|err| {
                        BuildError::InvalidSchema {
                            tool: self.definition.name.clone(),
                            reason: format!("the output schema: {err}"),
                        }
                    })?;
                self.output_validator = Some(Arc::new(output));
            }
            self.validator = Some(Arc::new(validator));
        }
        self.param_headers = param_headers(&self.definition.input_schema).map_err(|reason| {
            BuildError::InvalidSchema {
                tool: self.definition.name.clone(),
                reason,
            }
        })?;
        Ok(self)
    }

    /// Validates arguments against the input schema; `Err` lists what is wrong. Without the
    /// `validate` feature, arguments are checked only by their deserialization into the
    /// handler's types.
    #[cfg_attr(not(feature = "validate"), allow(clippy::unused_self))]
    pub(crate) fn validate(&self, arguments: &Value) -> Result<(), String> {
        #[cfg(feature = "validate")]
        if let Some(validator) = &self.validator {
            return problems(validator, arguments);
        }
        let _ = arguments;
        Ok(())
    }

    /// Validates a successful result's `structuredContent` against the output schema, when
    /// the tool declares one (the spec: the server MUST return conforming structured
    /// content); `Err` says what is wrong.
    /// Without the `validate` feature, only the presence of `structuredContent` is checked.
    pub(crate) fn validate_output(&self, result: &CallToolResult) -> Result<(), String> {
        if self.definition.output_schema.is_none() || result.is_error() {
            return Ok(());
        }
        match &result.structured_content {
            None => Err("it declares an output schema but returned no structuredContent".into()),
            #[cfg(feature = "validate")]
            Some(structured) => match &self.output_validator {
                Some(validator) => problems(validator, structured),
                None => Ok(()),
            },
            #[cfg(not(feature = "validate"))]
            Some(_) => Ok(()),
        }
    }

    pub(crate) fn invoke(
        &self,
        parts: HandlerParts,
    ) -> futures::future::BoxFuture<'static, Result<CallToolResult, HandlerError>> {
        (self.handler)(parts)
    }
}

/// What `validator` finds wrong with `instance` (at most five problems, with their paths).
#[cfg(feature = "validate")]
fn problems(validator: &jsonschema::Validator, instance: &Value) -> Result<(), String> {
    // The common case first: a valid instance costs no error collection.
    if validator.is_valid(instance) {
        return Ok(());
    }
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .take(5)
        .map(|err| {
            let path = err.instance_path().to_string();
            if path.is_empty() {
                err.to_string()
            } else {
                format!("{path}: {err}")
            }
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// Checks a tool or prompt name against the spec's rules: 1–128 characters of
/// `A-Z a-z 0-9 _ - . /`.
pub(crate) fn validate_name(name: &str) -> Result<(), BuildError> {
    let reason = if name.is_empty() {
        Some("names must not be empty")
    } else if name.len() > 128 {
        Some("names must be at most 128 characters")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'))
    {
        Some("names may only contain A-Z, a-z, 0-9, '_', '-', '.' and '/'")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(BuildError::InvalidName {
            name: name.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}
