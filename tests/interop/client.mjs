// Interop check: drive an actix-mcp server with the official TypeScript SDK client.
//
//   node tests/interop/client.mjs http://127.0.0.1:PORT/mcp
//
// Steps (all must succeed):
//   1. connect over Streamable HTTP (initialize + notifications/initialized)
//   2. tools/list  -> must contain `echo`, `sleep`, `add_tool`
//   3. tools/call echo {message: "hello interop"} -> exactly one content item,
//      {type: "text", text: "hello interop"}, not isError
//   4. tools/call sleep {ms: 10} -> a non-error result
//   5. register a handler for notifications/tools/list_changed, then
//      tools/call add_tool {name: "dynamic_tool"} -> non-error; wait (<= 5 s) for list_changed
//   6. tools/list again -> must contain `dynamic_tool`
//   7. terminate the session (DELETE; 405 is fine) and close
//
// Prints exactly one JSON line on stdout summarising what it saw, e.g.
//   {"ok":true,"tools":["echo",...],"echo":"hello interop","sleep":"ok","listChanged":true,
//    "toolsAfter":[...,"dynamic_tool"],"errors":[]}
// Exit 0 only if everything matched; otherwise exit 1 with the reasons in "errors" (and on stderr).
// Exit 2 on bad usage. The whole run is capped at 30 s (MCP_INTEROP_TIMEOUT_MS).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const url = process.argv[2];
if (!url || !/^https?:\/\//.test(url)) {
  console.error("usage: node client.mjs http://127.0.0.1:PORT/mcp");
  process.exit(2);
}

const REQUEST_TIMEOUT_MS = 10_000;
const LIST_CHANGED_WAIT_MS = 5_000;
const OVERALL_TIMEOUT_MS = Number(process.env.MCP_INTEROP_TIMEOUT_MS ?? 30_000);

const summary = {
  ok: false,
  url,
  tools: null,
  echo: null,
  sleep: null,
  listChanged: false,
  toolsAfter: null,
  dynamicTool: false,
  errors: [],
};
let finished = false;

function finish(code) {
  if (finished) return;
  finished = true;
  summary.ok = code === 0 && summary.errors.length === 0;
  process.stdout.write(JSON.stringify(summary) + "\n");
  for (const e of summary.errors) console.error(`interop: ${e}`);
  // Do not wait for lingering sockets (e.g. a standalone GET stream) to drain.
  process.exit(summary.ok ? 0 : 1);
}

const overall = setTimeout(() => {
  summary.errors.push(`overall timeout: did not finish within ${OVERALL_TIMEOUT_MS} ms`);
  finish(1);
}, OVERALL_TIMEOUT_MS);
overall.unref();

function fail(msg) {
  summary.errors.push(msg);
}

async function listAllTools(client) {
  const names = [];
  let cursor;
  for (let page = 0; page < 50; page++) {
    const res = await client.listTools(cursor ? { cursor } : undefined, { timeout: REQUEST_TIMEOUT_MS });
    for (const t of res.tools ?? []) names.push(t.name);
    cursor = res.nextCursor;
    if (!cursor) break;
  }
  return names;
}

function textOf(result) {
  const c = Array.isArray(result?.content) ? result.content : [];
  return c.filter((i) => i?.type === "text").map((i) => i.text).join("");
}

async function main() {
  const client = new Client({ name: "actix-mcp-interop-client", version: "1.0.0" }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  client.onerror = (e) => console.error(`interop: client error (non-fatal): ${e?.message ?? e}`);

  // 1. connect
  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  } catch (e) {
    fail(`connect/initialize failed: ${e?.message ?? e}`);
    return finish(1);
  }

  try {
    // 2. list tools
    summary.tools = await listAllTools(client);
    for (const need of ["echo", "sleep", "add_tool"]) {
      if (!summary.tools.includes(need)) fail(`tools/list does not contain '${need}' (got ${JSON.stringify(summary.tools)})`);
    }

    // 3. echo
    try {
      const r = await client.callTool({ name: "echo", arguments: { message: "hello interop" } }, undefined, {
        timeout: REQUEST_TIMEOUT_MS,
      });
      summary.echo = textOf(r);
      const c = r.content;
      if (r.isError) fail(`echo returned isError: ${JSON.stringify(r)}`);
      else if (!Array.isArray(c) || c.length !== 1) fail(`echo: expected exactly one content item, got ${JSON.stringify(c)}`);
      else if (c[0].type !== "text" || c[0].text !== "hello interop")
        fail(`echo: expected {type:"text",text:"hello interop"}, got ${JSON.stringify(c[0])}`);
    } catch (e) {
      fail(`echo call failed: ${e?.message ?? e}`);
    }

    // 4. sleep
    try {
      const r = await client.callTool({ name: "sleep", arguments: { ms: 10 } }, undefined, {
        timeout: REQUEST_TIMEOUT_MS,
      });
      if (r.isError) {
        summary.sleep = "isError";
        fail(`sleep returned isError: ${JSON.stringify(r)}`);
      } else summary.sleep = "ok";
    } catch (e) {
      summary.sleep = "error";
      fail(`sleep call failed: ${e?.message ?? e}`);
    }

    // 5. list_changed after add_tool
    let notified;
    const listChanged = new Promise((resolve) => (notified = resolve));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      summary.listChanged = true;
      notified(true);
    });
    try {
      const r = await client.callTool({ name: "add_tool", arguments: { name: "dynamic_tool" } }, undefined, {
        timeout: REQUEST_TIMEOUT_MS,
      });
      if (r.isError) fail(`add_tool returned isError: ${JSON.stringify(r)}`);
    } catch (e) {
      fail(`add_tool call failed: ${e?.message ?? e}`);
    }
    let timer;
    await Promise.race([
      listChanged,
      new Promise((resolve) => {
        timer = setTimeout(resolve, LIST_CHANGED_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (!summary.listChanged)
      fail(`no notifications/tools/list_changed within ${LIST_CHANGED_WAIT_MS} ms after add_tool`);

    // 6. re-list
    summary.toolsAfter = await listAllTools(client);
    summary.dynamicTool = summary.toolsAfter.includes("dynamic_tool");
    if (!summary.dynamicTool)
      fail(`tools/list after add_tool does not contain 'dynamic_tool' (got ${JSON.stringify(summary.toolsAfter)})`);
  } catch (e) {
    fail(`unexpected error: ${e?.stack ?? e}`);
  }

  // 7. close (best effort; a server may answer DELETE with 405)
  try {
    await transport.terminateSession();
  } catch (e) {
    console.error(`interop: session termination failed (ignored): ${e?.message ?? e}`);
  }
  try {
    await client.close();
  } catch {
    /* ignore */
  }
  finish(summary.errors.length ? 1 : 0);
}

main().catch((e) => {
  fail(`fatal: ${e?.stack ?? e}`);
  finish(1);
});
