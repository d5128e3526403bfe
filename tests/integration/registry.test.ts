// The extension side of the spine: presence, the extension list, automatic selection,
// PLUGIN_OFFLINE, snapshot sync to web sockets (late joiners included), bad extension frames.
// A protocol client stands in for the real extension here.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import WebSocket from "ws";
import { PING_FRAME } from "../../protocol/ts/protocol.ts";
import type { BrowserSnapshot, ExtensionList, PairResponse, TabInfo } from "../../protocol/ts/protocol.ts";
import { api, ExtensionClient, newTask, post, sleep, WebClient, wsTicket } from "../support/clients.ts";
import { ownRuntime } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";

// The registry is one object per deployment: each suite below has a runtime of its own.
const MIMO_OPTIONS = {};
let mimo: Mimo;

async function extensions(): Promise<ExtensionList["extensions"]> {
  const res = await api(mimo, "/api/extension/extension-list");
  assert.equal(res.status, 200);
  return ((await res.json()) as ExtensionList).extensions;
}

/** Waits until the extension list says `clientId` is online (or offline). */
async function waitForPresence(clientId: string, online: boolean) {
  for (let i = 0; i < 50; i++) {
    if ((await extensions()).find((e) => e.clientId === clientId)?.online === online) return;
    await sleep(100);
  }
  assert.fail(`${clientId} never became ${online ? "online" : "offline"}`);
}

/** Connects a web client and returns how the task got bound: a client id or an error code. */
async function bindingOnConnect(taskId: string): Promise<{ web: WebClient; clientId?: string; error?: string }> {
  const web = await WebClient.connect(mimo, taskId);
  const outcome = await web.waitFor(
    (e) => (e.type === "taskStatus" && e.selectedClientId !== undefined) || e.type === "error",
    "a binding or an error",
  );
  if (outcome.type === "error") return { web, error: outcome.error.code };
  return { web, clientId: outcome.type === "taskStatus" ? outcome.selectedClientId : undefined };
}

function tab(tabId: number, windowId: number, index: number, active: boolean, title = `Tab ${tabId}`): TabInfo {
  return { tabId, windowId, index, url: `http://127.0.0.1/${tabId}`, title, status: "complete", active };
}

const SNAPSHOT: BrowserSnapshot = {
  windows: [{ windowId: 1, focused: true }],
  tabs: [tab(10, 1, 0, true), tab(11, 1, 1, false)],
  groups: [],
  activeTabId: 10,
};

describe("extension registry", () => {
  ownRuntime(MIMO_OPTIONS, (m) => (mimo = m));

  it("with no extension online, a task gets PLUGIN_OFFLINE telling the person what to do", async () => {
    assert.deepEqual(await extensions(), []);
    const { web, error } = await bindingOnConnect(await newTask(mimo));
    assert.equal(error, "PLUGIN_OFFLINE");
    const event = web.received.find((e) => e.type === "error");
    assert.ok(event?.type === "error");
    assert.equal(event.error.retryable, true);
    assert.match(event.error.message, /extension/i);
    // The task itself is fine: chat still works without a browser.
    web.send({ type: "user_message", content: "no browser needed" });
    assert.equal((await web.reply()).text, "You said: no browser needed");
    await web.close();
  });

  /** The first test's extension, which the second connects again. */
  let alphaCredential: PairResponse | undefined;

  it("lists extensions with presence and picks the only online one", async () => {
    const alpha = await ExtensionClient.connect(mimo, "alpha", "Work laptop");
    alphaCredential = alpha.credential;
    const listed = (await extensions()).find((e) => e.clientId === alpha.clientId);
    assert.ok(listed);
    assert.equal(listed.online, true);
    assert.equal(listed.name, "Work laptop");
    assert.equal(listed.browser.name, "Chromium");
    assert.ok(listed.lastSeenAt > Date.now() - 60_000);

    const { web, clientId } = await bindingOnConnect(await newTask(mimo));
    assert.equal(clientId, alpha.clientId);
    await web.close();
    await alpha.close();
    await waitForPresence(alpha.clientId, false);
  });

  it("with several online, picks the most recently used; an explicit choice wins and sticks", async () => {
    const alpha = await ExtensionClient.connect(mimo, "alpha", undefined, alphaCredential);
    const beta = await ExtensionClient.connect(mimo, "beta");
    // alpha was used by the previous test; beta never.
    const first = await bindingOnConnect(await newTask(mimo));
    assert.equal(first.clientId, alpha.clientId);

    const taskId = await newTask(mimo);
    const chosen = await bindingOnConnect(taskId);
    chosen.web.send({ type: "select_client", clientId: beta.clientId });
    const selected = await chosen.web.waitFor(
      (e) => e.type === "taskStatus" && e.selectedClientId === beta.clientId,
      "beta selected",
    );
    assert.ok(selected);
    // beta is now the most recently used one.
    const next = await bindingOnConnect(await newTask(mimo));
    assert.equal(next.clientId, beta.clientId);
    // Reconnecting to the task keeps its choice.
    const again = await WebClient.connect(mimo, taskId);
    await again.waitFor((e) => e.type === "ready");
    const status = again.received.findLast((e) => e.type === "taskStatus");
    assert.ok(status?.type === "taskStatus");
    assert.equal(status.selectedClientId, beta.clientId);

    // Selecting an extension that does not exist is refused on that socket only.
    chosen.web.send({ type: "select_client", clientId: "no-such-extension" });
    const refused = await chosen.web.waitFor((e) => e.type === "error" && e.error.code === "NOT_FOUND", "NOT_FOUND");
    assert.equal(refused.seq, undefined);

    for (const c of [first.web, chosen.web, next.web, again]) await c.close();
    await beta.close();
    // The task bound to beta does not silently move to alpha while beta is offline.
    await waitForPresence(beta.clientId, false);
    const stuck = await WebClient.connect(mimo, taskId);
    await stuck.waitFor((e) => e.type === "ready");
    await sleep(200);
    const kept = stuck.received.findLast((e) => e.type === "taskStatus");
    assert.ok(kept?.type === "taskStatus");
    assert.equal(kept.selectedClientId, beta.clientId);
    await stuck.close();
    await alpha.close();
  });

  it("answers keep-alive pings, exact or not, with pong", async () => {
    const ext = await ExtensionClient.connect(mimo, "pinger");
    ext.sendRaw(PING_FRAME);
    await ext.waitFor((m) => m.type === "pong", "pong from the auto-response");
    const from = ext.received.length;
    ext.sendRaw('{ "type": "ping" }');
    await ext.waitFor((m) => m.type === "pong", "pong from the registry", 5000, from);
    await ext.close();
  });

  it("a newer connection of the same client replaces the older one", async () => {
    const old = await ExtensionClient.connect(mimo, "gamma");
    const fresh = await ExtensionClient.connect(mimo, "gamma", undefined, old.credential);
    await old.waitFor(() => false, "close", 5000).catch(() => undefined);
    assert.equal(old.closed?.code, 4000);
    assert.equal((await extensions()).find((e) => e.clientId === old.clientId)?.online, true);
    await fresh.close();
  });
});

describe("snapshot sync", () => {
  ownRuntime(MIMO_OPTIONS, (m) => (mimo = m));

  it("pushes the browser's state to the task's sockets and to late joiners", async () => {
    const ext = await ExtensionClient.connect(mimo, "snap");
    const taskId = await newTask(mimo);
    const { web, clientId } = await bindingOnConnect(taskId);
    assert.equal(clientId, ext.clientId);

    ext.sync(SNAPSHOT);
    const synced = await web.waitFor((e) => e.type === "snapshotSync", "snapshotSync");
    assert.ok(synced.type === "snapshotSync");
    assert.equal(synced.clientId, ext.clientId);
    assert.deepEqual(synced.snapshot, SNAPSHOT);
    assert.equal(synced.seq, undefined, "a snapshot is state, not history");

    // An incremental change: a new active tab.
    const from = web.received.length;
    ext.send({ type: "tab_event", event: { kind: "tab_upserted", tab: tab(12, 1, 2, true, "New tab") } });
    const changed = await web.waitFor((e) => e.type === "snapshotSync", "updated snapshot", 10_000, from);
    assert.ok(changed.type === "snapshotSync");
    assert.equal(changed.snapshot.activeTabId, 12);
    assert.deepEqual(
      changed.snapshot.tabs.map((t) => [t.tabId, t.active]),
      [
        [10, false],
        [11, false],
        [12, true],
      ],
    );

    // An event that changes nothing is not pushed.
    const settled = web.received.length;
    ext.send({ type: "tab_event", event: { kind: "tab_activated", tabId: 12, windowId: 1 } });
    ext.send({ type: "tab_event", event: { kind: "tab_removed", tabId: 11 } });
    await web.waitFor((e) => e.type === "snapshotSync" && e.snapshot.tabs.length === 2, "tab removed", 10_000, from);
    assert.equal(
      web.received.slice(settled).filter((e) => e.type === "snapshotSync").length,
      1,
      "only the removal was pushed",
    );

    // A web client connecting later gets the current snapshot at once.
    const late = await WebClient.connect(mimo, taskId);
    const current = await late.waitFor((e) => e.type === "snapshotSync", "snapshot for the late joiner");
    assert.ok(current.type === "snapshotSync");
    assert.deepEqual(current.snapshot.tabs.map((t) => t.tabId), [10, 12]);
    assert.equal(current.snapshot.activeTabId, 12);

    // A task bound later gets the extension's current snapshot when it binds.
    const other = await bindingOnConnect(await newTask(mimo));
    const initial = await other.web.waitFor((e) => e.type === "snapshotSync", "snapshot on binding");
    assert.ok(initial.type === "snapshotSync");
    assert.deepEqual(initial.snapshot.tabs.map((t) => t.tabId), [10, 12]);

    for (const c of [web, late, other.web]) await c.close();
    await ext.close();
  });

  it("answers bad extension frames with SCHEMA_VALIDATION_FAILED and keeps the socket and snapshot", async () => {
    const ext = await ExtensionClient.connect(mimo, "bad-input");
    const taskId = await newTask(mimo);
    const { web } = await bindingOnConnect(taskId);
    ext.sync(SNAPSHOT);
    await web.waitFor((e) => e.type === "snapshotSync");
    const frames: Array<[string, string | Buffer]> = [
      ["not JSON", "]["],
      ["unknown type", JSON.stringify({ type: "format_disk" })],
      ["missing field", JSON.stringify({ type: "full_state_sync" })],
      ["bad tab event", JSON.stringify({ type: "tab_event", event: { kind: "tab_exploded", tabId: 1 } })],
      ["wrong hello", JSON.stringify({ type: "hello", clientId: "someone-else", name: "x", browser: { name: "x", version: "1" }, extensionVersion: "1" })],
      ["oversize frame", JSON.stringify({ type: "full_state_sync", snapshot: { ...SNAPSHOT, tabs: Array.from({ length: 4000 }, (_, i) => tab(i, 1, i, false, "x".repeat(200))) } })],
      ["binary frame", Buffer.from([0, 1])],
    ];
    for (const [what, frame] of frames) {
      const from = ext.received.length;
      ext.sendRaw(frame);
      const error = await ext.waitFor((m) => m.type === "error", what, 5000, from);
      assert.ok(error.type === "error");
      assert.equal(error.error.code, "SCHEMA_VALIDATION_FAILED", what);
    }
    assert.equal(ext.closed, null, "the extension socket stayed open");
    const late = await WebClient.connect(mimo, taskId);
    const current = await late.waitFor((e) => e.type === "snapshotSync");
    assert.ok(current.type === "snapshotSync");
    assert.deepEqual(current.snapshot, SNAPSHOT, "the stored snapshot is unchanged");
    for (const c of [web, late]) await c.close();
    await ext.close();
  });

  it("refuses an extension with a malformed clientId", async () => {
    const issued = await post(mimo, "/api/extension/pairing-code");
    const { code } = (await issued.json()) as { code: string };
    // An id named in the pairing is not taken: the server gives its own.
    const paired = await post(mimo, "/api/extension/pair", { code, clientId: "../../etc" }, null);
    assert.equal(paired.status, 200);
    assert.match(((await paired.json()) as { clientId: string }).clientId, /^ext-[0-9a-f]{32}$/);
    // With another extension's ticket, a malformed clientId is not that extension's.
    const ext = await ExtensionClient.connect(mimo, "well-formed");
    const url = `${mimo.url.replace("http", "ws")}/ws/extension?clientId=${encodeURIComponent("../../etc")}&ticket=${await wsTicket(mimo, ext.token)}`;
    const status = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      socket.on("open", () => reject(new Error("opened")));
    });
    assert.equal(status, 403);
    await ext.close();
  });
});
