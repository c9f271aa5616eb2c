"""A small MCP server written with the official Python SDK, for tests/interop/client-run.sh.

Our command-line client (examples/client.rs) drives it over stdio and over Streamable HTTP.
It runs on both major versions of the SDK (pinned in client-run.sh): `FastMCP` from
`mcp.server.fastmcp` in mcp 1.x, renamed `MCPServer` (`mcp.server.mcpserver`) in mcp 2.x.

    python python_server.py                       # stdio
    python python_server.py --http PORT           # Streamable HTTP at http://127.0.0.1:PORT/mcp

What it serves:
  tools       add(a, b) -> int; weather(city) -> structured output (an output schema);
              countdown(steps) reports progress once per step; shout(message) logs at
              debug, info and warning (at or above the level set with logging/setLevel),
              then answers; wait(seconds) sleeps and records its
              cancellation; ask_model(question) samples the client's model; ask_user()
              elicits a name (on mcp 2.x through resolvers, so a 2026-07-28 client is asked
              with an input_required result, a 2025-11-25 one with a request mid-call).
  prompts     greet(name, style="plain")
  resources   info://server, note://1 .. note://12 (listed 5 per page, with cursors)
  templates   greeting://{name}, note://{number}/text
  completion  the `name` of greet and of greeting://{name} (from NAMES)

Environment: INTEROP_EVENTS, a file the server appends one line to per notable event
(`cancelled wait`), so the script can check that a cancellation reached the server.
"""

from __future__ import annotations

import os
import sys
import warnings

import anyio
from pydantic import BaseModel, Field

try:  # mcp >= 2
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as BaseServer

    SDK_MAJOR = 2
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context
    from mcp.server.fastmcp import FastMCP as BaseServer

    SDK_MAJOR = 1

import mcp.types as types

# mcp 2.x warns that logging and sampling are deprecated by the 2026-07-28 revision; this
# server uses them on purpose, with clients of 2025-11-25.
warnings.filterwarnings("ignore", message=".*deprecated as of 2026-07-28")

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
PAGE = 5
NOTES = 12
NAMES = ["Ada", "Alan", "Alonzo", "Barbara", "Grace"]
# The level set by logging/setLevel: `shout` sends only logs at or above it.
min_level = {"level": "debug"}


def record(event: str) -> None:
    path = os.environ.get("INTEROP_EVENTS")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(event + "\n")


def page_of(items: list, cursor: str | None) -> tuple[list, str | None]:
    """One page of `items` from `cursor` (an offset in decimal); the next cursor or None."""
    try:
        start = int(cursor) if cursor else 0
    except ValueError:
        raise ValueError(f"bad cursor {cursor!r}") from None
    end = start + PAGE
    return items[start:end], (str(end) if end < len(items) else None)


if SDK_MAJOR == 2:

    class Server(BaseServer):
        # MCPServer lists everything in one page; this one pages its resources.
        async def _handle_list_resources(self, ctx, params):
            resources, next_cursor = page_of(await self.list_resources(), params.cursor if params else None)
            return types.ListResourcesResult.model_validate({"resources": resources, "nextCursor": next_cursor})

    mcp = Server("python-interop", version="1.0.0", instructions="An interop test server.")

    async def set_level(ctx, params):
        min_level["level"] = params.level
        return types.EmptyResult()

    # Registering logging/setLevel makes the server declare the logging capability.
    mcp._lowlevel_server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
else:
    mcp = BaseServer("python-interop", instructions="An interop test server.")

    async def list_resources_paged(request: types.ListResourcesRequest) -> types.ListResourcesResult:
        cursor = request.params.cursor if request.params else None
        resources, next_cursor = page_of(await mcp.list_resources(), cursor)
        return types.ListResourcesResult(resources=resources, nextCursor=next_cursor)

    # FastMCP lists everything in one page; the low-level handler pages its resources.
    mcp._mcp_server.list_resources()(list_resources_paged)

    async def set_level(level: types.LoggingLevel) -> None:
        min_level["level"] = level

    # Registering logging/setLevel makes the server declare the logging capability.
    mcp._mcp_server.set_logging_level()(set_level)


class Weather(BaseModel):
    """A weather report."""

    city: str
    temperature_c: float = Field(description="Temperature in degrees Celsius")
    conditions: str


class Name(BaseModel):
    name: str = Field(description="Your name")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@mcp.tool()
def weather(city: str) -> Weather:
    """A made-up weather report (structured output)."""
    return Weather(city=city, temperature_c=21.5, conditions="sunny")


@mcp.tool()
async def countdown(steps: int, ctx: Context) -> str:
    """Counts down, reporting progress once per step."""
    for done in range(1, steps + 1):
        await ctx.report_progress(done, steps, f"step {done}")
        await anyio.sleep(0.01)
    return f"counted {steps} steps"


@mcp.tool()
async def shout(message: str, ctx: Context) -> str:
    """Logs its message at debug, info and warning level (those at or above the level the
    client set), then returns it in capitals."""
    for level in ("debug", "info", "warning"):
        if LEVELS.index(level) >= LEVELS.index(min_level["level"]):
            await ctx.log(level, f"{level}: {message}")
    return message.upper()


@mcp.tool()
async def wait(seconds: float) -> str:
    """Sleeps; a cancelled call is recorded in INTEROP_EVENTS."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        record("cancelled wait")
        raise
    return f"waited {seconds} s"


if SDK_MAJOR == 2:
    # mcp 2.x resolvers: a 2026-07-28 client is asked through an input_required result (and
    # the call retried with its answers), a 2025-11-25 client with a request mid-call.
    from typing import Annotated

    from mcp.server.mcpserver import Elicit, ElicitationResult, Resolve, Sample

    def sample_question(question: str) -> Sample:
        message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))
        return Sample([message], max_tokens=50)

    def elicit_name() -> Elicit[Name]:
        return Elicit("What is your name?", Name)

    @mcp.tool()
    async def ask_model(question: str, answer: Annotated[types.CreateMessageResult, Resolve(sample_question)]) -> str:
        """Asks the client's model (sampling) and returns its text."""
        content = answer.content
        return f"model said: {content.text}" if isinstance(content, types.TextContent) else "model said nothing"

    @mcp.tool()
    async def ask_user(outcome: Annotated[ElicitationResult[Name], Resolve(elicit_name)]) -> str:
        """Asks the user for their name (elicitation)."""
        if outcome.action == "accept":
            return f"hello {outcome.data.name}"
        return f"user chose {outcome.action}"

else:

    @mcp.tool()
    async def ask_model(question: str, ctx: Context) -> str:
        """Asks the client's model (sampling) and returns its text."""
        # Sent on this call's own stream, as the SDK's own elicit does (without it the request
        # goes to the standalone GET stream; server-everything's roots/list covers that path).
        result = await ctx.session.create_message(
            messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))],
            max_tokens=50,
            related_request_id=ctx.request_id,
        )
        content = result.content
        return f"model said: {content.text}" if isinstance(content, types.TextContent) else "model said nothing"

    @mcp.tool()
    async def ask_user(ctx: Context) -> str:
        """Asks the user for their name (elicitation)."""
        answer = await ctx.elicit("What is your name?", Name)
        if answer.action == "accept":
            return f"hello {answer.data.name}"
        return f"user chose {answer.action}"


@mcp.prompt()
def greet(name: str, style: str = "plain") -> str:
    """Greets someone."""
    return f"Say hello to {name} in a {style} style."


@mcp.resource("info://server", mime_type="text/plain")
def server_info() -> str:
    """What this server is."""
    return f"python-interop on mcp {SDK_MAJOR}.x"


def note_reader(number: int):
    def note() -> str:
        return f"note {number}"

    return note


for number in range(1, NOTES + 1):
    mcp.resource(f"note://{number}", name=f"note-{number}", mime_type="text/plain")(note_reader(number))


@mcp.resource("greeting://{name}", mime_type="text/plain")
def greeting(name: str) -> str:
    """A greeting for anyone."""
    return f"Hello, {name}!"


@mcp.resource("note://{number}/text", mime_type="text/plain")
def note_text(number: str) -> str:
    """The text of any note."""
    return f"note {number}"


@mcp.completion()
async def complete(ref, argument, context):
    if argument.name == "name":
        return types.Completion(values=[n for n in NAMES if n.startswith(argument.value)])
    return None


def main() -> None:
    args = sys.argv[1:]
    if not args:
        mcp.run("stdio")
    elif len(args) == 2 and args[0] == "--http":
        port = int(args[1])
        if SDK_MAJOR == 2:
            mcp.run("streamable-http", host="127.0.0.1", port=port)
        else:
            mcp.settings.host = "127.0.0.1"
            mcp.settings.port = port
            mcp.run("streamable-http")
    else:
        sys.exit("usage: python_server.py [--http PORT]")


if __name__ == "__main__":
    main()
