//! What the fuzz targets share: the server they dispatch to, the runtime they run on, and
//! readers that hand out fuzz input in chunks.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CompleteResult, Completion, ElicitRequestParams, ElicitResult, ElicitationSchema, InputRequest,
    InputRequiredResult, TaskSupport,
};
use actix_mcp::schemars::JsonSchema;
use actix_mcp::{ServerBuilder, TaskConfig};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};

/// The `requestState` key of the fixture server.
pub const STATE_KEY: [u8; 32] = [7; 32];

/// How long one fuzz input may take before it counts as a hang.
pub const BOUND: Duration = Duration::from_secs(10);

/// Arguments of the `add` tool.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "actix_mcp::schemars")]
pub struct AddArgs {
    /// The first addend.
    pub a: f64,
    /// The second addend.
    pub b: f64,
}

/// Arguments of the `greet` prompt.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "actix_mcp::schemars")]
pub struct GreetArgs {
    /// Who to greet.
    pub name: String,
}

fn form(property: &str) -> ElicitRequestParams {
    let schema: ElicitationSchema = serde_json::from_value(json!({
        "type": "object",
        "properties": { property: { "type": "string" } },
        "required": [property]
    }))
    .expect("a valid form");
    ElicitRequestParams::form(format!("Your {property}?"), schema)
}

fn field(result: &ElicitResult, name: &str) -> String {
    result
        .content
        .as_ref()
        .and_then(|c| c.get(name))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A server with a bit of everything: typed and untyped tools, a failing one, progress and
/// logs, implicit- and explicit-style multi round-trip tools (sealed `requestState` under
/// [`STATE_KEY`]), a task-capable tool, prompts, static resources, resource templates of
/// several RFC 6570 operators, completion and a custom method. Every handler finishes at once
/// or within the short time limits set here, so no input can legitimately take long.
pub fn server_builder() -> ServerBuilder {
    Server::builder("fuzz", "1.0.0")
        .instructions("A server for fuzzing.")
        .request_state_key("fuzz", STATE_KEY)
        .tool_timeout(Duration::from_secs(2))
        .peer_request_timeout(Duration::from_millis(200))
        .max_parked_calls(64)
        .parked_call_ttl(Duration::from_secs(5))
        .page_size(2)
        .tasks(
            TaskConfig::default()
                .max_tasks(64)
                .ttl(Duration::from_secs(2)),
        )
        .tool(ToolDef::new(
            "echo",
            |Arguments(args): Arguments| async move {
                args.get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            },
        ).description("Returns its message"))
        .tool(ToolDef::new(
            "add",
            |Params(args): Params<AddArgs>| async move { Json(json!({ "sum": args.a + args.b })) },
        ).description("Adds two numbers"))
        .tool(ToolDef::new("fail", || async {
            Err::<String, _>(McpError::internal("it failed"))
        }).description("Always fails"))
        .tool(ToolDef::new(
            "chatty",
            |cx: RequestContext| async move {
                cx.progress(Progress::new(1.0).total(2.0).message("half"));
                cx.log(LogMessage::new(LoggingLevel::Info, "info line"));
                cx.log(LogMessage::new(LoggingLevel::Debug, json!({ "k": [1, 2] })).logger("fuzz"));
                cx.progress(Progress::new(2.0).total(2.0));
                "done"
            },
        ).description("Reports progress and logs"))
        .tool(ToolDef::new(
            "ask",
            |cx: RequestContext| async move {
                let answer = cx.elicit(form("name")).await?;
                Ok::<_, McpError>(format!("Hello, {}!", field(&answer, "name")))
            },
        ).description("Asks for a name (implicit style)"))
        .tool(ToolDef::new(
            "confirm",
            |cx: RequestContext| async move {
                match (
                    cx.input_response_as::<ElicitResult>("ok"),
                    cx.request_state(),
                ) {
                    (Some(answer), Some("mine")) => {
                        Ok(format!("confirmed {}", field(&answer, "ok")))
                    }
                    _ => Err(McpError::input_required(
                        InputRequiredResult::ask("ok", InputRequest::elicitation(&form("ok")))
                            .with_state("mine"),
                    )),
                }
            },
        ).description("Asks for a confirmation (explicit style)"))
        .tool(
            ToolDef::new("job", || async {
                "job done"
            }).description("Finishes at once, as a task if asked")
            .task_support(TaskSupport::Optional),
        )
        .prompt(PromptDef::new(
            "greet",
            |Params(args): Params<GreetArgs>| async move {
                PromptMessage::user_text(format!("Hello, {}!", args.name))
            },
        ).description("Greets someone"))
        .prompt(PromptDef::new("plain", || async {
            PromptMessage::user_text("plain")
        }).description("No arguments"))
        .resource(ResourceDef::new("test://hello", "hello", || async { "hello" }).mime_type("text/plain"))
        .resource_template(ResourceTemplateDef::new("test://item/{id}", "item", |UriVars(vars): UriVars| async move { format!("item {:?}", vars.get("id")) }))
        .resource_template(ResourceTemplateDef::new("file:///{+path}", "file", |UriVars(vars): UriVars| async move { format!("file {:?}", vars.get("path")) }))
        .resource_template(ResourceTemplateDef::new("test://search{?q,lang}{&page}", "search", |UriVars(vars): UriVars| async move { format!("{vars:?}") }))
        .resource_template(ResourceTemplateDef::new("test://doc{/section,part}{.ext}{#frag}", "doc", |UriVars(vars): UriVars| async move { format!("{vars:?}") }))
        .completion(|params, _cx| async move {
            let prefix = params.argument.value;
            Ok(CompleteResult {
                completion: Completion {
                    values: (0..3).map(|i| format!("{prefix}{i}")).collect(),
                    total: Some(3),
                    has_more: Some(false),
                },
                meta: None,
            })
        })
        .custom_method("math/add", |Params(args): Params<AddArgs>| async move {
            json!({ "sum": args.a + args.b })
        })
}

/// The fixture server, built.
pub fn server() -> Server {
    server_builder().build().expect("the fixture server builds")
}

/// Runs `fut` on this thread's actix system (created on first use), failing past [`BOUND`].
pub fn block_on<F: Future>(fut: F) -> F::Output {
    thread_local! {
        // Leaked: the actors and services it holds must outlive every other thread local.
        static SYSTEM: &'static actix_rt::SystemRunner = Box::leak(Box::new(actix_rt::System::new()));
    }
    SYSTEM.with(|system| {
        system.block_on(async {
            match tokio::time::timeout(BOUND, fut).await {
                Ok(output) => output,
                Err(_) => panic!("no answer within {BOUND:?}"),
            }
        })
    })
}

/// Splits `data` into chunks: the first byte (if any) seeds the chunk sizes, so the fuzzer
/// controls where the reader's boundaries fall. Returns the chunks and the rest of the input.
pub fn chunked(data: &[u8]) -> Vec<&[u8]> {
    let Some((&seed, mut rest)) = data.split_first() else {
        return Vec::new();
    };
    let mut state = u32::from(seed) | 1;
    let mut chunks = Vec::new();
    while !rest.is_empty() {
        // xorshift: cheap, deterministic sizes of 1 to 64 bytes, or the whole rest for seed 0.
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let size = if seed == 0 {
            rest.len()
        } else {
            (state % 64) as usize + 1
        };
        let (chunk, tail) = rest.split_at(size.min(rest.len()));
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// An [`AsyncRead`] handing out its chunks one per read (a chunk larger than the reader's
/// buffer is handed out over several reads), then the end of the input.
#[derive(Debug, Default)]
pub struct ChunkReader {
    chunks: VecDeque<Vec<u8>>,
}

impl ChunkReader {
    /// A reader of `chunks`, in order.
    pub fn new<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Self {
        Self {
            chunks: chunks.into_iter().map(<[u8]>::to_vec).collect(),
        }
    }
}

impl AsyncRead for ChunkReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        while let Some(chunk) = self.chunks.front_mut() {
            if chunk.is_empty() {
                self.chunks.pop_front();
                continue;
            }
            let n = chunk.len().min(buf.remaining());
            buf.put_slice(&chunk[..n]);
            chunk.drain(..n);
            break;
        }
        Poll::Ready(Ok(()))
    }
}
