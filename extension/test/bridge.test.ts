// The extension's bridge client against a WebSocket server that plays mimo-bridge's side of
// the protocol (the real binary is driven end to end in tests/browser/bridge.test.ts): the
// handshake (it proves the secret only to a bridge that proved it first), how results reach the
// invocation that asked, and what becomes of an invocation whose connection goes away.
import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, it } from "node:test";
import { WebSocketServer } from "ws";
import type { WebSocket as ServerSocket } from "ws";
import type { BridgeInfo, BridgeMessage, BridgeRequest } from "../../protocol/ts/protocol.ts";
import { BridgeClient, BridgeUnavailable, importBridgeKey } from "../src/bridge.ts";
import type { BridgeStatus } from "../src/bridge.ts";

const SECRET = "the-secret-the-bridge-printed-0123456789";
const INFO: BridgeInfo = { version: "1.0.0", root: "/home/me/shared", tools: ["read", "write", "edit", "bash"], allow: [], strict: false, maxConcurrent: 4 };

let server: WebSocketServer;
let url: string;
/** What the stand-in bridge received, frame by frame. */
let received: BridgeRequest[];
let sockets: ServerSocket[];
let statuses: BridgeStatus[];
/** The secret in the extension's settings ("" for none). */
let secret: string;
/** The secret the stand-in bridge knows. */
let bridgeSecret: string;
/** The stand-in skips the challenge and says `ready` at once (as no real bridge would). */
let skipChallenge: boolean;
let client: BridgeClient;

/** A side's proof, computed as the protocol says (node:crypto, not the client's WebCrypto). */
function proof(key: string, side: string, clientNonce: string, bridgeNonce: string): string {
  return createHmac("sha256", key).update(`mimo-bridge v1 ${side}\n${clientNonce}\n${bridgeNonce}`).digest("hex");
}

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
  bridgeSecret = SECRET;
  skipChallenge = false;
  server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // As mimo-bridge: `hello` is answered with a challenge carrying the bridge's proof; `auth`
  // with the right proof is answered `ready`, a wrong one closes.
  server.on("connection", (socket) => {
    sockets.push(socket);
    const bridgeNonce = randomBytes(32).toString("hex");
    let clientNonce = "";
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as BridgeRequest;
      received.push(frame);
      if (frame.type === "hello" && skipChallenge) {
        send(socket, { type: "ready", ...INFO });
      } else if (frame.type === "hello") {
        clientNonce = frame.nonce;
        send(socket, { type: "challenge", nonce: bridgeNonce, proof: proof(bridgeSecret, "bridge", clientNonce, bridgeNonce) });
      } else if (frame.type === "auth") {
        if (frame.proof === proof(bridgeSecret, "client", clientNonce, bridgeNonce)) send(socket, { type: "ready", ...INFO });
        else socket.close(1008, "wrong secret: paste the one mimo-bridge printed into the extension's options");
      }
    });
  });
  client = new BridgeClient({
    settings: async () => ({ bridgeUrl: url, key: secret === "" ? null : await importBridgeKey(secret) }),
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

  it("proves the secret once the bridge proved it, relays an invocation and resolves it with its own result, events aside", async () => {
    await client.restart();
    await until("connected", () => state() === "connected");
    const [hello, auth] = received;
    assert.equal(hello?.type, "hello");
    assert.match((hello as { nonce: string }).nonce, /^[0-9a-f]{64}$/);
    assert.equal(auth?.type, "auth");
    assert.equal(received.length, 2);
    assert.deepEqual(client.info, INFO);

    const first = client.invoke({ id: "a#1", tool: "bash", args: { command: "ls" }, sessionId: "task-1", agentId: "subtask-2" });
    const second = client.invoke({ id: "b#1", tool: "read", args: { path: "notes.md" }, sessionId: "task-1", agentId: "main" });
    await until("both invocations", () => received.length === 4);
    assert.deepEqual(received[2], { type: "invoke", id: "a#1", tool: "bash", args: { command: "ls" }, sessionId: "task-1", agentId: "subtask-2" });
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
    await until("the invocation", () => received.length === 3);
    sockets[0]!.close(1001, "mimo-bridge is stopping");
    await assert.rejects(cut, (e: Error) => e instanceof BridgeUnavailable && /closed before the invocation finished/.test(e.message));
    await until("offline", () => state() === "offline");
    assert.equal(statuses.at(-1)?.lastError, "mimo-bridge is stopping");
    assert.equal(client.info, undefined);
    await assert.rejects(client.invoke({ id: "b#1", tool: "read", args: { path: "x" }, sessionId: "t", agentId: "main" }), /mimo-bridge is stopping/);
    // It tries again on its own, with a new handshake, and is connected.
    await until("connected again", () => state() === "connected");
    assert.equal(received.at(-1)?.type, "auth");
    assert.notEqual((received.at(-2) as { nonce: string }).nonce, (received[0] as { nonce: string }).nonce, "a fresh nonce");
    assert.equal(sockets.length, 2);
  });

  it("proves nothing to a bridge that cannot prove the secret, says why, and connects once the settings are right", async () => {
    secret = "not-the-secret-000000000000000000000000";
    await client.restart();
    await until("refused", () => statuses.some((s) => s.state === "offline" && /wrong secret, or .* is not your mimo-bridge/.test(s.lastError ?? "")));
    // It closed after the bridge's challenge, having sent nothing derived from its secret.
    assert.ok(received.every((frame) => frame.type === "hello"), JSON.stringify(received));
    secret = SECRET;
    await client.restart();
    await until("connected", () => state() === "connected");
    assert.equal(client.info?.root, INFO.root);
  });

  it("sends nothing, not even its proof, to what listens on the port without knowing the secret", async () => {
    // Something else on the bridge's port: it answers with a challenge it cannot prove, or
    // skips the challenge and says it is ready.
    bridgeSecret = "an-impostor-guessing-000000000000000";
    await client.restart();
    await until("refused", () => statuses.some((s) => s.state === "offline" && /could not prove it knows the secret/.test(s.lastError ?? "")));
    await client.restart();
    bridgeSecret = SECRET;
    skipChallenge = true;
    await client.restart();
    await until("refused", () => statuses.some((s) => s.state === "offline" && /ready before proving/.test(s.lastError ?? "")));
    assert.ok(received.length >= 2 && received.every((frame) => frame.type === "hello"), JSON.stringify(received));
    assert.equal(client.info, undefined);
    await assert.rejects(client.invoke({ id: "a#1", tool: "write", args: { path: "x", content: "private" }, sessionId: "t", agentId: "main" }), BridgeUnavailable);
    assert.ok(!received.some((frame) => JSON.stringify(frame).includes("private")));
  });

  it("fails what is pending when its settings change, and connects anew", async () => {
    await client.restart();
    await until("connected", () => state() === "connected");
    const pending = client.invoke({ id: "a#1", tool: "read", args: { path: "x" }, sessionId: "t", agentId: "main" });
    await until("the invocation", () => received.length === 3);
    await client.restart();
    await assert.rejects(pending, /the bridge settings changed/);
    await until("connected again", () => state() === "connected" && sockets.length === 2);
  });
});
