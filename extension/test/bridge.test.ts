// The extension's bridge client against a WebSocket server that plays mimo-bridge's side of
// the protocol (the real binary is driven end to end in tests/browser/bridge.test.ts): what it
// says first, how results reach the invocation that asked, and what becomes of an invocation
// whose connection goes away.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, it } from "node:test";
import { WebSocketServer } from "ws";
import type { WebSocket as ServerSocket } from "ws";
import type { BridgeInfo, BridgeMessage, BridgeRequest } from "../../protocol/ts/protocol.ts";
import { BridgeClient, BridgeUnavailable } from "../src/bridge.ts";
import type { BridgeStatus } from "../src/bridge.ts";

const SECRET = "the-secret-the-bridge-printed-0123456789";
const INFO: BridgeInfo = { version: "1.0.0", root: "/home/me/shared", tools: ["read", "write", "edit", "bash"], allow: [], strict: false, maxConcurrent: 4 };

let server: WebSocketServer;
let url: string;
/** What the stand-in bridge received, frame by frame. */
let received: BridgeRequest[];
let sockets: ServerSocket[];
let statuses: BridgeStatus[];
let secret: string;
let client: BridgeClient;

function send(socket: ServerSocket, message: BridgeMessage): void {
  socket.send(JSON.stringify(message));
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(ok(), `waited in vain for ${what}`);
}

const state = () => statuses.at(-1)?.state;

beforeEach(async () => {
  received = [];
  sockets = [];
  statuses = [];
  secret = SECRET;
  server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // As mimo-bridge: `hello` with the right secret is answered `ready`, a wrong one closes.
  server.on("connection", (socket) => {
    sockets.push(socket);
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as BridgeRequest;
      received.push(frame);
      if (frame.type === "hello") {
        if (frame.secret === SECRET) send(socket, { type: "ready", ...INFO });
        else socket.close(1008, "wrong secret: paste the one mimo-bridge printed into the extension's options");
      }
    });
  });
  client = new BridgeClient({
    settings: async () => ({ bridgeUrl: url, bridgeSecret: secret }),
    changed: (status) => statuses.push(status),
    now: () => Date.now(),
    // The shortest backoff: the first retry comes after 375 ms.
    random: () => 0.999,
  });
});

afterEach(async () => {
  secret = "";
  await client.restart();
  for (const socket of sockets) socket.terminate();
  await new Promise((resolve) => server.close(resolve));
});

describe("the bridge client", () => {
  it("stays off without a secret and refuses invocations saying what to do", async () => {
    secret = "";
    await client.restart();
    assert.deepEqual(statuses, [], "off as it started: it never tried to connect");
    await assert.rejects(client.invoke({ id: "a#1", tool: "read", args: { path: "x" }, sessionId: "t", agentId: "main" }), (e: Error) => e instanceof BridgeUnavailable && /start mimo-bridge/.test(e.message));
    assert.equal(received.length, 0);
  });

  it("says hello with the secret, relays an invocation and resolves it with its own result, events aside", async () => {
    await client.restart();
    await until("connected", () => state() === "connected");
    assert.deepEqual(received[0], { type: "hello", secret: SECRET });
    assert.deepEqual(client.info, INFO);

    const first = client.invoke({ id: "a#1", tool: "bash", args: { command: "ls" }, sessionId: "task-1", agentId: "subtask-2" });
    const second = client.invoke({ id: "b#1", tool: "read", args: { path: "notes.md" }, sessionId: "task-1", agentId: "main" });
    await until("both invocations", () => received.length === 3);
    assert.deepEqual(received[1], { type: "invoke", id: "a#1", tool: "bash", args: { command: "ls" }, sessionId: "task-1", agentId: "subtask-2" });
    const [socket] = sockets;
    // Answered out of order, with the command's events first: each goes to its own caller.
    send(socket!, { type: "result", id: "b#1", ok: true, data: { content: "milk" } });
    send(socket!, { type: "invoke.started", id: "a#1", tool: "bash" });
    send(socket!, { type: "invoke.stdout", id: "a#1", chunk: "notes.md\n" });
    send(socket!, { type: "invoke.finished", id: "a#1", ok: true, durationMs: 3 });
    send(socket!, { type: "result", id: "a#1", ok: true, data: { exitCode: 0, stdout: "notes.md\n" } });
    assert.deepEqual(await second, { type: "result", id: "b#1", ok: true, data: { content: "milk" } });
    assert.deepEqual(await first, { type: "result", id: "a#1", ok: true, data: { exitCode: 0, stdout: "notes.md\n" } });
  });

  it("fails an invocation cut off by the bridge going away, then reconnects by itself", async () => {
    await client.restart();
    await until("connected", () => state() === "connected");
    const cut = client.invoke({ id: "a#1", tool: "bash", args: { command: "sleep 9" }, sessionId: "t", agentId: "main" });
    await until("the invocation", () => received.length === 2);
    sockets[0]!.close(1001, "mimo-bridge is stopping");
    await assert.rejects(cut, (e: Error) => e instanceof BridgeUnavailable && /closed before the invocation finished/.test(e.message));
    await until("offline", () => state() === "offline");
    assert.equal(statuses.at(-1)?.lastError, "mimo-bridge is stopping");
    assert.equal(client.info, undefined);
    await assert.rejects(client.invoke({ id: "b#1", tool: "read", args: { path: "x" }, sessionId: "t", agentId: "main" }), /mimo-bridge is stopping/);
    // It tries again on its own, says hello again, and is connected.
    await until("connected again", () => state() === "connected");
    assert.deepEqual(received.at(-1), { type: "hello", secret: SECRET });
    assert.equal(sockets.length, 2);
  });

  it("says why a wrong secret is refused, and connects once the settings are right", async () => {
    secret = "not-the-secret-000000000000000000000000";
    await client.restart();
    await until("refused", () => statuses.some((s) => s.state === "offline" && /wrong secret/.test(s.lastError ?? "")));
    secret = SECRET;
    await client.restart();
    await until("connected", () => state() === "connected");
    assert.equal(client.info?.root, INFO.root);
  });

  it("fails what is pending when its settings change, and connects anew", async () => {
    await client.restart();
    await until("connected", () => state() === "connected");
    const pending = client.invoke({ id: "a#1", tool: "read", args: { path: "x" }, sessionId: "t", agentId: "main" });
    await until("the invocation", () => received.length === 2);
    await client.restart();
    await assert.rejects(pending, /the bridge settings changed/);
    await until("connected again", () => state() === "connected" && sockets.length === 2);
  });
});
