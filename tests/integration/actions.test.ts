// The server side of browser actions, against the built worker in Miniflare, with a protocol
// client standing in for the extension (the real extension's tests are in tests/browser/):
// dispatch with ids, ack and result, timeouts, retry once, duplicates, offline, tab guard,
// eviction mid-action, stop.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ActionCommand, BrowserAction, ServerToExtension } from "../../protocol/ts/protocol.ts";
import { ExtensionClient, newTask, WebClient } from "../support/clients.ts";
import { ownRuntime } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";

let mimo: Mimo;

type ActionRecord = {
  actionId: string;
  state: string;
  attempt: number;
  tabId?: number;
  command: ActionCommand;
  outcome?: { status: string; result?: unknown; error?: { code: string; message: string; retryable: boolean }; warnings: string[] };
};

async function submit(taskId: string, command: ActionCommand, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${mimo.url}/api/task/${taskId}/actions`, {
    method: "POST",
    headers: { authorization: `Bearer ${mimo.token}`, "content-type": "application/json" },
    body: JSON.stringify({ command, ...extra }),
  });
  return { status: res.status, body: (await res.json()) as ActionRecord & { code?: string } };
}

/** The next `browser_action` the stand-in extension receives (from index `from`). */
async function nextAction(ext: ExtensionClient, from = 0): Promise<BrowserAction> {
  const frame = await ext.waitFor((m) => m.type === "browser_action", "a browser action", 10_000, from);
  return (frame as Extract<ServerToExtension, { type: "browser_action" }>).action;
}

function respond(ext: ExtensionClient, action: BrowserAction, result: unknown = { done: true }) {
  ext.send({ type: "action_ack", actionId: action.actionId, attempt: action.attempt, taskId: action.taskId });
  ext.send({
    type: "action_result",
    outcome: { actionId: action.actionId, attempt: action.attempt, taskId: action.taskId, status: "ok", result, warnings: [] },
  });
}

/** A task bound to a fresh stand-in extension. */
async function boundTask(label: string) {
  const ext = await ExtensionClient.connect(mimo, label);
  const { clientId } = ext;
  const taskId = await newTask(mimo);
  const web = await WebClient.connect(mimo, taskId);
  await web.waitFor((e) => e.type === "taskStatus" && e.selectedClientId === clientId, "bound");
  return { ext, taskId, web };
}

const click: ActionCommand = { name: "browser_click", params: { clickId: 3 } };
/** Changes the page, but running it twice ends the same way: retried without asking. */
const hover: ActionCommand = { name: "browser_hover", params: { clickId: 3 } };

describe("actions through the coordinator and the registry", () => {
  ownRuntime({ bindings: { MIMO_ACTION_ACK_TIMEOUT_MS: "400", MIMO_ACTION_EXEC_TIMEOUT_MS: "800", MIMO_ACTION_SLOW_EXEC_TIMEOUT_MS: "1300" } }, (m) => (mimo = m));

  it("dispatches with its ids, and answers with the result once acked and done", async () => {
    const { ext, taskId, web } = await boundTask("runner");
    const pending = submit(taskId, { name: "task_start", params: { url: "http://127.0.0.1/shop" } });
    const action = await nextAction(ext);
    assert.equal(action.taskId, taskId);
    assert.equal(action.clientId, ext.clientId);
    assert.equal(action.attempt, 1);
    assert.match(action.actionId, /^act_[0-9a-f]{24}$/);
    assert.equal(action.name, "task_start");
    respond(ext, action, { tabId: 41, windowId: 2, url: "http://127.0.0.1/shop" });
    const { status, body } = await pending;
    assert.equal(status, 200);
    assert.equal(body.state, "succeeded");
    assert.deepEqual(body.outcome?.result, { tabId: 41, windowId: 2, url: "http://127.0.0.1/shop" });

    // Later tab actions go to the task's tab.
    const next = submit(taskId, click);
    const clickAction = await nextAction(ext, ext.received.indexOf(ext.received.find((m) => m.type === "browser_action")!) + 1);
    assert.equal(clickAction.tabId, 41);
    respond(ext, clickAction);
    assert.equal((await next).body.state, "succeeded");

    const list = (await (await fetch(`${mimo.url}/api/task/${taskId}/actions`, { headers: { authorization: `Bearer ${mimo.token}` } })).json()) as ActionRecord[];
    assert.deepEqual(list.map((a) => [a.command.name, a.state]), [["task_start", "succeeded"], ["browser_click", "succeeded"]]);
    await Promise.all([ext.close(), web.close()]);
  });

  it("ignores a duplicate result and an unknown one", async () => {
    const { ext, taskId, web } = await boundTask("dupes");
    const pending = submit(taskId, click);
    const action = await nextAction(ext);
    respond(ext, action, { first: true });
    const { body } = await pending;
    respond(ext, action, { second: true });
    ext.send({ type: "action_result", outcome: { actionId: "act_nope", attempt: 1, taskId, status: "ok", warnings: [] } });
    await new Promise((r) => setTimeout(r, 300));
    const list = (await (await fetch(`${mimo.url}/api/task/${taskId}/actions`, { headers: { authorization: `Bearer ${mimo.token}` } })).json()) as ActionRecord[];
    assert.equal(list.length, 1);
    assert.deepEqual(list[0]!.outcome?.result, { first: true });
    assert.deepEqual(body.outcome?.result, { first: true });
    await Promise.all([ext.close(), web.close()]);
  });

  it("times out without an ack (PLUGIN_TIMEOUT_ACK), retrying once as a new attempt", async () => {
    const { ext, taskId, web } = await boundTask("silent");
    const pending = submit(taskId, hover);
    const first = await nextAction(ext);
    const second = await nextAction(ext, ext.received.indexOf(ext.received.find((m) => m.type === "browser_action")!) + 1);
    assert.equal(second.actionId, first.actionId);
    assert.equal(second.attempt, 2);
    const { status, body } = await pending;
    assert.equal(status, 200);
    assert.equal(body.state, "timed_out");
    assert.equal(body.outcome?.error?.code, "PLUGIN_TIMEOUT_ACK");
    assert.equal(body.outcome?.error?.retryable, true);
    await Promise.all([ext.close(), web.close()]);
  });

  it("times out an acked action that never ends (PLUGIN_TIMEOUT_EXEC)", async () => {
    const { ext, taskId, web } = await boundTask("slowpoke");
    const pending = submit(taskId, hover);
    for (let attempt = 1; attempt <= 2; attempt++) {
      const from = ext.received.filter((m) => m.type === "browser_action").length;
      const action = await ext.waitFor(
        (m) => m.type === "browser_action" && m.action.attempt === attempt,
        `attempt ${attempt}`,
      );
      assert.ok(action.type === "browser_action" && from >= 0);
      ext.send({ type: "action_ack", actionId: action.action.actionId, attempt, taskId });
    }
    const { body } = await pending;
    assert.equal(body.state, "timed_out");
    assert.equal(body.outcome?.error?.code, "PLUGIN_TIMEOUT_EXEC");
    await Promise.all([ext.close(), web.close()]);
  });

  it("asks what became of a click that timed out, and never runs it again while it may have run", async () => {
    const { ext, taskId, web } = await boundTask("blocked");
    const pending = submit(taskId, click);
    const action = await nextAction(ext);
    ext.send({ type: "action_ack", actionId: action.actionId, attempt: 1, taskId });
    const query = await ext.waitFor((m) => m.type === "action_query", "the question after the timeout");
    assert.deepEqual(query, { type: "action_query", taskId, actionId: action.actionId, attempt: 1 });
    ext.send({ type: "action_status", taskId, actionId: action.actionId, attempt: 1, state: "running" });
    const { body } = await pending;
    assert.equal(body.state, "timed_out");
    assert.equal(body.attempt, 1);
    assert.equal(body.outcome?.error?.code, "PLUGIN_TIMEOUT_EXEC");
    assert.equal(body.outcome?.error?.retryable, false);
    assert.match(body.outcome!.error!.message, /still running in the browser/);
    // Its late result is taken as a duplicate (and acknowledged, so it is not resent).
    const from = ext.received.length;
    ext.send({ type: "action_result", outcome: { actionId: action.actionId, attempt: 1, taskId, status: "ok", result: { late: true }, warnings: [] } });
    await ext.waitFor((m) => m.type === "result_ack" && m.actionId === action.actionId, "the late result acknowledged", 5_000, from);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(ext.received.filter((m) => m.type === "browser_action").length, 1, "sent once, never again");

    // Never received: asked, then sent again as a new attempt, which runs.
    const second = submit(taskId, click);
    const lost = await nextAction(ext, ext.received.length);
    const asked = await ext.waitFor((m) => m.type === "action_query" && m.actionId === lost.actionId, "the question");
    assert.ok(asked.type === "action_query");
    ext.send({ type: "action_status", taskId, actionId: lost.actionId, attempt: 1, state: "unknown" });
    const again = await ext.waitFor((m) => m.type === "browser_action" && m.action.actionId === lost.actionId && m.action.attempt === 2, "the new attempt");
    assert.ok(again.type === "browser_action");
    respond(ext, again.action, { clicked: true });
    assert.equal((await second).body.state, "succeeded");

    // Nobody answers: it ends, not retryable, after the ack timeout.
    const third = submit(taskId, click);
    const silent = await nextAction(ext, ext.received.length);
    ext.send({ type: "action_ack", actionId: silent.actionId, attempt: 1, taskId });
    const { body: unanswered } = await third;
    assert.equal(unanswered.state, "timed_out");
    assert.equal(unanswered.attempt, 1);
    assert.match(unanswered.outcome!.error!.message, /did not say whether browser_click ran/);
    await Promise.all([ext.close(), web.close()]);
  });

  it("acknowledges each result it has, a duplicate and an unknown one too, so the extension stops resending", async () => {
    const { ext, taskId, web } = await boundTask("acks");
    const pending = submit(taskId, click);
    const action = await nextAction(ext);
    respond(ext, action);
    await pending;
    const acks = () => ext.received.filter((m) => m.type === "result_ack");
    await ext.waitFor((m) => m.type === "result_ack", "the ack");
    respond(ext, action);
    ext.send({ type: "action_result", outcome: { actionId: "act_nope", attempt: 1, taskId, status: "ok", warnings: [] } });
    for (let i = 0; i < 50 && acks().length < 3; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      acks().map((m) => m.type === "result_ack" && [m.actionId, m.attempt]),
      [[action.actionId, 1], [action.actionId, 1], ["act_nope", 1]],
    );
    // A result about another browser's task is refused with a reason, and acknowledged (it will
    // never be taken), not silently dropped.
    const other = await ExtensionClient.connect(mimo, "acks-intruder");
    other.send({ type: "action_result", outcome: { actionId: action.actionId, attempt: 1, taskId, status: "ok", warnings: [] } });
    const refused = await other.waitFor((m) => m.type === "error", "the refusal");
    assert.ok(refused.type === "error" && refused.error.code === "PERMISSION_DENIED");
    await other.waitFor((m) => m.type === "result_ack", "acknowledged as dealt with");
    await Promise.all([ext.close(), web.close(), other.close()]);
  });

  it("gives page loads their own configured budget", async () => {
    const { ext, taskId, web } = await boundTask("loader");
    const budgets: Record<string, number> = {};
    for (const command of [click, { name: "browser_navigate", params: { url: "http://example.test/" } }] as ActionCommand[]) {
      const from = ext.received.length;
      void submit(taskId, command, { waitMs: 100 });
      const frame = await ext.waitFor((m) => m.type === "browser_action", command.name, 10_000, from);
      assert.ok(frame.type === "browser_action");
      ext.send({ type: "action_ack", actionId: frame.action.actionId, attempt: 1, taskId });
      let record: (ActionRecord & { ackedAt?: number; deadline?: number }) | undefined;
      for (let i = 0; i < 50 && record?.state !== "acked"; i++) {
        const all = (await (await fetch(`${mimo.url}/api/task/${taskId}/actions`, { headers: { authorization: `Bearer ${mimo.token}` } })).json()) as Array<ActionRecord & { ackedAt?: number; deadline?: number }>;
        record = all.find((r) => r.actionId === frame.action.actionId);
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(record?.state, "acked");
      budgets[command.name] = record!.deadline! - record!.ackedAt!;
      // Finish it, so the next one is dispatched.
      ext.send({ type: "action_result", outcome: { actionId: frame.action.actionId, attempt: 1, taskId, status: "ok", result: {}, warnings: [] } });
    }
    assert.deepEqual(budgets, { browser_click: 800, browser_navigate: 1300 });
    await Promise.all([ext.close(), web.close()]);
  });

  it("retries a retryable failure once and reports a final one at once", async () => {
    const { ext, taskId, web } = await boundTask("flaky");
    const pending = submit(taskId, click);
    const first = await nextAction(ext);
    ext.send({ type: "action_ack", actionId: first.actionId, attempt: 1, taskId });
    ext.send({
      type: "action_result",
      outcome: { actionId: first.actionId, attempt: 1, taskId, status: "error", error: { code: "CDP_UNAVAILABLE", message: "detached", retryable: true }, warnings: [] },
    });
    const second = await ext.waitFor((m) => m.type === "browser_action" && m.action.attempt === 2, "the retry");
    assert.ok(second.type === "browser_action");
    respond(ext, second.action, { clicked: true });
    const { body } = await pending;
    assert.equal(body.state, "succeeded");
    assert.equal(body.attempt, 2);

    const again = submit(taskId, click);
    const action = await ext.waitFor((m) => m.type === "browser_action" && m.action.actionId !== first.actionId, "next action");
    assert.ok(action.type === "browser_action");
    ext.send({
      type: "action_result",
      outcome: { actionId: action.action.actionId, attempt: 1, taskId, status: "error", error: { code: "TARGET_NOT_FOUND", message: "no element 3", retryable: false }, warnings: [] },
    });
    const failed = (await again).body;
    assert.equal(failed.state, "failed");
    assert.equal(failed.attempt, 1);
    assert.equal(failed.outcome?.error?.code, "TARGET_NOT_FOUND");
    await Promise.all([ext.close(), web.close()]);
  });

  it("keeps an action across an eviction of the coordinator: the late result still lands", async () => {
    const { ext, taskId, web } = await boundTask("evicted");
    // A wait has its own budget, so the eviction below cannot outlast it.
    const wait: ActionCommand = { name: "browser_wait_for", params: { text: "Cart", timeoutMs: 20_000 } };
    const pending = submit(taskId, wait, { waitMs: 500 });
    const action = await nextAction(ext);
    ext.send({ type: "action_ack", actionId: action.actionId, attempt: 1, taskId });
    assert.equal((await pending).status, 202, "still running when the request gave up");
    await mimo.evictTask(taskId);
    respond(ext, action, { late: true });
    let record: ActionRecord | undefined;
    for (let i = 0; i < 30 && record?.state !== "succeeded"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const list = (await (await fetch(`${mimo.url}/api/task/${taskId}/actions`, { headers: { authorization: `Bearer ${mimo.token}` } })).json()) as ActionRecord[];
      record = list[0];
    }
    assert.equal(record?.state, "succeeded");
    assert.equal(ext.received.filter((m) => m.type === "browser_action").length, 1, "dispatched once");
    await Promise.all([ext.close(), web.close()]);
  });

  it("refuses results for a task bound to another extension", async () => {
    const { ext, taskId, web } = await boundTask("owner");
    const intruder = await ExtensionClient.connect(mimo, "intruder");
    const pending = submit(taskId, click, { waitMs: 1500 });
    const action = await nextAction(ext);
    intruder.send({ type: "action_ack", actionId: action.actionId, attempt: 1, taskId });
    const refused = await intruder.waitFor((m) => m.type === "error", "refusal");
    assert.ok(refused.type === "error");
    assert.equal(refused.error.code, "PERMISSION_DENIED");
    respond(ext, action);
    assert.equal((await pending).body.state, "succeeded");
    await Promise.all([ext.close(), web.close(), intruder.close()]);
  });

  it("stop cancels what is open", async () => {
    const { ext, taskId, web } = await boundTask("stopper");
    const pending = submit(taskId, click);
    await nextAction(ext);
    web.send({ type: "stop" });
    const { body } = await pending;
    assert.equal(body.state, "canceled");
    assert.equal(body.outcome?.error?.code, "CANCELED");
    await Promise.all([ext.close(), web.close()]);
  });

  it("refuses malformed commands and unknown tasks", async () => {
    const taskId = await newTask(mimo);
    const bad = await submit(taskId, { name: "browser_fly", params: {} } as unknown as ActionCommand);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, "SCHEMA_VALIDATION_FAILED");
    const unknown = await submit("00000000-0000-4000-8000-000000000000", click);
    assert.equal(unknown.status, 404);
  });

  it("holds the developer API to the person's switches: no bridge command, tab or blocked site gets through", async () => {
    const { ext, taskId, web } = await boundTask("guarded");
    const command: ActionCommand = { name: "bridge_invoke", params: { tool: "bash", args: { command: "touch pwned" }, agentId: "main" } };
    const notAllowed = await submit(taskId, command);
    assert.equal(notAllowed.status, 403);
    assert.equal(notAllowed.body.code, "PERMISSION_DENIED");
    // The person allows the bridge, confirmations on: the API cannot confirm for them.
    const told = ext.received.length;
    web.send({ type: "set_bridge", allow: true, confirm: true });
    const state = await ext.waitFor((m) => m.type === "task_state" && m.taskId === taskId, "the task's bridge permission", 5_000, told);
    assert.ok(state.type === "task_state" && state.bridge === true);
    const unconfirmed = await submit(taskId, command);
    assert.equal(unconfirmed.status, 403);
    assert.equal(unconfirmed.body.code, "CONFIRMATION_REQUIRED");
    // Nor adopt one of the person's tabs.
    const adopt = await submit(taskId, { name: "task_start", params: { adoptTabId: 7 } });
    assert.equal(adopt.status, 403);
    assert.equal(adopt.body.code, "PERMISSION_DENIED");
    // Nothing was queued, nothing reached the extension.
    assert.ok(!ext.received.some((m) => m.type === "browser_action"));
    const listed = await fetch(`${mimo.url}/api/task/${taskId}/actions`, { headers: { authorization: `Bearer ${mimo.token}` } });
    assert.deepEqual(await listed.json(), []);
    await Promise.all([ext.close(), web.close()]);
  });
});

describe("a step the person approved in their MCP client", () => {
  ownRuntime({}, (m) => (mimo = m));

  it("cannot be claimed by the developer API: no field says so, and no public route leads to where it is said", async () => {
    const { ext, taskId, web } = await boundTask("claims");
    // The task reads a page with an irreversible button.
    const read = submit(taskId, { name: "browser_dom_index", params: {} });
    const index = await nextAction(ext);
    respond(ext, index, {
      elements: [{ clickId: 1, tag: "button", text: "Delete account", frameId: 0 }],
      text: 'page https://mail.example/ "Mail"\n[1]<button>Delete account</button>',
      url: "https://mail.example/",
      title: "Mail",
    });
    assert.equal((await read).status, 200);
    const deleteAccount: ActionCommand = { name: "browser_click", params: { clickId: 1 } };
    // Rated as an MCP client's step, it waits for the person whatever the caller claims.
    for (const claim of [{}, { confirmed: true, personConfirmed: true, by: "mcp" }]) {
      const claimed = await submit(taskId, deleteAccount, { rated: true, ...claim });
      assert.equal(claimed.status, 403, JSON.stringify(claim));
      assert.equal(claimed.body.code, "CONFIRMATION_REQUIRED");
    }
    for (const route of ["actions/confirmed", "actions%2Fconfirmed"]) {
      const res: Response = await fetch(`${mimo.url}/api/task/${taskId}/${route}`, {
        method: "POST",
        headers: { authorization: `Bearer ${mimo.token}`, "content-type": "application/json" },
        body: JSON.stringify({ command: deleteAccount, rated: true }),
      });
      assert.equal(res.status, 404, route);
    }
    // Only the page read reached the extension; no approval is on record.
    assert.equal(ext.received.filter((m) => m.type === "browser_action").length, 1);
    assert.ok(!web.received.some((e) => e.type === "confirmationAnswered"));
    await Promise.all([ext.close(), web.close()]);
  });
});

describe("actions with no extension online", () => {
  ownRuntime({}, (m) => (mimo = m));

  it("is PLUGIN_OFFLINE at once", async () => {
    const taskId = await newTask(mimo);
    const { status, body } = await submit(taskId, click);
    assert.equal(status, 409);
    assert.equal(body.code, "PLUGIN_OFFLINE");
  });
});

describe("takeover and resume", () => {
  ownRuntime({}, (m) => (mimo = m));

  it("the person's takeover pauses dispatching until they resume; the overlay is told", async () => {
    const { ext, taskId, web } = await boundTask("driver");
    const first = submit(taskId, click);
    respond(ext, await nextAction(ext));
    assert.equal((await first).body.state, "succeeded");
    await web.waitFor((e) => e.type === "taskStatus" && e.status === "ongoing", "ongoing once idle");

    ext.send({ type: "task_control", taskId, control: "takeover" });
    await web.waitFor((e) => e.type === "taskStatus" && e.status === "takeover", "takeover status");
    await ext.waitFor((m) => m.type === "task_state" && m.status === "takeover", "the overlay hears of it");

    const held = submit(taskId, click, { waitMs: 800 });
    const { status, body } = await held;
    assert.equal(status, 202);
    assert.equal(body.state, "pending", "not dispatched during a takeover");
    assert.equal(ext.received.filter((m) => m.type === "browser_action").length, 1);

    web.send({ type: "resume" });
    await web.waitFor((e) => e.type === "taskStatus" && e.status === "running", "running again");
    const resumed = await ext.waitFor(
      (m) => m.type === "browser_action" && m.action.actionId === body.actionId,
      "the held action, dispatched on resume",
    );
    assert.ok(resumed.type === "browser_action");
    await ext.waitFor((m) => m.type === "task_state" && m.status === "running", "the overlay hears of it");
    await Promise.all([ext.close(), web.close()]);
  });

  it("refuses control messages for a task bound to another extension", async () => {
    const { ext, taskId, web } = await boundTask("rightful");
    const other = await ExtensionClient.connect(mimo, "other");
    other.send({ type: "task_control", taskId, control: "stop" });
    const refused = await other.waitFor((m) => m.type === "error", "refusal");
    assert.ok(refused.type === "error" && refused.error.code === "PERMISSION_DENIED");
    assert.ok(!web.received.some((e) => e.type === "taskStatus" && e.status === "canceled"));
    await Promise.all([ext.close(), web.close(), other.close()]);
  });
});
