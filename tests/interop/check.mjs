// Checks one run of our command-line client (examples/client.rs) for client-run.sh.
//
//   node check.mjs WANT_RC EXPR RC STDOUT_FILE STDERR_FILE
//
// Passes (exit 0) when the client exited with WANT_RC and the JavaScript expression EXPR is
// `true`. EXPR sees:
//   out       the JSON value printed on stdout (null when there is none)
//   err       every JSON object printed on stderr, one per line, in order (other stderr lines,
//             such as a child server's own chatter, are skipped)
//   progress  the entries of `err` that are progress notifications ({progressToken, progress})
//   logs      the entries of `err` that are log notifications ({level, data})
//   error     the `error` of the entry of `err` that reports a failure ({"error": {...}})
//   text      the text blocks of out.content (or out.messages[].content, out.contents[]),
//             joined with newlines
//   stderr    the whole of stderr as text
//   env       process.env
// EXPR may also return a string: that is a failure, and the string says why.
// Fails (exit 1) otherwise, printing what was seen. Exit 2 on bad usage.

import { readFileSync } from "node:fs";

const [wantRc, expr, rcText, outFile, errFile] = process.argv.slice(2);
if (errFile === undefined) {
  console.error("usage: node check.mjs WANT_RC EXPR RC STDOUT_FILE STDERR_FILE");
  process.exit(2);
}

const stdoutText = readFileSync(outFile, "utf8");
const stderr = readFileSync(errFile, "utf8");
const rc = Number(rcText);

function parse(line) {
  try {
    const value = JSON.parse(line);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

const problems = [];
const outLines = stdoutText.split("\n").filter((l) => l.trim() !== "");
let out = null;
if (outLines.length === 1) {
  try {
    out = JSON.parse(outLines[0]);
  } catch {
    problems.push("stdout is not JSON");
  }
} else if (outLines.length > 1) {
  problems.push(`stdout has ${outLines.length} lines, want at most one`);
}
const err = stderr.split("\n").map(parse).filter((v) => v !== undefined);
const progress = err.filter((v) => "progressToken" in v && "progress" in v);
const logs = err.filter((v) => "level" in v && "data" in v);
const error = err.find((v) => "error" in v)?.error;

function texts(value) {
  if (value === null || typeof value !== "object") return [];
  const blocks = [];
  for (const block of value.content ?? []) if (block?.type === "text") blocks.push(block.text);
  for (const message of value.messages ?? []) {
    if (message?.content?.type === "text") blocks.push(message.content.text);
  }
  for (const contents of value.contents ?? []) if (typeof contents?.text === "string") blocks.push(contents.text);
  return blocks;
}
const text = texts(out).join("\n");

if (rc !== Number(wantRc)) problems.push(`exit status ${rc}, want ${wantRc}`);
let verdict;
try {
  verdict = new Function(
    "out", "err", "progress", "logs", "error", "text", "stderr", "env",
    `"use strict"; return (${expr});`,
  )(out, err, progress, logs, error, text, stderr, process.env);
} catch (e) {
  verdict = `the check threw: ${e}`;
}
if (verdict !== true) {
  problems.push(typeof verdict === "string" ? verdict : `check is ${JSON.stringify(verdict)}: ${expr}`);
}

if (problems.length > 0) {
  for (const p of problems) console.error(`    ${p}`);
  console.error(`    stdout: ${stdoutText.trim().slice(0, 1500)}`);
  console.error(`    stderr: ${stderr.trim().slice(0, 1500)}`);
  process.exit(1);
}
