#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into corpus/<target>/ (then `run.sh --merge`
keeps what adds coverage). Seeds come from the golden protocol fixtures
(tests/fixtures/protocol/**), examples of the 2026-07-28 spec, and hand-written edge cases.
Run from anywhere: python3 tests/fuzz/seeds.py"""

import hashlib
import json
import os
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures" / "protocol"
V2026 = "2026-07-28"
V2025 = "2025-11-25"


def write(target, data):
    if isinstance(data, str):
        data = data.encode()
    folder = HERE / "corpus" / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ("seed-" + hashlib.sha1(data).hexdigest()[:16])).write_bytes(data)


def fixture(kind):
    return {p.stem: json.loads(p.read_text()) for p in sorted((FIXTURES / kind).glob("*.json"))}


def dump(value):
    return json.dumps(value, separators=(",", ":"))


META = {
    "io.modelcontextprotocol/protocolVersion": V2026,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}, "roots": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1.0.0"},
}


def v2026(params):
    params = dict(params or {})
    params["_meta"] = {**params.get("_meta", {}), **META}
    return params


def request(method, params=None, id=1):
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


# ---- JSON-RPC messages: fixtures, the fixture server's surface, spec examples, edge cases

REQUEST_FIXTURES = {
    "CallToolRequestParams": ["tools/call"],
    "CompleteRequestParams": ["completion/complete"],
    "GetPromptRequestParams": ["prompts/get"],
    "InitializeRequestParams": ["initialize"],
    "PaginatedRequestParams": ["tools/list", "prompts/list", "resources/list",
                               "resources/templates/list", "tasks/list"],
    "ReadResourceRequestParams": ["resources/read"],
    "SetLevelRequestParams": ["logging/setLevel"],
    "SubscribeRequestParams": ["resources/subscribe"],
    "UnsubscribeRequestParams": ["resources/unsubscribe"],
    "CreateMessageRequestParams": ["sampling/createMessage"],
    "ElicitRequestParams": ["elicitation/create"],
}
NOTIFICATION_FIXTURES = {
    "CancelledNotificationParams": "notifications/cancelled",
    "ProgressNotificationParams": "notifications/progress",
    "LoggingMessageNotificationParams": "notifications/message",
    "ResourceUpdatedNotificationParams": "notifications/resources/updated",
    "ElicitationCompleteNotificationParams": "notifications/elicitation/complete",
}

messages = []
for kind, methods in REQUEST_FIXTURES.items():
    for params in fixture(kind).values():
        for method in methods:
            messages.append(request(method, params))
            messages.append(request(method, v2026(params), id="m-1"))
for kind, method in NOTIFICATION_FIXTURES.items():
    for params in fixture(kind).values():
        messages.append({"jsonrpc": "2.0", "method": method, "params": params})
results = []
for path in sorted(FIXTURES.iterdir()):
    if path.name.endswith("Result") and path.is_dir():
        for result in fixture(path.name).values():
            results.append({"jsonrpc": "2.0", "id": 1, "result": result})

caps = fixture("ClientCapabilities")["full"]
SURFACE = [
    ("ping", {}),
    ("server/discover", {}),
    ("tools/list", {}),
    ("tools/list", {"cursor": "Mg"}),
    ("prompts/list", {}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("tools/call", {"name": "echo", "arguments": {"message": "hi"}}),
    ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2.5}}),
    ("tools/call", {"name": "add", "arguments": {"a": "x"}}),
    ("tools/call", {"name": "fail", "arguments": {}}),
    ("tools/call", {"name": "chatty", "_meta": {"progressToken": "p-1"}}),
    ("tools/call", {"name": "ask", "arguments": {}}),
    ("tools/call", {"name": "confirm", "arguments": {"n": 1}}),
    ("tools/call", {"name": "confirm", "arguments": {"n": 1}, "requestState": "AQRmdXp6AAAA",
                    "inputResponses": {"ok": {"action": "accept", "content": {"ok": "yes"}}}}),
    ("tools/call", {"name": "ask", "arguments": {}, "requestState": "x",
                    "inputResponses": {"name": {"action": "accept", "content": {"name": "Ann"}}}}),
    ("tools/call", {"name": "job", "arguments": {}, "task": {"ttl": 1000}}),
    ("tools/call", {"name": "missing"}),
    ("prompts/get", {"name": "greet", "arguments": {"name": "Ann"}}),
    ("prompts/get", {"name": "greet"}),
    ("prompts/get", {"name": "plain"}),
    ("resources/read", {"uri": "test://hello"}),
    ("resources/read", {"uri": "test://item/42"}),
    ("resources/read", {"uri": "file:///a/b/c.txt"}),
    ("resources/read", {"uri": "test://search?q=rust&lang=en&page=2"}),
    ("resources/read", {"uri": "test://doc/intro/part1.md#top"}),
    ("resources/read", {"uri": "test://nowhere"}),
    ("resources/subscribe", {"uri": "test://hello"}),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"},
                             "argument": {"name": "name", "value": "A"}}),
    ("completion/complete", {"ref": {"type": "ref/resource", "uri": "test://item/{id}"},
                             "argument": {"name": "id", "value": "4"}, "context": {"arguments": {}}}),
    ("logging/setLevel", {"level": "debug"}),
    ("math/add", {"a": 1, "b": 2}),
    ("tasks/list", {}),
    ("tasks/get", {"taskId": "nope"}),
    ("tasks/result", {"taskId": "nope"}),
    ("tasks/cancel", {"taskId": "nope"}),
    ("subscriptions/listen", {"notifications": {"toolsListChanged": True}}),
    ("initialize", {"protocolVersion": V2025, "capabilities": caps,
                    "clientInfo": {"name": "fuzz", "version": "1"}}),
]
for method, params in SURFACE:
    messages.append(request(method, params))
    messages.append(request(method, v2026(params), id=7))
messages.append(request("tools/call", {"name": "echo", "arguments": {"message": "hi"},
                                       "_meta": {**META, "io.modelcontextprotocol/protocolVersion": "1999-01-01"}}))
messages.append(request("tools/call", {"name": "echo", "_meta": {"io.modelcontextprotocol/protocolVersion": V2026}}))
messages += [
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "x"}},
    {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
    {"jsonrpc": "2.0", "id": 5, "error": {"code": -32601, "message": "nope", "data": {"a": [1]}}},
]
# Examples of the 2026-07-28 spec (schema/<version>/examples of the specification repository).
SPEC = [
    {"jsonrpc": "2.0", "id": "discover-1", "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientInfo": {"name": "ExampleClient", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {}}}},
    {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "describe_image", "arguments": {
        "image": "data:image/png;name=dot.png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNkYGBgAAAABQABWaDDsAAAAABJRU5ErkJggg=="}}},
    {"jsonrpc": "2.0", "id": "list-tools-example", "result": {"resultType": "complete", "tools": [{
        "name": "get_weather", "title": "Weather Information Provider",
        "description": "Get current weather information for a location",
        "inputSchema": {"type": "object", "properties": {"location": {"type": "string",
                        "description": "City name or zip code"}}, "required": ["location"]},
        "icons": [{"src": "https://example.com/weather-icon.png", "mimeType": "image/png", "sizes": ["48x48"]}]}],
        "nextCursor": "next-page-cursor"}},
    {"jsonrpc": "2.0", "id": 3, "result": {"resultType": "input_required", "inputRequests": {"echo_input": {
        "method": "elicitation/create", "params": {"message": "Please provide the input string to echo back",
        "requestedSchema": {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}}}},
        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "echo_dc792e24-01b5-4c0a-abcb-0559848ca3c5"}}}},
]
messages += SPEC

EDGES = [
    "", " ", "{}", "[]", "null", "1", "\"x\"", "{", "{\"jsonrpc\":\"2.0\"",
    '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
    '{"jsonrpc":"2.0","id":null,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    '{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}',
    '{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}',
    '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
    '{"jsonrpc":"1.0","id":1,"method":"ping"}',
    '{"jsonrpc":2.0,"id":1,"method":"ping"}',
    '{"id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","params":[1,2]}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}',
    '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}',
    '{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}',
    '{"jsonrpc":"2.0","id":1}',
    '{"jsonrpc":"2.0","result":{}}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","id":2}',
    '{"jsonrpc":"2.0","id":"\\ud83d\\ude00","method":"tools/call","params":{"name":"echo","arguments":{"message":"\\u0000"}}}',
    '\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1e308,"b":1e308}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":-0.0,"b":1e-320}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":' + "[" * 100 + "]" * 100 + "}}",
    '{"jsonrpc":"2.0","id":1,"method":"' + "x" * 300 + '"}',
    '{"jsonrpc":"2.0","id":"' + "i" * 300 + '","method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":' + '"' + "p" * 300 + '"}}}',
    '\t\r\n {"jsonrpc":"2.0","id":0,"method":"ping"} \n',
]

for message in messages + results:
    for target in ("jsonrpc", "dispatch"):
        write(target, dump(message))
for edge in EDGES:
    for target in ("jsonrpc", "dispatch"):
        write(target, edge)

# ---- HTTP scripts

def http(method, headers, body="", path=""):
    head = method + (" " + path if path else "")
    lines = [head] + [f"{k}: {v}" for k, v in headers]
    return "\n".join(lines) + "\n\n" + body


POST = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")]
SESSION = POST + [("Mcp-Session-Id", "$SESSION"), ("MCP-Protocol-Version", V2025)]
init = dump(request("initialize", {"protocolVersion": V2025, "capabilities": caps,
                                   "clientInfo": {"name": "fuzz", "version": "1"}}))
initialized = dump({"jsonrpc": "2.0", "method": "notifications/initialized"})


def script(*parts, mode=""):
    return (mode + "\n" if mode else "") + "\n~~~\n".join(parts)


v2025_calls = [dump(request(m, p, id=i + 2)) for i, (m, p) in enumerate(SURFACE) if m not in ("initialize",)]
for mode in ("", "@json"):
    write("http", script(http("POST", POST, init), http("POST", SESSION, initialized),
                         http("POST", SESSION, dump(request("tools/list", {}, 2))),
                         http("POST", SESSION, dump(request("tools/call", {"name": "chatty", "_meta": {"progressToken": 1}}, 3))),
                         http("GET", [("Accept", "text/event-stream"), ("Mcp-Session-Id", "$SESSION"),
                                      ("MCP-Protocol-Version", V2025)]),
                         http("DELETE", [("Mcp-Session-Id", "$SESSION")]), mode=mode))
    for call in v2025_calls[:: 3 if mode else 1]:
        write("http", script(http("POST", POST, init), http("POST", SESSION, initialized),
                             http("POST", SESSION, call), mode=mode))
    write("http", script(http("POST", POST, init),
                         http("POST", SESSION, dump(request("tools/call", {"name": "ask"}, 2))),
                         http("POST", SESSION, dump({"jsonrpc": "2.0", "id": 0, "result": {"action": "decline"}})),
                         mode=mode))
    write("http", script(http("POST", POST, init),
                         http("GET", [("Accept", "text/event-stream"), ("Mcp-Session-Id", "$SESSION"),
                                      ("Last-Event-ID", "0-1")]), mode=mode))
for mode in ("", "@json", "@stateless"):
    for method, params in SURFACE:
        if method == "initialize":
            continue
        name = params.get("name") or params.get("uri") or ""
        headers = POST + [("MCP-Protocol-Version", V2026), ("Mcp-Method", method)]
        if name:
            headers.append(("Mcp-Name", name))
        if mode != "@stateless" and method not in ("tools/call", "resources/read") and name:
            continue
        write("http", script(http("POST", headers, dump(request(method, v2026(params)))), mode=mode))
# Refusals: Origin, Host, Accept, Content-Type, methods, paths, sessions.
write("http", http("POST", POST + [("Origin", "https://evil.example")], init))
write("http", http("POST", POST + [("Origin", "http://localhost:3000"), ("Host", "localhost:3000")], init))
write("http", http("POST", POST + [("Host", "example.com")], init))
write("http", http("POST", [("Content-Type", "text/plain"), ("Accept", "application/json, text/event-stream")], init))
write("http", http("POST", [("Content-Type", "application/json"), ("Accept", "text/html")], init))
write("http", http("POST", POST + [("Mcp-Session-Id", "not-a-session")], dump(request("ping"))))
write("http", http("POST", POST + [("MCP-Protocol-Version", "1999-01-01")], dump(request("ping"))))
write("http", http("POST", POST + [("MCP-Protocol-Version", V2026), ("Mcp-Method", "tools/list")],
                   dump(request("tools/call", v2026({"name": "echo"})))))
write("http", http("POST", POST + [("MCP-Protocol-Version", V2026), ("Mcp-Method", "tools/call"), ("Mcp-Name", "add")],
                   dump(request("tools/call", v2026({"name": "echo"})))))
write("http", http("POST", POST, "[" + init + "]"))
write("http", http("POST", POST, "{not json"))
write("http", http("PUT", POST, init))
write("http", http("OPTIONS", [("Origin", "http://localhost"), ("Access-Control-Request-Method", "POST")]))
write("http", http("GET", [("Accept", "text/event-stream")]))
write("http", http("DELETE", []))
write("http", http("POST", POST, init, path="/elsewhere"))
write("http", http("POST", POST + [("Content-Length", "5")], init))

# ---- The client over newline-delimited JSON: lifecycle byte, then one block per client message

def client(lifecycle, *blocks):
    return bytes([lifecycle]) + "\n\n".join("\n".join(dump(m) for m in block) for block in blocks).encode() + b"\n"


def ok(id, result):
    return {"jsonrpc": "2.0", "id": id, "result": result}


discover = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "supportedVersions": [V2026],
            "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "9"}}}
initialize = fixture("InitializeResult")
tools = [r for r in fixture("ListToolsResult").values()]
call = [r for r in fixture("CallToolResult").values()]
read = [r for r in fixture("ReadResourceResult").values()]
server_requests = [
    {"jsonrpc": "2.0", "id": "s1", "method": "ping"},
    {"jsonrpc": "2.0", "id": "s2", "method": "roots/list"},
    {"jsonrpc": "2.0", "id": "s3", "method": "sampling/createMessage", "params": fixture("CreateMessageRequestParams").popitem()[1]},
    {"jsonrpc": "2.0", "id": "s4", "method": "elicitation/create", "params": fixture("ElicitRequestParams")["form"]},
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}},
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "progress-3", "progress": 1}},
    {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
]
for init_result in initialize.values():
    write("client_lines", client(2, [ok(1, init_result)], [], [ok(2, tools[0])],
                                 server_requests + [ok(3, call[0])], [ok(4, read[0])]))
write("client_lines", client(0, [{"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}],
                             [ok(2, initialize["full"] if "full" in initialize else list(initialize.values())[0])],
                             [], [ok(3, tools[-1])], [ok(4, call[-1])], [ok(5, read[-1])]))
write("client_lines", client(1, [ok(1, discover)],
                             [ok(2, {"resultType": "complete", "tools": tools[0]["tools"]})],
                             [ok(3, {"resultType": "input_required", "inputRequests": {
                                 "a": {"method": "elicitation/create", "params": fixture("ElicitRequestParams")["form"]},
                                 "b": {"method": "roots/list"}}, "requestState": "st"})],
                             [ok(4, {"resultType": "complete", **call[0]})],
                             [ok(5, {"resultType": "complete", **read[0]})]))
write("client_lines", client(1, [ok(1, {**discover, "supportedVersions": ["2099-01-01"]})],
                             [{"jsonrpc": "2.0", "id": 2, "error": {"code": -32022, "message": "v",
                                                                    "data": {"supported": [V2026]}}}]))
write("client_lines", client(2, [ok(1, {"protocolVersion": "1999-01-01", "capabilities": {}, "serverInfo": {"name": "x", "version": "1"}})]))
write("client_lines", b"\x02" + b"not json\n" + b"\xff\xfe\n" + b"x" * 200 + b"\n[]\n")

# ---- SSE streams, as our server and others write them

sse = [
    b"id: 0-1\nretry: 1000\ndata: \n\n",
    b"event: message\nid: 0-2\ndata: " + dump(ok(1, call[0])).encode() + b"\n\n",
    b": keep-alive\n\n",
    b"data: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"ping\",\"id\":1}\n\n",
    b"event: endpoint\ndata: /messages?x=1\n\n",
    b"\xef\xbb\xbfdata: bom\r\n\r\n",
    b"data:no-space\rid:3\r\r",
    b"data: \xff\xfe\n\ndata: ok\n\n",
    b"retry: x\nretry: 99999999999999999999\nid: a\x00b\ndata\n\n",
    b"data: " + b"y" * 300 + b"\n\n" + b"id: big\ndata: " + b"z" * 5000 + b"\n\ndata: after\n\n",
    b"field-with-no-colon\nevent\n:comment only\n\n",
]
for i, stream in enumerate(sse):
    write("client_sse", bytes([i * 37 % 256]) + stream)
write("client_sse", b"\x00" + b"".join(sse))
write("client_sse", b"\x05" + b"".join(sse))

# ---- URI templates: a template, a newline, a uri

templates = [
    ("test://item/{id}", "test://item/42"),
    ("test://template/{id}/data", "test://template/1/2/data"),
    ("file:///{+path}", "file:///a/b/c.txt"),
    ("test://search{?q,lang}{&page}", "test://search?q=x&lang=en&page=2"),
    ("test://doc{/section,part}{.ext}{#frag}", "test://doc/a/b.md#top"),
    ("users/{id}", "users/a%20b"),
    ("x/{a},{b}", "x/1,2"),
    ("{scheme}://{host}{/path*}{?query*}", "https://example.com/a/b?x=1"),
    ("{var:3}{+var:5}{#keys*}", "valvalue#a,b"),
    ("map?{x,y}", "map?1024,768"),
    ("{a}{b}{c}{d}", "abcdefghijklmnop"),
    ("{=bad}", "x"),
    ("{unclosed", ""),
    ("}", ""),
    ("{}", ""),
    ("{a%20}", "x"),
    ("{a.b}/{c_d}", "1/2"),
    ("caf\u00e9/{x}", "caf\u00e9/%C3%A9"),
    ("{x}", "%"),
    ("{x}", "%2"),
    ("{x}", "%FF%FE"),
]
for template, uri in templates:
    write("uri_template", template + "\n" + uri)

# ---- Sealed requestState: mode byte, then a state to open or a state to seal and edits

for text in [b"", b"AQ", b"AQRmdXp6", b"AQRmdXp6" + b"A" * 60, b"AgRmdXp6" + b"A" * 60,
             b"AQNrZXk" + b"A" * 60, b"!!!", b"AQAA" + b"A" * 40, b"AQ" + b"_" * 80]:
    write("seal", b"\x00" + text)
for state, edits in [(b"mine", b""), (b"", b"\x10\x00\x41"), (b"mine", b"\xff\x01\x41"),
                     (b"x" * 40, b"\x00\x02\x00"), (b"mine", b"\x80\x03\xff\x20\x00\x2d")]:
    write("seal", b"\x01" + state + b"\x00" + edits)
