"""The official Python SDK's client (`mcp` 2.x, pinned in python-env.sh) against
examples/http_server.rs, for tests/interop/python-client-run.sh.

    python python_client.py URL v2026     # mode="auto": server/discover, no initialize; must be 2026-07-28
    python python_client.py URL v2025     # mode="legacy": the initialize handshake, 2025-11-25

Both eras run against the same server process (the script starts it once). Checks, in order:
  connect     the negotiated version and how it was reached (discover result or initialize
              result), the server's name, capabilities and instructions
  lists       tools, prompts, resources and templates, with their schemas and MIME types
  tools       echo (and its debug log: per-request `_meta` opt-in in 2026-07-28,
              logging/setLevel in 2025-11-25); sleep with progress; an isError result for
              invalid arguments and one returned by the tool itself (add_tool with an
              invalid name); an unknown tool (JSON-RPC error); summarize, whose sampling request the
              client answers (an input-required result retried by the SDK in 2026-07-28, a
              sampling/createMessage request on the call's stream in 2025-11-25)
  prompt, read, complete   greet; the readme, a template resource, an unknown resource;
              completion of greet's `message` and of greeting://{name}
  changes     2026-07-28: subscriptions/listen for tools (the acknowledgement, then the
              event after add_tool, then a listing with the new tool through the SDK's response
              cache); 2025-11-25: notifications/tools/list_changed after add_tool, listen refused
              by the SDK, ping

Prints one line per check and last `python-client[ERA]: N passed, M failed`. Exit status 0
when every check passed, 1 otherwise, 2 on bad usage. Every request is bounded
(REQUEST_SECS), and so is the whole run (MCP_INTEROP_CLIENT_SECS, default 60).
"""

from __future__ import annotations

import os
import sys
import traceback
import warnings
from urllib.parse import urlsplit

import anyio
import mcp.types as types
from mcp import Client
from mcp.client.subscriptions import ListenNotSupportedError, ToolsListChanged
from mcp.shared.exceptions import MCPError

# The SDK warns that logging, sampling and ping are deprecated by 2026-07-28; the example
# server still offers them and this client uses them on purpose.
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", message=".*(deprecated|removed) as of 2026-07-28")

REQUEST_SECS = 10.0
EVENT_SECS = 5.0
BASE_TOOLS = ["echo", "sleep", "summarize", "add_tool"]
INSTRUCTIONS = "Echo text, sleep, summarize with the client's LLM, or add tools at run time."
WANT_VERSION = {"v2026": "2026-07-28", "v2025": "2025-11-25"}
LABEL = {"v2026": "python-2026", "v2025": "python-2025"}


class Run:
    """The checks of one era against one server, and what the server sent the client."""

    def __init__(self, url: str, era: str) -> None:
        self.url = url
        self.era = era
        self.label = LABEL[era]
        self.passed = 0
        self.failed = 0
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.notifications: list[object] = []
        self.list_changed = anyio.Event()
        self.sampling_requests: list[types.CreateMessageRequestParams] = []

    # --- what the server sends the client

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_message(self, message: object) -> None:
        self.notifications.append(message)
        if isinstance(message, types.ToolListChangedNotification):
            self.list_changed.set()

    async def on_sampling(self, context, params: types.CreateMessageRequestParams):
        self.sampling_requests.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="a python summary"),
            model="python-interop",
            stop_reason="endTurn",
        )

    # --- reporting

    async def check(self, name: str, body) -> None:
        try:
            with anyio.fail_after(REQUEST_SECS + EVENT_SECS):
                await body()
        except Exception as error:  # a failed check, whatever raised
            self.failed += 1
            print(f"  FAIL  {self.label}: {name}: {type(error).__name__}: {error}", flush=True)
            if not isinstance(error, AssertionError):
                traceback.print_exc(limit=4, file=sys.stdout)
        else:
            self.passed += 1
            print(f"  ok    {self.label}: {name}", flush=True)

    # --- the run

    async def main(self) -> None:
        client = Client(
            self.url,
            mode="auto" if self.era == "v2026" else "legacy",
            read_timeout_seconds=REQUEST_SECS,
            client_info=types.Implementation(name="python-interop-client", version="1.0.0"),
            sampling_callback=self.on_sampling,
            logging_callback=self.on_log,
            message_handler=self.on_message,
            # 2026-07-28 logging is opt-in per request (`_meta`); 2025-11-25 uses logging/setLevel.
            log_level="debug" if self.era == "v2026" else None,
        )
        connected = False
        try:
            async with client:
                connected = True
                await self.checks(client)
        except Exception as error:
            self.failed += 1
            what = "closing" if connected else "connect"
            print(f"  FAIL  {self.label}: {what}: {type(error).__name__}: {error}", flush=True)

    async def checks(self, c: Client) -> None:
        era = self.era
        v2026 = era == "v2026"
        added = f"dynamic_{era}"

        async def connect():
            assert c.protocol_version == WANT_VERSION[era], f"negotiated {c.protocol_version!r}"
            if v2026:
                discover = c.session.discover_result
                assert discover is not None, "no server/discover result"
                assert c.session.initialize_result is None, "an initialize result in the 2026 era"
                assert "2026-07-28" in discover.supported_versions, discover.supported_versions
            else:
                assert c.session.initialize_result is not None, "no initialize result"
                assert c.session.discover_result is None, "a discover result in the 2025 era"

        await self.check(f"connect: {WANT_VERSION[era]} via {'server/discover' if v2026 else 'initialize'}", connect)

        async def info():
            assert c.server_info is not None and c.server_info.name == "actix-mcp-example", c.server_info
            caps = c.server_capabilities
            for name in ("tools", "prompts", "resources", "completions"):
                assert getattr(caps, name) is not None, f"no {name} capability in {caps}"
            assert c.instructions == INSTRUCTIONS, c.instructions

        await self.check("server info, capabilities, instructions", info)

        async def tools():
            listed = (await c.list_tools()).tools
            names = [t.name for t in listed]
            assert names[:4] == BASE_TOOLS, names
            assert added not in names, f"{added} listed before add_tool: {names}"
            echo = next(t for t in listed if t.name == "echo")
            assert echo.input_schema.get("required") == ["message"], echo.input_schema
            assert echo.input_schema["properties"]["message"]["type"] == "string", echo.input_schema

        await self.check("tools/list", tools)

        async def prompts():
            listed = (await c.list_prompts()).prompts
            assert [(p.name, [(a.name, a.required) for a in p.arguments or []]) for p in listed] == [
                ("greet", [("message", True)])
            ], listed

        await self.check("prompts/list", prompts)

        async def resources():
            listed = (await c.list_resources()).resources
            assert [(r.uri, r.name, r.mime_type) for r in listed] == [
                ("file:///example/readme.txt", "readme", "text/plain")
            ], listed

        await self.check("resources/list", resources)

        async def templates():
            listed = (await c.list_resource_templates()).resource_templates
            assert [(t.uri_template, t.name, t.mime_type) for t in listed] == [
                ("greeting://{name}", "greeting", "text/plain")
            ], listed

        await self.check("resources/templates/list", templates)

        if not v2026:

            async def set_level():
                await c.set_logging_level("debug")

            await self.check("logging/setLevel debug", set_level)

        async def echo():
            self.logs.clear()
            result = await c.call_tool("echo", {"message": f"hello from python ({era})"})
            assert result.is_error is not True, result
            assert [(b.type, b.text) for b in result.content] == [("text", f"hello from python ({era})")], result
            got = [(log.level, log.logger, log.data) for log in self.logs]
            assert got == [("debug", "echo", f"echo: hello from python ({era})")], f"logs {got}"

        await self.check("tools/call echo, and its debug log", echo)

        async def sleep():
            seen: list[tuple[float, float | None, str | None]] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append((progress, total, message))

            result = await c.call_tool("sleep", {"ms": 450}, progress_callback=on_progress)
            assert result.is_error is not True and result.content[0].text == "slept 450 ms", result
            assert len(seen) >= 2, f"progress {seen}"
            assert all(total == 450 and message == "sleeping" for _, total, message in seen), seen
            values = [p for p, _, _ in seen]
            assert values == sorted(set(values)) and 0 < values[0] and values[-1] <= 450, values

        await self.check("tools/call sleep with progress", sleep)

        async def invalid_arguments():
            result = await c.call_tool("echo", {})
            assert result.is_error is True, result
            text = " ".join(b.text for b in result.content if b.type == "text")
            assert "message" in text, text

        await self.check("tools/call echo without `message`: an isError result", invalid_arguments)

        async def tool_error():
            result = await c.call_tool("add_tool", {"name": "no spaces allowed"})
            assert result.is_error is True, result
            text = " ".join(b.text for b in result.content if b.type == "text")
            assert "no spaces allowed" in text and "may only contain" in text, text

        await self.check("tools/call add_tool with an invalid name: the tool's own isError result", tool_error)

        async def unknown_tool():
            try:
                result = await c.call_tool("no_such_tool", {})
            except MCPError as error:
                assert error.code == types.INVALID_PARAMS, f"code {error.code}: {error}"
                assert "no_such_tool" in error.message, error.message
            else:
                raise AssertionError(f"no error: {result}")

        await self.check("tools/call an unknown tool: error -32602", unknown_tool)

        async def summarize():
            self.sampling_requests.clear()
            result = await c.call_tool("summarize", {"text": "interop"})
            assert result.is_error is not True and result.content[0].text == "a python summary", result
            assert len(self.sampling_requests) == 1, self.sampling_requests
            request = self.sampling_requests[0]
            assert request.max_tokens == 200, request
            assert [(m.role, m.content.text) for m in request.messages] == [("user", "Summarize: interop")], request

        await self.check("tools/call summarize: the client samples", summarize)

        async def prompt():
            result = await c.get_prompt("greet", {"message": "Ada"})
            assert [(m.role, m.content.type, m.content.text) for m in result.messages] == [
                ("user", "text", "Please greet Ada")
            ], result

        await self.check("prompts/get greet", prompt)

        async def read():
            result = await c.read_resource("file:///example/readme.txt")
            assert [(r.uri, r.mime_type, r.text) for r in result.contents] == [
                ("file:///example/readme.txt", "text/plain", "This server is an actix-mcp example.")
            ], result

        await self.check("resources/read the readme", read)

        async def read_template():
            result = await c.read_resource("greeting://Bob")
            assert [(r.uri, r.mime_type, r.text) for r in result.contents] == [
                ("greeting://Bob", "text/plain", "Hello, Bob!")
            ], result

        await self.check("resources/read through the template", read_template)

        # A missing resource is -32602 in 2026-07-28 (-32002 before).
        missing_code = types.INVALID_PARAMS if v2026 else -32002

        async def read_unknown():
            try:
                result = await c.read_resource("file:///nowhere")
            except MCPError as error:
                assert error.code == missing_code, f"code {error.code}: {error}"
                assert "file:///nowhere" in error.message, error.message
            else:
                raise AssertionError(f"no error: {result}")

        await self.check(f"resources/read an unknown uri: error {missing_code}", read_unknown)

        async def complete_prompt():
            result = await c.complete(types.PromptReference(type="ref/prompt", name="greet"), {"name": "message", "value": "A"})
            assert result.completion.values == ["Ada", "Alan", "Alonzo"], result
            assert result.completion.total == 3, result

        await self.check("completion/complete greet's message", complete_prompt)

        async def complete_template():
            result = await c.complete(
                types.ResourceTemplateReference(type="ref/resource", uri="greeting://{name}"), {"name": "name", "value": "B"}
            )
            assert result.completion.values == ["Barbara"], result

        await self.check("completion/complete greeting://{name}", complete_template)

        if v2026:

            async def listen():
                async with c.listen(tools_list_changed=True) as sub:
                    assert sub.honored.tools_list_changed is True, f"honored {sub.honored}"
                    result = await c.call_tool("add_tool", {"name": added})
                    assert result.is_error is not True, result
                    with anyio.fail_after(EVENT_SECS):
                        event = await sub.__anext__()
                    assert isinstance(event, ToolsListChanged), event
                # The SDK's response cache dropped tools/list on the event: a fresh listing.
                names = [t.name for t in (await c.list_tools()).tools]
                assert added in names, names

            await self.check("subscriptions/listen: acknowledged, then tools changed after add_tool", listen)
        else:

            async def list_changed():
                result = await c.call_tool("add_tool", {"name": added})
                assert result.is_error is not True, result
                with anyio.fail_after(EVENT_SECS):
                    await self.list_changed.wait()
                names = [t.name for t in (await c.list_tools()).tools]
                assert added in names, names

            await self.check("notifications/tools/list_changed after add_tool", list_changed)

            async def no_listen():
                try:
                    async with c.listen(tools_list_changed=True):
                        pass
                except ListenNotSupportedError as error:
                    assert error.negotiated_version == "2025-11-25", error
                else:
                    raise AssertionError("listen opened on a 2025-11-25 connection")

            await self.check("subscriptions/listen refused by the SDK in 2025-11-25", no_listen)

            async def ping():
                result = await c.send_ping()
                assert isinstance(result, types.EmptyResult), result

            await self.check("ping", ping)


async def run(url: str, era: str) -> int:
    run = Run(url, era)
    deadline = float(os.environ.get("MCP_INTEROP_CLIENT_SECS", "60"))
    try:
        with anyio.fail_after(deadline):
            await run.main()
    except TimeoutError:
        run.failed += 1
        print(f"  FAIL  {LABEL[era]}: the run took longer than {deadline} s", flush=True)
    print(f"python-client[{WANT_VERSION[era]}]: {run.passed} passed, {run.failed} failed", flush=True)
    return 0 if run.failed == 0 and run.passed > 0 else 1


def main() -> int:
    args = sys.argv[1:]
    if len(args) != 2 or args[1] not in WANT_VERSION:
        print("usage: python python_client.py http://127.0.0.1:PORT/mcp v2026|v2025", file=sys.stderr)
        return 2
    url, era = args
    if urlsplit(url).hostname not in ("127.0.0.1", "localhost", "::1"):
        print(f"python_client.py talks to loopback servers only, not {url}", file=sys.stderr)
        return 2
    return anyio.run(run, url, era)


if __name__ == "__main__":
    sys.exit(main())
