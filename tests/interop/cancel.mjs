// Interop check: the official TypeScript SDK client cancels a request with an AbortSignal on a
// stateless endpoint protected by bearer tokens (examples/http_server.rs --stateless --auth-*).
//
//   node tests/interop/cancel.mjs http://127.0.0.1:PORT/mcp JWKS_PORT
//
// The script is the authorization server too: it makes an RSA key, serves its JWKS at
// http://127.0.0.1:JWKS_PORT/jwks (the server was started with --auth-jwks pointing there,
// --auth-issuer http://127.0.0.1:JWKS_PORT and --auth-audience URL) and signs the tokens.
//
// Steps (all must succeed):
//   1. connect as `interop-user` (initialize + notifications/initialized); tools/list has
//      `sleep` and `cancelled_sleeps`
//   2. tools/call sleep {ms: 30000} with an AbortSignal and a progress handler; once progress
//      arrives, `mallory` (another token) POSTs notifications/cancelled naming the same request
//      id: 202, and the sleep goes on (more progress arrives, nothing was counted)
//   3. abort the signal: the SDK POSTs notifications/cancelled (answered 202, no error
//      reported), the call rejects, and `cancelled_sleeps` counts the stopped sleep (<= 5 s)
//
// Prints one JSON line on stdout summarising what it saw. Exit 0 only if everything matched,
// 1 otherwise (reasons in "errors" and on stderr), 2 on bad usage. Capped at 30 s
// (MCP_INTEROP_TIMEOUT_MS).

import crypto from "node:crypto";
import http from "node:http";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, jwksPort] = process.argv.slice(2);
if (!url || !/^https?:\/\//.test(url) || !/^\d+$/.test(jwksPort ?? "")) {
  console.error("usage: node cancel.mjs http://127.0.0.1:PORT/mcp JWKS_PORT");
  process.exit(2);
}

const WAIT_MS = 5_000;
const OVERALL_TIMEOUT_MS = Number(process.env.MCP_INTEROP_TIMEOUT_MS ?? 30_000);
const issuer = `http://127.0.0.1:${jwksPort}`;

const summary = {
  ok: false,
  url,
  tools: null,
  foreignCancelStatus: null,
  progressAfterForeignCancel: false,
  cancelStatuses: [],
  callRejected: null,
  cancelledSleeps: null,
  errors: [],
};
let finished = false;
let jwksServer = null;

function finish(code) {
  if (finished) return;
  finished = true;
  summary.ok = code === 0 && summary.errors.length === 0;
  process.stdout.write(JSON.stringify(summary) + "\n");
  for (const e of summary.errors) console.error(`interop-cancel: ${e}`);
  jwksServer?.close();
  process.exit(summary.ok ? 0 : 1);
}

const overall = setTimeout(() => {
  summary.errors.push(`overall timeout: did not finish within ${OVERALL_TIMEOUT_MS} ms`);
  finish(1);
}, OVERALL_TIMEOUT_MS);
overall.unref();

function fail(msg) {
  summary.errors.push(msg);
  finish(1);
}

// --- The authorization server: one RSA key, its JWKS, and the tokens it signs. ---

const { publicKey, privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
const jwk = { ...publicKey.export({ format: "jwk" }), kid: "interop", alg: "RS256", use: "sig" };

const b64url = (data) => Buffer.from(data).toString("base64url");

function token(subject) {
  const now = Math.floor(Date.now() / 1000);
  const header = b64url(JSON.stringify({ alg: "RS256", typ: "at+jwt", kid: "interop" }));
  const claims = b64url(
    JSON.stringify({ iss: issuer, aud: url, sub: subject, iat: now, exp: now + 600 }),
  );
  const signature = crypto.sign("sha256", Buffer.from(`${header}.${claims}`), privateKey);
  return `${header}.${claims}.${b64url(signature)}`;
}

async function serveJwks() {
  jwksServer = http.createServer((req, res) => {
    if (req.url === "/jwks") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ keys: [jwk] }));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise((resolve, reject) => {
    jwksServer.once("error", reject);
    jwksServer.listen(Number(jwksPort), "127.0.0.1", resolve);
  });
}

// --- Helpers. ---

function within(ms, promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Resolves once `check()` holds, polling every 50 ms; rejects after `ms`. */
async function until(ms, what, check) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function textOf(result) {
  const first = result?.content?.[0];
  return first?.type === "text" ? first.text : null;
}

/** Starts waiting for the next progress notification of the sleep. */
let nextProgress = null;
function progressWaiter() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  nextProgress = resolve;
  return promise;
}

async function main() {
  await serveJwks();

  // The SDK's POSTs: the JSON-RPC id of the sleep, and the statuses of its cancellations.
  let sleepId = null;
  const recordingFetch = async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method === "POST" && typeof init.body === "string") {
      try {
        const message = JSON.parse(init.body);
        if (message.method === "tools/call" && message.params?.name === "sleep") {
          sleepId = message.id;
        } else if (message.method === "notifications/cancelled") {
          summary.cancelStatuses.push(response.status);
        }
      } catch {
        // Not JSON: none of ours.
      }
    }
    return response;
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token("interop-user")}` } },
    fetch: recordingFetch,
  });
  const client = new Client({ name: "actix-mcp-interop-cancel", version: "1.0.0" });
  const reported = [];
  client.onerror = (error) => reported.push(String(error?.message ?? error));

  await within(WAIT_MS * 2, client.connect(transport), "connect");
  const listed = await within(WAIT_MS, client.listTools(), "tools/list");
  summary.tools = listed.tools.map((t) => t.name);
  for (const need of ["sleep", "cancelled_sleeps"]) {
    if (!summary.tools.includes(need)) throw new Error(`tools/list lacks '${need}'`);
  }
  const counted = async () =>
    Number(textOf(await client.callTool({ name: "cancelled_sleeps", arguments: {} })));
  const before = await counted();

  // A long sleep, cancellable by its signal.
  const abort = new AbortController();
  let progressed = progressWaiter();
  const call = client.callTool({ name: "sleep", arguments: { ms: 30_000 } }, undefined, {
    signal: abort.signal,
    timeout: 60_000,
    onprogress: () => nextProgress?.(),
  });
  const settled = call.then(
    () => "resolved",
    (error) => `rejected: ${error?.message ?? error}`,
  );
  await within(WAIT_MS, progressed, "the sleep's first progress");
  if (sleepId === null) throw new Error("the sleep's request id was not seen");

  // Another identity names the same request id: accepted, and the sleep goes on.
  const foreign = await fetch(url, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token("mallory")}`,
      Accept: "application/json, text/event-stream",
      "Content-Type": "application/json",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: sleepId, reason: "not mine" },
    }),
  });
  summary.foreignCancelStatus = foreign.status;
  if (foreign.status !== 202) {
    throw new Error(`mallory's notifications/cancelled answered ${foreign.status}, not 202`);
  }
  progressed = progressWaiter();
  await within(WAIT_MS, progressed, "progress after mallory's cancellation");
  summary.progressAfterForeignCancel = true;
  if ((await counted()) !== before) throw new Error("mallory's cancellation stopped the sleep");

  // The owner aborts: the SDK sends notifications/cancelled, the server stops the sleep.
  abort.abort("the interop client changed its mind");
  summary.callRejected = await within(WAIT_MS, settled, "the aborted call");
  if (!summary.callRejected.startsWith("rejected")) {
    throw new Error(`the aborted call ${summary.callRejected}`);
  }
  await until(WAIT_MS, "the SDK's notifications/cancelled POST", () =>
    summary.cancelStatuses.length > 0,
  );
  if (summary.cancelStatuses.some((status) => status !== 202)) {
    throw new Error(`notifications/cancelled answered ${summary.cancelStatuses}, not 202`);
  }
  await until(WAIT_MS, "the server counts the cancelled sleep", async () => {
    summary.cancelledSleeps = (await counted()) - before;
    return summary.cancelledSleeps >= 1;
  });
  const failedCancels = reported.filter((e) => e.includes("cancellation"));
  if (failedCancels.length > 0) {
    throw new Error(`the SDK reported: ${failedCancels.join("; ")}`);
  }
  await client.close();
}

main().then(
  () => finish(0),
  (error) => fail(error?.message ?? String(error)),
);
