// MCP Apps interop: the official TypeScript client (v2), declaring the MCP Apps extension,
// against examples/apps_server.rs; every `_meta.ui` checked with the reference SDK's schemas
// (@modelcontextprotocol/ext-apps). Prints one line per check; exits 0 only if all held.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  McpUiResourceMetaSchema,
  McpUiToolMetaSchema,
  RESOURCE_MIME_TYPE,
} from "@modelcontextprotocol/ext-apps";

const url = process.argv[2];
if (!url) {
  console.error("usage: node check.mjs URL");
  process.exit(2);
}
let failed = 0;
function check(name, ok, detail) {
  console.log(`${ok ? "ok" : "FAILED"} ${name}${ok ? "" : `: ${detail}`}`);
  if (!ok) failed += 1;
}

const client = new Client(
  { name: "apps-interop", version: "1.0.0" },
  {
    capabilities: {
      extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } },
    },
  },
);
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const { tools } = await client.listTools();
const weather = tools.find((tool) => tool.name === "weather");
const toolMeta = McpUiToolMetaSchema.safeParse(weather?._meta?.ui);
check("the tool's _meta.ui is an McpUiToolMeta", toolMeta.success, JSON.stringify(toolMeta.error));
const viewUri = toolMeta.data?.resourceUri;
check("the tool links to a ui:// view", viewUri?.startsWith("ui://"), viewUri);
const refresh = McpUiToolMetaSchema.safeParse(tools.find((tool) => tool.name === "refresh")?._meta?.ui);
check(
  "the app-only tool is hidden from the model",
  refresh.success && JSON.stringify(refresh.data.visibility) === '["app"]',
  JSON.stringify(refresh.data),
);

const { resources } = await client.listResources();
const listed = resources.find((resource) => resource.uri === viewUri);
check("the view is listed with the MCP App MIME type", listed?.mimeType === RESOURCE_MIME_TYPE, JSON.stringify(listed));

const read = await client.readResource({ uri: viewUri });
const contents = read.contents[0];
check("the view reads as the MCP App MIME type", contents?.mimeType === RESOURCE_MIME_TYPE, contents?.mimeType);
check("the view is an HTML document", contents?.text?.startsWith("<!DOCTYPE html>"), contents?.text?.slice(0, 40));
const resourceMeta = McpUiResourceMetaSchema.safeParse(contents?._meta?.ui);
check("the view's _meta.ui is an McpUiResourceMeta", resourceMeta.success, JSON.stringify(resourceMeta.error));

const result = await client.callTool({ name: "weather", arguments: { city: "Lyon" } });
check("the tool's structured content is what the view draws", result.structuredContent?.city === "Lyon", JSON.stringify(result));
check(
  "a host that renders views is told so in text",
  result.content?.[0]?.text?.includes("dashboard"),
  JSON.stringify(result.content),
);

await client.close();
console.log(`apps interop: ${failed === 0 ? "all checks held" : `${failed} failed`}`);
process.exit(failed === 0 ? 0 : 1);
