// Mimo as an MCP server, against the built worker in Miniflare, with the official TypeScript
// SDK's client over Streamable HTTP and a protocol client standing in for the extension (the
// real extension's test is tests/browser/mcp.test.ts): MCP tokens made and revoked in the web
// app's API, initialize and version negotiation, the transport's 400/401/403/404/405 rules, bad
// JSON-RPC answered with the specification's codes with nothing run, tool calls going through
// the task's action queue and its consent gate, and runs of Mimo's own agent (run_task, get_task,
// cancel_task, list_tasks) with a scripted model.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  BrowserAction,
  CallToolResult,
  FrontendEvent,
  JsonRpcErrorResponse,
  McpTokenCreated,
  McpTokenList,
  ProtectedResourceMetadata,
  ServerToExtension,
} from "../../protocol/ts/protocol.ts";
import { api, ExtensionClient, newTask, observation, post, WebClient } from "../support/clients.ts";
import { ownRuntime } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";
import { agentStep } from "../support/shopper.ts";

let mimo: Mimo;

const TOOLS = [
  "browser_navigate",
  "browser_navigate_back",
  "browser_snapshot",
  "browser_click",
  "browser_type",
  "browser_take_screenshot",
  "browser_press_key",
  "browser_hover",
  "browser_select_option",
  "browser_fill_form",
  "browser_file_upload",
  "browser_wait_for",
  "browser_tabs",
  "browser_drag",
  "browser_handle_dialog",
  "run_task",
  "get_task",
  "cancel_task",
  "list_tasks",
];

async function mcpToken(name = "Test client"): Promise<McpTokenCreated> {
  const res = await post(mimo, "/api/mcp/tokens", { name });
  assert.equal(res.status, 201, await res.clone().text());
  return (await res.json()) as McpTokenCreated;
}

async function connect(token: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${mimo.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "mimo-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** An extension stand-in called `name` and an MCP client of a token of its own; `end` closes both. */
async function session(name: string): Promise<{ ext: ExtensionClient; token: string; client: Client; end: () => Promise<void> }> {
  const ext = await ExtensionClient.connect(mimo, name);
  const { token } = await mcpToken();
  const { client } = await connect(token);
  return {
    ext,
    token,
    client,
    end: async () => {
      await client.close();
      await ext.close();
    },
  };
}

/** One raw POST /mcp. */
function rpc(token: string | null, body: unknown, headers: Record<string, string> = {}, method = "POST"): Promise<Response> {
  return fetch(`${mimo.url}/mcp`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: method === "POST" ? (typeof body === "string" ? body : JSON.stringify(body)) : undefined,
  });
}

const initialize = (protocolVersion: string, id: number | string = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** A raw session: its id and the revision it speaks. */
async function rawSession(token: string, protocolVersion = "2025-11-25") {
  const res = await rpc(token, initialize(protocolVersion));
  assert.equal(res.status, 200, await res.clone().text());
  const sessionId = res.headers.get("mcp-session-id");
  assert.ok(sessionId);
  const body = (await res.json()) as { result: { protocolVersion: string } };
  return { sessionId, version: body.result.protocolVersion };
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === "text" ? c.text : `<${c.type}>`)).join("\n");
}

/** The next `browser_action` the stand-in extension receives after `from` frames. */
async function nextAction(ext: ExtensionClient, from: number): Promise<BrowserAction> {
  const frame = await ext.waitFor((m) => m.type === "browser_action", "a browser action", 10_000, from);
  return (frame as Extract<ServerToExtension, { type: "browser_action" }>).action;
}

function respond(ext: ExtensionClient, action: BrowserAction, result: unknown) {
  ext.send({ type: "action_ack", actionId: action.actionId, attempt: action.attempt, taskId: action.taskId });
  ext.send({
    type: "action_result",
    outcome: { actionId: action.actionId, attempt: action.attempt, taskId: action.taskId, status: "ok", result, warnings: [] },
  });
}

const actionsSent = (ext: ExtensionClient) => ext.received.filter((m) => m.type === "browser_action").length;

/**
 * The session's first navigation, to `url` (its task's tab `tabId`), answered by the stand-in
 * extension, then a snapshot of it answered with `index`: the task_start action.
 */
async function openAndRead(ext: ExtensionClient, client: Client, url: string, tabId: number, index: Record<string, unknown>): Promise<BrowserAction> {
  let from = ext.received.length;
  const navigating = client.callTool({ name: "browser_navigate", arguments: { url } });
  const start = await nextAction(ext, from);
  respond(ext, start, { tabId, windowId: 2, url });
  await navigating;
  from = ext.received.length;
  const snapshotting = client.callTool({ name: "browser_snapshot", arguments: {} });
  respond(ext, await nextAction(ext, from), { url, tabs: [], ...index });
  await snapshotting;
  return start;
}

describe("MCP over Streamable HTTP", () => {
  ownRuntime({ bindings: { MIMO_AUTH_MAX_FAILURES: "1000" } }, (m) => (mimo = m));

  it("makes MCP tokens shown once, lists them without secrets, and revokes them", async () => {
    const made = await mcpToken("Claude Code");
    assert.match(made.token, /^mimo_mcp_[0-9a-f]{64}$/);
    assert.match(made.id, /^mcp-[0-9a-f]{16}$/);
    const list = (await (await api(mimo, "/api/mcp/tokens")).json()) as McpTokenList;
    const listed = list.tokens.find((t) => t.id === made.id);
    assert.deepEqual(listed, { id: made.id, name: "Claude Code", createdAt: made.createdAt });
    assert.ok(!JSON.stringify(list).includes(made.token), "no secret in the list");
    assert.equal((await post(mimo, "/api/mcp/tokens", { name: " " })).status, 400);
    assert.equal((await post(mimo, "/api/mcp/tokens", { name: "x".repeat(101) })).status, 400);

    // An MCP token opens /mcp only; the deployment token and an extension's do not open /mcp.
    assert.equal((await api(mimo, "/api/mcp/tokens", made.token)).status, 401);
    const ext = await ExtensionClient.connect(mimo, "token-maker");
    assert.equal((await post(mimo, "/api/mcp/tokens", { name: "sneaky" }, ext.token)).status, 403);
    for (const token of [mimo.token, ext.token]) {
      assert.equal((await rpc(token, initialize("2025-11-25"))).status, 401);
    }
    await ext.close();

    const { sessionId } = await rawSession(made.token);
    const revoked = await fetch(`${mimo.url}/api/mcp/tokens/${made.id}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } });
    assert.equal(revoked.status, 204);
    const after = (await (await api(mimo, "/api/mcp/tokens")).json()) as McpTokenList;
    assert.ok(!after.tokens.some((t) => t.id === made.id));
    // Its sessions with it.
    assert.equal((await rpc(made.token, { jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": sessionId })).status, 401);
    const again = await fetch(`${mimo.url}/api/mcp/tokens/${made.id}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } });
    assert.equal(again.status, 404);
  });

  it("initializes with the SDK's client, lists the tools, and negotiates older revisions down", async () => {
    const { token } = await mcpToken();
    const { client, transport } = await connect(token);
    assert.match(transport.sessionId ?? "", /^[0-9a-f]{64}$/, "its object's unique id");
    assert.equal(transport.protocolVersion, "2025-11-25");
    assert.equal(client.getServerVersion()?.name, "mimo");
    assert.deepEqual(client.getServerCapabilities()?.tools, { listChanged: false });
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      TOOLS,
    );
    assert.deepEqual(tools.find((t) => t.name === "browser_click")?.inputSchema.required, ["ref"]);
    await client.ping();
    await client.close();

    for (const [asked, answered] of [
      ["2025-06-18", "2025-06-18"],
      ["2025-03-26", "2025-03-26"],
      ["2024-11-05", "2025-11-25"],
    ]) {
      const { sessionId, version } = await rawSession(token, asked);
      assert.equal(version, answered, asked);
      const ping = { jsonrpc: "2.0", id: 2, method: "ping" };
      assert.equal((await rpc(token, ping, { "mcp-session-id": sessionId, "mcp-protocol-version": answered })).status, 200);
      // Without the header: taken as 2025-03-26's client, which sent none.
      assert.equal((await rpc(token, ping, { "mcp-session-id": sessionId })).status, 200);
      const unsupported = await rpc(token, ping, { "mcp-session-id": sessionId, "mcp-protocol-version": "2024-11-05" });
      assert.equal(unsupported.status, 400);
      assert.match(((await unsupported.json()) as JsonRpcErrorResponse).error.message, /not supported/);
    }
    const { sessionId } = await rawSession(token, "2025-06-18");
    const other = await rpc(token, { jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" });
    assert.equal(other.status, 400, "another revision than the session's");
  });

  it("refuses a missing or wrong token with 401 and says where its metadata is", async () => {
    const metadataUrl = `${mimo.url}/.well-known/oauth-protected-resource`;
    for (const token of [null, "mimo_mcp_" + "0".repeat(64), "nonsense"]) {
      const res = await rpc(token, initialize("2025-11-25"));
      assert.equal(res.status, 401, String(token));
      assert.equal(res.headers.get("www-authenticate"), `Bearer resource_metadata="${metadataUrl}"`);
    }
    const metadata = (await (await fetch(metadataUrl)).json()) as ProtectedResourceMetadata;
    assert.equal(metadata.resource, `${mimo.url}/mcp`);
    assert.deepEqual(metadata.bearer_methods_supported, ["header"]);
    assert.deepEqual(metadata.authorization_servers, [mimo.url], "this deployment, through OAuth");
    // Where RFC 9728 puts the metadata of a resource with a path: the same document.
    assert.deepEqual(await (await fetch(`${metadataUrl}/mcp`)).json(), metadata);
    await assert.rejects(connect("mimo_mcp_" + "1".repeat(64)));
  });

  it("refuses another site's page (Origin) with 403, and lets the web app's own origin in", async () => {
    const { token } = await mcpToken();
    const foreign = await rpc(token, initialize("2025-11-25"), { origin: "https://evil.example" });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.headers.get("mcp-session-id"), null, "no session made");
    const own = await rpc(token, initialize("2025-11-25"), { origin: new URL(mimo.url).origin });
    assert.equal(own.status, 200);
  });

  it("holds sessions to the transport's rules: named after initialize, ended by DELETE, one token's own", async () => {
    const { token } = await mcpToken();
    const ping = { jsonrpc: "2.0", id: 9, method: "ping" };
    const missing = await rpc(token, ping);
    assert.equal(missing.status, 400);
    assert.equal(((await missing.json()) as JsonRpcErrorResponse).error.code, -32000);
    const unknown = await rpc(token, ping, { "mcp-session-id": "0".repeat(32) });
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as JsonRpcErrorResponse).error.code, -32001);
    assert.equal((await rpc(token, ping, { "mcp-session-id": "not-ours" })).status, 404);
    // An id of the right shape that this deployment never made reaches no object.
    assert.equal((await rpc(token, ping, { "mcp-session-id": "a".repeat(64) })).status, 404);

    const { sessionId } = await rawSession(token);
    const headers = { "mcp-session-id": sessionId };
    assert.equal((await rpc(token, initialize("2025-11-25"), headers)).status, 400, "initialized once");
    const stranger = await mcpToken("Another client");
    assert.equal((await rpc(stranger.token, ping, headers)).status, 404, "another token's session is not found");
    assert.equal((await rpc(stranger.token, null, headers, "DELETE")).status, 404, "nor ended by it");
    assert.equal((await rpc(token, null, headers, "GET")).status, 405);
    assert.equal((await rpc(token, { jsonrpc: "2.0", method: "notifications/initialized" }, headers)).status, 202);
    assert.equal((await rpc(token, ping, headers)).status, 200);
    assert.equal((await rpc(token, null, headers, "DELETE")).status, 204);
    assert.equal((await rpc(token, ping, headers)).status, 404, "ended");
    assert.equal((await rpc(token, null, headers, "DELETE")).status, 404);

    // The SDK's client ends its session the same way.
    const { client, transport } = await connect(token);
    const ended = transport.sessionId!;
    await transport.terminateSession();
    assert.equal((await rpc(token, ping, { "mcp-session-id": ended })).status, 404);
    await client.close();
  });

  it("answers bad JSON-RPC with the specification's codes, and runs nothing", async () => {
    const ext = await ExtensionClient.connect(mimo, "bad-rpc");
    const { token } = await mcpToken();
    const { sessionId } = await rawSession(token);
    const headers = { "mcp-session-id": sessionId };
    const cases: Array<[unknown, number, number]> = [
      ["{not json", 400, -32700],
      [[{ jsonrpc: "2.0", id: 1, method: "ping" }], 400, -32600],
      [{ jsonrpc: "1.0", id: 1, method: "ping" }, 200, -32600],
      [{ jsonrpc: "2.0", id: null, method: "tools/call" }, 400, -32600],
      [{ jsonrpc: "2.0", id: 1, method: "resources/list" }, 200, -32601],
      [{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { arguments: { url: "http://127.0.0.1/" } } }, 200, -32602],
      [{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "browser_evaluate", arguments: { function: "() => 1" } } }, 200, -32602],
    ];
    for (const [body, status, code] of cases) {
      const res = await rpc(token, body, headers);
      assert.equal(res.status, status, JSON.stringify(body));
      assert.equal(((await res.json()) as JsonRpcErrorResponse).error.code, code, JSON.stringify(body));
    }
    // Arguments that cannot be used: a tool error, for the model to read.
    const badRef = await rpc(token, { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "browser_navigate", arguments: { url: 7 } } }, headers);
    const answered = (await badRef.json()) as { id: number; result: CallToolResult };
    assert.equal(answered.id, 5);
    assert.equal(answered.result.isError, true);
    assert.match(text(answered.result), /browser_navigate's arguments/);
    assert.equal(actionsSent(ext), 0, "nothing reached the extension");
    await ext.close();
  });

  it("runs tool calls as actions of the session's task, and the consent gate holds what needs the person", async () => {
    const { ext, client, end } = await session("mcp-runner");

    const before = await client.callTool({ name: "browser_snapshot", arguments: {} });
    assert.equal(before.isError, true);
    assert.match(text(before), /call browser_navigate first/);
    assert.equal(actionsSent(ext), 0);

    let from = ext.received.length;
    const navigating = client.callTool({ name: "browser_navigate", arguments: { url: "http://127.0.0.1:9/shop" } });
    const start = await nextAction(ext, from);
    assert.equal(start.name, "task_start", "the first navigation opens the task's tab");
    assert.equal((start.params as { url?: string }).url, "http://127.0.0.1:9/shop");
    respond(ext, start, { tabId: 41, windowId: 2, url: "http://127.0.0.1:9/shop" });
    assert.equal(text(await navigating), "Navigated to http://127.0.0.1:9/shop");

    from = ext.received.length;
    const snapshotting = client.callTool({ name: "browser_snapshot", arguments: {} });
    const index = await nextAction(ext, from);
    assert.equal(index.name, "browser_dom_index");
    assert.equal(index.taskId, start.taskId, "the session's one task");
    respond(ext, index, { elements: [], text: "[1]<button>Buy</button>\n[2]<input placeholder=Name>", url: "http://127.0.0.1:9/shop", title: "Shop", tabs: [] });
    const snapshot = text(await snapshotting);
    assert.match(snapshot, /^Page URL: http:\/\/127\.0\.0\.1:9\/shop\nPage title: Shop\n/);
    assert.match(snapshot, /\[1\]<button>Buy<\/button>\n\[2\]<input placeholder=Name>$/);

    from = ext.received.length;
    const typing = client.callTool({ name: "browser_type", arguments: { ref: "2", element: "Name field", text: "Ada", submit: true } });
    const type = await nextAction(ext, from);
    // With what the list said the field is (nothing special), checked again just before typing.
    assert.deepEqual({ name: type.name, params: type.params }, { name: "browser_type", params: { clickId: 2, expect: {}, text: "Ada", submit: true } });
    respond(ext, type, {});
    assert.equal(text(await typing), "Typed into [2] and pressed Enter");

    // Tabs by their index in the latest list.
    from = ext.received.length;
    const opening = client.callTool({ name: "browser_tabs", arguments: { action: "new", url: "http://127.0.0.1:9/help" } });
    const open = await nextAction(ext, from);
    assert.deepEqual({ name: open.name, params: open.params }, { name: "browser_open_tab", params: { url: "http://127.0.0.1:9/help" } });
    const tabs = [
      { tabId: 41, url: "http://127.0.0.1:9/shop", title: "Shop", current: false },
      { tabId: 42, url: "http://127.0.0.1:9/help", title: "Help", current: true },
    ];
    respond(ext, open, { tabId: 42, url: "http://127.0.0.1:9/help", title: "Help", tabs });
    assert.equal(text(await opening), "Tabs (index: URL — title):\n- 0: http://127.0.0.1:9/shop — Shop\n- 1 (current): http://127.0.0.1:9/help — Help");
    from = ext.received.length;
    const selecting = client.callTool({ name: "browser_tabs", arguments: { action: "select", index: 0 } });
    const select = await nextAction(ext, from);
    assert.deepEqual({ name: select.name, params: select.params }, { name: "browser_switch_tab", params: { tabId: 41 } });
    respond(ext, select, { tabId: 41, url: "http://127.0.0.1:9/shop", title: "Shop", tabs: tabs.map((t) => ({ ...t, current: t.tabId === 41 })) });
    assert.match(text(await selecting), /- 0 \(current\): http:\/\/127\.0\.0\.1:9\/shop — Shop/);
    const beyond = await client.callTool({ name: "browser_tabs", arguments: { action: "close", index: 5 } });
    assert.equal(beyond.isError, true);
    assert.match(text(beyond), /no tab 5 in the latest list \(2 tabs\)/);

    // Sending an e-mail address to a site the person never named needs their confirmation,
    // which an MCP client cannot give: a tool error, and nothing is queued or sent.
    const sent = actionsSent(ext);
    const held = await client.callTool({ name: "browser_navigate", arguments: { url: "https://tracker.example/p?email=ada@example.com" } });
    assert.equal(held.isError, true);
    assert.match(text(held), /waits for the person's confirmation/);
    const listed = await api(mimo, `/api/task/${start.taskId}/actions`);
    const actions = (await listed.json()) as Array<{ command: { name: string } }>;
    assert.deepEqual(
      actions.map((a) => a.command.name),
      ["task_start", "browser_dom_index", "browser_type", "browser_open_tab", "browser_switch_tab"],
    );
    assert.equal(actionsSent(ext), sent, "nothing reached the extension");
    await end();
  });

  it("fills a form one action per field, in order, and stops at the first that fails", async () => {
    const { ext, client, end } = await session("mcp-form");
    await openAndRead(ext, client, "http://127.0.0.1:9/signup", 61, {
      elements: [],
      text: "[1]<input placeholder=Name>\n[2]<input type=checkbox checked>Newsletter\n[3]<select>Country",
      title: "Sign up",
    });

    let from = ext.received.length;
    const filling = client.callTool({
      name: "browser_fill_form",
      arguments: {
        fields: [
          { name: "Name", type: "textbox", ref: "1", value: "Ada" },
          { name: "Newsletter", type: "checkbox", ref: "2", value: "true" },
          { name: "Country", type: "combobox", ref: "3", value: "Narnia" },
          { name: "Comment", type: "textbox", ref: "4", value: "never typed" },
        ],
      },
    });
    const type = await nextAction(ext, from);
    assert.deepEqual([type.name, type.params], ["browser_type", { clickId: 1, expect: {}, text: "Ada" }]);
    from = ext.received.length;
    respond(ext, type, {});
    const tick = await nextAction(ext, from);
    assert.deepEqual([tick.name, tick.params], ["browser_click", { clickId: 2, expect: {}, checked: true }]);
    from = ext.received.length;
    respond(ext, tick, { clicked: false, checked: true });
    const select = await nextAction(ext, from);
    assert.equal(select.name, "browser_select_option");
    const sent = actionsSent(ext);
    ext.send({ type: "action_ack", actionId: select.actionId, attempt: select.attempt, taskId: select.taskId });
    ext.send({
      type: "action_result",
      outcome: { actionId: select.actionId, attempt: select.attempt, taskId: select.taskId, status: "error", error: { code: "TARGET_NOT_FOUND", message: 'no option "Narnia"', retryable: false }, warnings: [] },
    });
    const filled = (await filling) as CallToolResult;
    assert.equal(filled.isError, true);
    assert.equal(
      text(filled),
      'Filled 2 fields, then stopped at "Country"\nName: Typed into [1]\nNewsletter: [2] was ticked already\nCountry: TARGET_NOT_FOUND: no option "Narnia"\nThe fields after it were not filled.',
    );
    assert.equal(actionsSent(ext), sent, "nothing after the failed field");
    await end();
  });

  it("keeps a file the client gives among the task's files, then puts it into the page's file field", async () => {
    const { ext, client, end } = await session("mcp-upload");
    const notYet = await client.callTool({ name: "browser_file_upload", arguments: { ref: "1", name: "a.txt", mimeType: "text/plain", data: "aGk=" } });
    assert.equal(notYet.isError, true);
    assert.match(text(notYet), /call browser_navigate first/);
    const start = await openAndRead(ext, client, "http://127.0.0.1:9/apply", 71, {
      elements: [],
      text: "[1]<input type=file>CV",
      title: "Apply",
    });
    const web = await WebClient.connect(mimo, start.taskId);
    // Larger than what other routes take (256 KiB), as a scanned document is.
    const pdf = `%PDF-1.4 my CV ${"0123456789abcdef".repeat(25_000)}`;

    // What the person's own attachments may not be, neither may a client's: nothing is stored or sent.
    const sent = actionsSent(ext);
    const program = await client.callTool({ name: "browser_file_upload", arguments: { ref: "1", name: "setup.exe", mimeType: "application/x-msdownload", data: "TVo=" } });
    assert.equal(program.isError, true);
    assert.match(text(program), /^Not done: /);
    const huge = await client.callTool({ name: "browser_file_upload", arguments: { ref: "1", name: "scan.pdf", mimeType: "application/pdf", data: Buffer.alloc(10 * 1024 * 1024 + 1).toString("base64") } });
    assert.equal(huge.isError, true);
    assert.match(text(huge), /^Not done: .*10485760/);
    assert.equal(actionsSent(ext), sent);

    const from = ext.received.length;
    const uploading = client.callTool({ name: "browser_file_upload", arguments: { ref: "1", element: "CV", name: "CV.pdf", mimeType: "application/pdf", data: Buffer.from(pdf).toString("base64") } });
    const attached = (await web.waitFor((e) => e.type === "fileAttached", "the client's file among the task's")) as Extract<FrontendEvent, { type: "fileAttached" }>;
    assert.deepEqual(attached.attachment, { artifactId: attached.attachment.artifactId, name: "CV.pdf", contentType: "application/pdf", size: pdf.length });
    const put = await nextAction(ext, from);
    assert.deepEqual([put.name, put.params], ["browser_upload_file", { clickId: 1, expect: {}, artifactId: attached.attachment.artifactId, name: "CV.pdf", contentType: "application/pdf" }]);
    respond(ext, put, { uploaded: "CV.pdf" });
    assert.equal(text(await uploading), 'Put "CV.pdf" into [1]');
    // The extension fetches it as it fetches the person's files.
    const lookup = await api(mimo, `/api/artifacts/${attached.attachment.artifactId}`, ext.token);
    assert.equal(lookup.status, 200, await lookup.clone().text());
    const { downloadUrl } = (await lookup.json()) as { downloadUrl: string };
    assert.equal(await (await fetch(downloadUrl)).text(), pdf);
    await web.close();
    await end();
  });

  it("holds a step the person must confirm for their answer in the web app when the client takes no forms", async () => {
    // The SDK's client declares no elicitation: it cannot put the question to the person.
    const { ext, client, end } = await session("mcp-held");
    const start = await openAndRead(ext, client, "http://127.0.0.1:9/account", 51, {
      elements: [
        { clickId: 1, tag: "button", text: "Delete account", frameId: 0, bbox: { x: 0, y: 0, w: 10, h: 10 } },
        { clickId: 2, tag: "button", text: "Save", frameId: 0, bbox: { x: 0, y: 20, w: 10, h: 10 } },
      ],
      text: "[1]<button>Delete account</button>\n[2]<button>Save</button>",
      title: "Account",
    });
    const web = await WebClient.connect(mimo, start.taskId);

    // The irreversible click waits for the person, asked in the web app; nothing runs meanwhile.
    let sent = actionsSent(ext);
    const clicking = client.callTool({ name: "browser_click", arguments: { ref: "1", element: "Delete account" } });
    const asked = await web.waitFor((e) => e.type === "confirmationRequested", "the question", 10_000);
    assert.ok(asked.type === "confirmationRequested");
    assert.equal(asked.step, 0);
    assert.equal(asked.targetName, "Delete account");
    assert.match(asked.reason, /delete/i);
    assert.equal(actionsSent(ext), sent, "nothing reached the extension before the answer");
    // They approve it there: the click runs once and the call answers from its outcome.
    let from = ext.received.length;
    web.send({ type: "confirm", step: 0, approve: true });
    const click = await nextAction(ext, from);
    // With what the button was when they were asked, checked again just before the click.
    assert.deepEqual({ name: click.name, params: click.params }, { name: "browser_click", params: { clickId: 1, expect: {} } });
    respond(ext, click, {});
    const clicked = (await clicking) as CallToolResult;
    assert.notEqual(clicked.isError, true, text(clicked));
    assert.match(text(clicked), /Clicked/);
    const answered = await web.waitFor((e) => e.type === "confirmationAnswered" && e.step === 0 && e.approved, "the answer", 5_000);
    assert.ok(answered.type === "confirmationAnswered" && answered.by === "web");

    // Declined there, with a reason: the call says so and nothing runs.
    sent = actionsSent(ext);
    const seen = web.received.length;
    const declining = client.callTool({ name: "browser_click", arguments: { ref: "1", element: "Delete account" } });
    await web.waitFor((e) => e.type === "confirmationRequested", "the second question", 10_000, seen);
    web.send({ type: "confirm", step: 0, approve: false, reason: "keep my account" });
    const declined = (await declining) as CallToolResult;
    assert.equal(declined.isError, true);
    assert.match(text(declined), /declined this step in Mimo, saying "keep my account"/);
    assert.equal(actionsSent(ext), sent, "nothing reached the extension");
    // A step the page does not make risky runs at once.
    from = ext.received.length;
    const saving = client.callTool({ name: "browser_click", arguments: { ref: "2", element: "Save" } });
    respond(ext, await nextAction(ext, from), {});
    assert.notEqual(((await saving) as CallToolResult).isError, true);
    web.close();
    await end();
  });

  // Last: it restarts the runtime.
  it("makes one task of a session's first tool calls sent at once", async () => {
    const { ext, client, end } = await session("mcp-racer");
    const calls = Promise.all(["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"].map((url) => client.callTool({ name: "browser_navigate", arguments: { url } })));
    // The stand-in extension answers whatever it is sent until both calls are answered.
    const done = calls.then(() => null);
    const actions: BrowserAction[] = [];
    for (let from = ext.received.length; ; ) {
      const waiting = ext.waitFor((m) => m.type === "browser_action", "a browser action", 20_000, from);
      waiting.catch(() => undefined);
      const frame = await Promise.race([done, waiting]);
      if (frame === null) break;
      const { action } = frame as Extract<ServerToExtension, { type: "browser_action" }>;
      actions.push(action);
      respond(ext, action, { tabId: 41, windowId: 2, url: (action.params as { url?: string }).url ?? "" });
      from = ext.received.indexOf(frame) + 1;
    }
    assert.ok(actions.length >= 1);
    const tasks = new Set(actions.map((a) => a.taskId));
    assert.equal(tasks.size, 1, `one task for the session: ${[...tasks].join(", ")}`);
    // And its later calls act in it too.
    const from = ext.received.length;
    const snapshotting = client.callTool({ name: "browser_snapshot", arguments: {} });
    const index = await nextAction(ext, from);
    assert.equal(index.taskId, actions[0]!.taskId);
    respond(ext, index, { elements: [], text: "[1]<button>Buy</button>", url: "http://127.0.0.1:9/a", title: "A", tabs: [] });
    await snapshotting;
    await end();
  });

  it("runs Mimo's agent on a goal: its answer in the schema asked for, the session's runs listed, a run canceled, another session's refused", async () => {
    const { ext, token, client, end } = await session("mcp-agent");
    // The stand-in answers every action at once, but keeps running the task_start of a page
    // called slow (acked, never answered): that run waits until it is canceled.
    const page = { elements: [{ clickId: 1, tag: "b", text: "12.50", frameId: 0 }], text: "Blue mug [1]<b>12.50</b>", url: "http://127.0.0.1:9/shop", title: "Shop", scrollX: 0, scrollY: 0 };
    ext.serve((action) => {
      const url = (action.params as { url?: string }).url ?? "";
      if (url.includes("/slow")) return undefined;
      if (action.name === "task_start") return { result: { tabId: 21, windowId: 4, url } };
      return { result: action.name === "browser_observe" ? observation(page, "Blue mug, 12.50") : {} };
    });
    const priceSchema = { type: "object", properties: { price: { type: "number" } }, required: ["price"] };
    mimo.llm.script([
      agentStep({ navigate: { url: "http://127.0.0.1:9/shop" } }, "Opening the shop."),
      agentStep({ done: { success: true, text: "The blue mug costs 12.50.", data: { price: 12.5 } } }, "Read the price."),
    ]);
    // With a progress token the answer streams (SSE): a notification per finished step first.
    const progress: Array<{ progress: number; message?: string }> = [];
    const ran = (await client.callTool(
      { name: "run_task", arguments: { goal: "What does the blue mug cost at http://127.0.0.1:9/shop?", answerSchema: priceSchema, waitSeconds: 60 } },
      undefined,
      { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true },
    )) as CallToolResult;
    assert.equal(ran.isError, undefined, text(ran));
    assert.ok(progress.length >= 1, JSON.stringify(progress));
    assert.match(progress[0]!.message ?? "", /^Step 1: navigate \{"url":"http:\/\/127\.0\.0\.1:9\/shop"\}$/);
    assert.ok(progress.every((p, i) => i === 0 || p.progress > progress[i - 1]!.progress), `progress only grows: ${JSON.stringify(progress)}`);
    assert.deepEqual(ran.structuredContent, { price: 12.5 });
    const taskId = /^Task ([0-9a-f-]{36}) finished in 2 steps\.\n\nThe blue mug costs 12\.50\./.exec(text(ran))?.[1];
    assert.ok(taskId, text(ran));
    // The run is a task like one from the web app: its actions, in the person's browser.
    const actions = (await (await api(mimo, `/api/task/${taskId}/actions`)).json()) as Array<{ command: { name: string }; state: string }>;
    assert.deepEqual(actions.map((a) => [a.command.name, a.state]), [["task_start", "succeeded"], ["browser_observe", "succeeded"]]);
    const got = (await client.callTool({ name: "get_task", arguments: { taskId } })) as CallToolResult;
    assert.deepEqual(got.structuredContent, { price: 12.5 });

    // A run that cannot end by itself: answered where it stands when the wait is over, then
    // canceled, and listed with the first.
    mimo.llm.script([agentStep({ navigate: { url: "http://127.0.0.1:9/slow" } }, "Opening it.")]);
    const slow = (await client.callTool({ name: "run_task", arguments: { goal: "Open http://127.0.0.1:9/slow", waitSeconds: 2 } })) as CallToolResult;
    const slowId = /^Task ([0-9a-f-]{36}) is still running\. Call get_task/.exec(text(slow))?.[1];
    assert.ok(slowId, text(slow));
    const canceled = (await client.callTool({ name: "cancel_task", arguments: { taskId: slowId } })) as CallToolResult;
    assert.match(text(canceled), new RegExp(`^Task ${slowId} (is canceled|finished)`), text(canceled));
    const summary = (await (await api(mimo, `/api/task/${slowId}`)).json()) as { status: string };
    assert.equal(summary.status, "canceled");
    const listed = text(await client.callTool({ name: "list_tasks", arguments: {} }));
    assert.match(listed, new RegExp(`^Tasks run in this session:\n- ${slowId}: (canceled|finished)[^\n]*\n- ${taskId}: finished`));

    // Another session reaches none of them.
    const other = await connect(token);
    const refused = (await other.client.callTool({ name: "get_task", arguments: { taskId } })) as CallToolResult;
    assert.equal(refused.isError, true);
    assert.match(text(refused), /no task .* was run in this session/);
    assert.match(text(await other.client.callTool({ name: "list_tasks", arguments: {} })), /No task was run in this session yet/);
    await end();
  });

  it("resumes a run's progress stream that dropped from the last event it sent, in its own session only", async () => {
    const ext = await ExtensionClient.connect(mimo, "mcp-resume");
    const { token } = await mcpToken();
    const { sessionId, version } = await rawSession(token);
    const headers = { "mcp-session-id": sessionId, "mcp-protocol-version": version };
    // The stand-in keeps the run's first step (task_start) until the test answers it.
    let held: BrowserAction | undefined;
    const page = { elements: [{ clickId: 1, tag: "b", text: "12.50", frameId: 0 }], text: "Blue mug [1]<b>12.50</b>", url: "http://127.0.0.1:9/shop", title: "Shop", scrollX: 0, scrollY: 0 };
    ext.serve((action) => {
      if (action.name === "task_start") {
        held = action;
        return undefined;
      }
      return { result: action.name === "browser_observe" ? observation(page, "Blue mug, 12.50") : {} };
    });
    mimo.llm.script([
      agentStep({ navigate: { url: "http://127.0.0.1:9/shop" } }, "Opening the shop."),
      agentStep({ done: { success: true, text: "The blue mug costs 12.50." } }, "Read the price."),
    ]);
    const call = { jsonrpc: "2.0", id: 41, method: "tools/call", params: { name: "run_task", arguments: { goal: "What does the blue mug cost?", waitSeconds: 60 }, _meta: { progressToken: "p-1" } } };
    const dropped = new AbortController();
    const streamed = await fetch(`${mimo.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify(call),
      signal: dropped.signal,
    });
    assert.equal(streamed.headers.get("content-type"), "text/event-stream");
    // The stream's first event says where it stands; then the connection drops.
    const reader = streamed.body!.getReader();
    let first = "";
    while (!first.includes("\n\n")) first += new TextDecoder().decode((await reader.read()).value);
    const lastEventId = /^id: (\S+)$/m.exec(first)?.[1];
    assert.ok(lastEventId, first);
    dropped.abort();

    // A resumption is the session's own: another token's, or an id of no stream, gets nothing.
    const stranger = await mcpToken("Stranger");
    assert.equal((await rpc(stranger.token, null, { ...headers, "last-event-id": lastEventId }, "GET")).status, 404);
    assert.equal((await rpc(token, null, { ...headers, "last-event-id": "run-e30" }, "GET")).status, 400);
    // An id made up to name a task the session did not run (the person's own): refused, and
    // nothing of that task is streamed.
    const theirs = await newTask(mimo);
    const forged = `run-${Buffer.from(JSON.stringify({ t: theirs, i: 41, p: "p-1", s: 0, d: Date.now() + 60_000 })).toString("base64url")}`;
    const refusedForgery = await rpc(token, null, { ...headers, "last-event-id": forged }, "GET");
    assert.equal(refusedForgery.status, 400);
    assert.doesNotMatch(await refusedForgery.text(), new RegExp(theirs));
    assert.equal((await rpc(token, null, headers, "GET")).status, 405, "no stream of its own without one");

    // Resumed, the stream goes on: the step the run finishes meanwhile, then the call's answer.
    const resumed = await rpc(token, null, { ...headers, "last-event-id": lastEventId }, "GET");
    assert.equal(resumed.status, 200);
    assert.equal(resumed.headers.get("content-type"), "text/event-stream");
    const rest = resumed.text();
    const started = Date.now();
    while (held === undefined && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 20));
    assert.ok(held, "the run's first step reached the extension");
    respond(ext, held, { tabId: 23, windowId: 6, url: "http://127.0.0.1:9/shop" });
    const messages = (await rest)
      .split("\n")
      .filter((line) => line.startsWith("data: ") && line.length > "data: ".length)
      .map((line) => JSON.parse(line.slice("data: ".length)) as { id?: number; method?: string; params?: { progressToken: string; progress: number }; result?: CallToolResult });
    const notes = messages.filter((m) => m.method === "notifications/progress");
    assert.ok(notes.length >= 1 && notes.every((n) => n.params?.progressToken === "p-1"), JSON.stringify(messages));
    const answer = messages.find((m) => m.id === 41);
    assert.ok(answer?.result, JSON.stringify(messages));
    assert.match(text(answer.result), /finished in 2 steps\.\n\nThe blue mug costs 12\.50\./);
    await ext.close();
  });

  it("a run's step that needs the person waits for them in the web app: no MCP call can approve it", async () => {
    const { ext, client, end } = await session("mcp-agent-confirm");
    const page = { elements: [{ clickId: 1, tag: "button", text: "Buy now", frameId: 0 }], text: "Blue mug 12.50\n[1]<button>Buy now</button>", url: "http://127.0.0.1:9/shop", title: "Shop", scrollX: 0, scrollY: 0 };
    ext.serve((action) => {
      if (action.name === "task_start") return { result: { tabId: 22, windowId: 5, url: "http://127.0.0.1:9/shop" } };
      return { result: action.name === "browser_observe" ? observation(page, "Blue mug, 12.50") : {} };
    });
    mimo.llm.script([
      agentStep({ navigate: { url: "http://127.0.0.1:9/shop" } }, "Opening the shop."),
      agentStep({ click: { index: 1 } }, "Buying."),
      agentStep({ done: { success: true, text: "Bought the blue mug." } }, "Bought."),
    ]);
    const ran = (await client.callTool({ name: "run_task", arguments: { goal: "Buy the blue mug at http://127.0.0.1:9/shop", waitSeconds: 3 } })) as CallToolResult;
    const taskId = /^Task ([0-9a-f-]{36}) is waiting for the person to confirm a step in Mimo's web app or side panel\./.exec(text(ran))?.[1];
    assert.ok(taskId, text(ran));
    const clicks = async () => ((await (await api(mimo, `/api/task/${taskId}/actions`)).json()) as Array<{ command: { name: string }; state: string }>).filter((a) => a.command.name === "browser_click");
    assert.deepEqual(await clicks(), [], "nothing clicked before the person says so");
    // Waiting again changes nothing, and no tool answers for the person.
    assert.match(text(await client.callTool({ name: "get_task", arguments: { taskId, waitSeconds: 1 } })), /is waiting for the person to confirm/);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(!tools.some((name) => /confirm|approve/.test(name)), tools.join(", "));
    assert.deepEqual(await clicks(), []);

    // The person confirms in the web app; the run goes on and ends.
    const web = await WebClient.connect(mimo, taskId);
    const asked = await web.waitFor((e) => e.type === "confirmationRequested", "the confirmation", 10_000);
    assert.ok(asked.type === "confirmationRequested");
    web.send({ type: "confirm", step: asked.step, approve: true });
    const done = (await client.callTool({ name: "get_task", arguments: { taskId, waitSeconds: 30 } })) as CallToolResult;
    assert.match(text(done), new RegExp(`^Task ${taskId} finished in 3 steps\\.\\n\\nBought the blue mug\\.`));
    assert.deepEqual((await clicks()).map((a) => a.state), ["succeeded"]);
    await Promise.all([web.close(), end()]);
  });

  it("keeps a session, its revision and its task across a restart of the runtime", async () => {
    const ext = await ExtensionClient.connect(mimo, "restart-1");
    const { token } = await mcpToken();
    const { sessionId } = await rawSession(token, "2025-06-18");
    const headers = { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" };
    const navigate = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "browser_navigate", arguments: { url: "http://127.0.0.1:9/a" } } });
    const opening = rpc(token, navigate(1), headers);
    const start = await nextAction(ext, 0);
    respond(ext, start, { tabId: 5, windowId: 1, url: "http://127.0.0.1:9/a" });
    assert.equal((await opening).status, 200);
    await ext.close();

    await mimo.restart();
    const back = await ExtensionClient.connect(mimo, "restart-2", "Browser restart-1", ext.credential);
    const again = rpc(token, navigate(2), headers);
    const next = await nextAction(back, 0);
    assert.equal(next.name, "browser_navigate", "the task's tab is open already");
    assert.equal(next.taskId, start.taskId, "the same task");
    respond(back, next, {});
    const answer = (await (await again).json()) as { result: CallToolResult };
    assert.equal(text(answer.result), "Navigated to http://127.0.0.1:9/a");
    const other = await rpc(token, { jsonrpc: "2.0", id: 3, method: "ping" }, { ...headers, "mcp-protocol-version": "2025-11-25" });
    assert.equal(other.status, 400, "its revision kept");
    await back.close();
  });
});

describe("MCP sessions left unused", () => {
  ownRuntime({ bindings: { MIMO_MCP_SESSION_IDLE_SECS: "2" } }, (m) => (mimo = m));

  it("expires a session unused for longer than its idle time (404: the client starts a new one); each request starts the wait again", async () => {
    const { token } = await mcpToken();
    const kept = await rawSession(token);
    let keptUsed = Date.now();
    const idle = await rawSession(token);
    const idleUsed = Date.now();
    const ping = (session: { sessionId: string; version: string }) =>
      rpc(token, { jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": session.sessionId, "mcp-protocol-version": session.version });
    // Used every 300 ms, a session stays (a ping sent within its idle time is answered).
    while (Date.now() - idleUsed < 2_600) {
      await new Promise((r) => setTimeout(r, 300));
      const within = Date.now() - keptUsed < 1_800;
      const status = (await ping(kept)).status;
      if (within) assert.equal(status, 200);
      if (status === 200) keptUsed = Date.now();
    }
    // Left alone past it: gone, as an ended session is.
    assert.equal((await ping(idle)).status, 404);
    const again = await rpc(token, initialize("2025-11-25"), { "mcp-session-id": idle.sessionId });
    assert.equal(again.status, 404, "not brought back by initialize");
    await rawSession(token);
  });
});
