// Unit tests of the app's pure parts, run directly by Node (type stripping):
//   node --test web/test/*.test.ts
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { EventEnvelope } from "../../protocol/ts/protocol.ts";
import { backoffDelay } from "../src/socket.ts";
import type { TaskSink } from "../src/task.ts";
import { TaskModel } from "../src/task.ts";

const TASK = "5f0c2d8e-6a4b-4c1e-9d3f-2b7a8c9e0f11";

function recorder(): { sink: TaskSink; log: string[] } {
  const log: string[] = [];
  const sink: TaskSink = {
    message: (m) => log.push(`message ${m.messageId} ${m.content}`),
    delta: (id, delta, finished) => log.push(`delta ${id} ${JSON.stringify(delta)}${finished ? " finished" : ""}`),
    status: (status, title) => log.push(`status ${status}${title ? ` ${title}` : ""}`),
    snapshot: (clientId) => log.push(`snapshot ${clientId}`),
    output: (e) => log.push(`output ${e.status}`),
    step: (e) => log.push(`step ${e.step} ${e.phase}`),
    page: (e) => log.push(`page ${e.step} ${e.url}`),
    attachment: (a) => log.push(`attachment ${a.name}`),
    domains: (allowed, blocked) => log.push(`domains ${allowed.join(",")} / ${blocked.join(",")}`),
    confirmation: (e) => log.push(`confirm? ${e.step}`),
    answered: (e) => log.push(`answered ${e.step} ${e.approved} by ${e.by}${e.reason !== undefined ? ` ${e.reason}` : ""}`),
    siteAccess: (e) => log.push(`site ${e.step} ${e.site}`),
    stepMode: (on) => log.push(`step mode ${on}`),
    bridgeMode: (allow, confirm) => log.push(`bridge ${allow} ${confirm}`),
    subtask: (event) => log.push(`${event.type} ${event.subtask}`),
    fork: (event) => log.push(`${event.type} ${event.type === "forked" ? event.fork.taskId : event.origin.taskId}`),
    compacted: (e) => log.push(`compacted through ${e.through} (${e.messages}): ${e.summary}`),
    warning: (message) => log.push(`warning ${message}`),
    retry: (e) => log.push(`retry ${e.reason} ${e.attempt}/${e.maxAttempts} ${e.delayMs}`),
    error: (e) => log.push(`error ${e.code}`),
    ready: (behind) => log.push(behind ? "ready behind" : "ready"),
  };
  return { sink, log };
}

const at = 1_700_000_000_000;
const history: EventEnvelope[] = [
  { seq: 1, taskId: TASK, at, type: "message", message: { messageId: "m1", role: "user", content: "hi", createdAt: at } },
  { seq: 2, taskId: TASK, at, type: "taskStatus", status: "running", title: "hi" },
  { seq: 3, taskId: TASK, at, type: "chatDelta", messageId: "m2", delta: "Hel", finished: false },
  { seq: 4, taskId: TASK, at, type: "chatDelta", messageId: "m2", delta: "lo", finished: false },
  { seq: 5, taskId: TASK, at, type: "chatDelta", messageId: "m2", delta: "", finished: true },
];

describe("TaskModel", () => {
  it("applies history once, whatever is replayed again", () => {
    const { sink, log } = recorder();
    const model = new TaskModel(TASK, sink);
    for (const e of history.slice(0, 4)) assert.equal(model.apply(e), true);
    assert.equal(model.lastSeq, 4);
    // A reconnect whose replay overlaps what was applied (or a duplicated frame).
    const applied = history.map((e) => model.apply(e));
    assert.deepEqual(applied, [false, false, false, false, true]);
    assert.deepEqual(log, [
      "message m1 hi",
      "status running hi",
      'delta m2 "Hel"',
      'delta m2 "lo"',
      'delta m2 "" finished',
    ]);
    assert.equal(model.lastSeq, 5);
    assert.equal(model.status, "running");
  });

  it("passes on a compaction of the conversation", () => {
    const { sink, log } = recorder();
    const model = new TaskModel(TASK, sink);
    model.apply({ seq: 1, taskId: TASK, at, type: "chatCompacted", through: "m4", messages: 4, summary: "They want a mug." });
    assert.deepEqual(log, ["compacted through m4 (4): They want a mug."]);
  });

  it("passes on the task's own sites", () => {
    const { sink, log } = recorder();
    const model = new TaskModel(TASK, sink);
    model.apply({ seq: 1, taskId: TASK, at, type: "taskDomains", allowed: ["shop.example"], blocked: ["ads.example"] });
    assert.deepEqual(log, ["domains shop.example / ads.example"]);
  });

  it("passes on the step mode, a confirmation and its answer from elsewhere", () => {
    const { sink, log } = recorder();
    const model = new TaskModel(TASK, sink);
    model.apply({ seq: 1, taskId: TASK, at, type: "stepMode", stepByStep: true });
    model.apply({ seq: 2, taskId: TASK, at, type: "confirmationRequested", step: 2, action: { click: { index: 4 } }, reason: "Step by step", risk: "low", facts: [], url: "https://shop.example/", title: "Shop", stepByStep: true });
    model.apply({ seq: 3, taskId: TASK, at, type: "confirmationAnswered", step: 2, approved: false, by: "extension", reason: "wrong one" });
    assert.deepEqual(log, ["step mode true", "confirm? 2", "answered 2 false by extension wrong one"]);
  });

  it("passes on a step waiting for a site the person has not allowed", () => {
    const { sink, log } = recorder();
    const model = new TaskModel(TASK, sink);
    model.apply({ seq: 1, taskId: TASK, at, type: "siteAccessNeeded", step: 3, site: "https://shop.example" });
    assert.deepEqual(log, ["site 3 https://shop.example"]);
  });

  it("always applies events without seq and ignores other tasks' events", () => {
    const { sink, log } = recorder();
    const model = new TaskModel(TASK, sink);
    model.apply(history[0]!);
    const error: EventEnvelope = { taskId: TASK, at, type: "error", error: { code: "PLUGIN_OFFLINE", message: "none", retryable: true } };
    assert.equal(model.apply(error), true);
    assert.equal(model.apply(error), true);
    assert.equal(model.apply({ taskId: TASK, at, type: "ready", lastSeq: 1 }), true);
    assert.equal(model.apply({ ...history[1]!, seq: 9, taskId: "another-task" }), false);
    assert.deepEqual(log, ["message m1 hi", "error PLUGIN_OFFLINE", "error PLUGIN_OFFLINE", "ready"]);
    assert.equal(model.lastSeq, 1);
    assert.equal(model.synced, true);
  });

  it("notices a server whose history ends before what was applied", () => {
    const { sink, log } = recorder();
    const model = new TaskModel(TASK, sink);
    for (const e of history) model.apply(e);
    model.apply({ taskId: TASK, at, type: "ready", lastSeq: 5 });
    model.apply({ taskId: TASK, at, type: "ready", lastSeq: 2 });
    assert.deepEqual(log.slice(-2), ["ready", "ready behind"]);
  });
});

describe("backoffDelay", () => {
  it("starts near 0.5 s, doubles, and never exceeds 10 s", () => {
    const low = () => 0;
    const high = () => 0.999999;
    assert.ok(backoffDelay(0, low) >= 250 && backoffDelay(0, high) <= 625);
    assert.ok(backoffDelay(1, low) >= 750 && backoffDelay(1, high) <= 1250);
    for (let n = 0; n < 40; n++) {
      assert.ok(backoffDelay(n, high) <= 10_000, `attempt ${n}`);
      assert.ok(backoffDelay(n, low) >= 250, `attempt ${n}`);
    }
    assert.ok(backoffDelay(20, low) >= 7_500, "late attempts stay near the cap");
  });
});

describe("describeAction", () => {
  it("says what each action does in a few words", async () => {
    const { describeAction } = await import("../src/steps.ts");
    assert.equal(describeAction({ click: { index: 12 } }), "Click element [12]");
    assert.equal(describeAction({ click: { index: 12 } }, "Sign in"), "Click “Sign in”");
    assert.equal(describeAction({ type: { index: 3, text: "blue mug", submit: true } }, "Search products"), "Type “blue mug” into “Search products” and submit");
    assert.equal(describeAction({ type: { index: 3, text: "blue mug", submit: true } }), "Type “blue mug” into element [3] and submit");
    assert.equal(describeAction({ click: { index: 1 } }, "A very long link text that goes on and on past forty characters"), "Click “A very long link text that goes on and …”");
    assert.equal(describeAction({ navigate: { url: "http://shop.test/" } }), "Go to http://shop.test/");
    assert.equal(describeAction({ wait_for: { text: "Added" } }), "Wait for the text “Added”");
    assert.equal(describeAction({ dialog: { accept: true, text: "Receipts" } }), "Answer the page's dialog: OK with “Receipts”");
    assert.equal(describeAction({ dialog: { accept: false } }), "Answer the page's dialog: Cancel");
    assert.equal(describeAction({ switch_tab: { tab_id: 12 } }), "Switch to tab 12");
    assert.equal(describeAction({ close_tab: {} }), "Close this tab");
    assert.equal(describeAction({ done: { success: false, text: "no" } }), "Give up");
    assert.equal(describeAction({ file_write: { path: "todo.txt", content: "milk" } }), "Write the file “todo.txt” on this computer");
    assert.equal(describeAction({ run_command: { command: "ls -la" } }), "Run “ls -la” on this computer");
    assert.equal(describeAction({ forward: {} }), "Go forward");
    assert.equal(describeAction({ type: { index: 3, text: "mug", submit: false } }), "Type “mug” into element [3]");
    assert.equal(describeAction({ scroll: { direction: "down" } }), "Scroll down");
    assert.equal(describeAction({ scroll: { direction: "down", index: 4 } }, "Results"), "Scroll down in “Results”");
    assert.equal(describeAction({ wait_for: { url: "/done" } }), "Wait for the address “/done”");
    assert.equal(describeAction({ close_tab: { tab_id: 7 } }), "Close tab 7");
    assert.equal(describeAction({ read_page: { from: 0 } }), "Read the page on from character 0");
    assert.equal(describeAction({ done: { success: true, text: "ok" } }), "Finish");
    assert.equal(describeAction({ click_at: { x: 10.4, y: 20.6 } }), "Click at 10,21");
    assert.equal(describeAction({ drag: { from: { index: 2 }, to: { x: 5.2, y: 9.9 } } }), "Drag element [2] to 5,10");
  });

  it("says what a quiet task waits for", async () => {
    const { waitingFor } = await import("../src/steps.ts");
    assert.equal(waitingFor({ kind: "model", step: 3 }, 12), "Waiting for the model to answer or choose step 3 (nothing new for 12 s).");
    assert.equal(waitingFor({ kind: "action", step: 2, what: "Click “Sign in”" }, 10), "Waiting for the browser: step 2, Click “Sign in” (nothing new for 10 s).");
    assert.equal(waitingFor({ kind: "page", step: 2 }, 30), "Waiting for the browser to show the page after step 2 (nothing new for 30 s).");
  });

  it("says a task's status in words", async () => {
    const { statusWords } = await import("../src/steps.ts");
    assert.equal(statusWords("waiting_confirmation"), "Waiting for you");
    assert.equal(statusWords("waiting_permission"), "Waiting for site access");
    assert.equal(statusWords("takeover"), "You have the browser");
    assert.equal(statusWords("completed"), "Done");
    assert.equal(statusWords("some_new_state"), "some new state");
  });
});

describe("currentTab", () => {
  it("is the tab the person looks at in a window of theirs, never the web app", async () => {
    const { currentTab } = await import("../src/task.ts");
    const tab = (tabId: number, windowId: number, url: string, active: boolean) => ({ tabId, windowId, index: 0, url, title: "", status: "complete", active });
    const snapshot = {
      windows: [],
      groups: [],
      tabs: [tab(1, 1, "https://mimo.test/#/task/x", true), tab(2, 2, "https://shop.test/mug", true), tab(3, 2, "https://mail.test/", false), tab(4, 3, "chrome://newtab/", true)],
      activeTabId: 1,
    };
    assert.equal(currentTab(snapshot, "https://mimo.test"), 2);
    assert.equal(currentTab({ ...snapshot, activeTabId: 2 }, "https://mimo.test"), 2);
    assert.equal(currentTab({ ...snapshot, tabs: [snapshot.tabs[0]!] }, "https://mimo.test"), undefined);
  });
});


describe("a retried model call", () => {
  const retry = (reason: "rate_limited" | "context_too_long" | "brand_new", delayMs: number) =>
    ({ seq: 9, taskId: TASK, at, type: "modelRetry", attempt: 1, maxAttempts: 3, reason, message: "slow down", delayMs }) as EventEnvelope;

  it("reaches the sink", () => {
    const { sink, log } = recorder();
    new TaskModel(TASK, sink).apply(retry("rate_limited", 4_000));
    assert.deepEqual(log, ["retry rate_limited 1/3 4000"]);
  });

  it("counts down to the retry, then says it was made", async () => {
    const { retryRemainingMs, retryText } = await import("../src/retry.ts");
    const limited = retry("rate_limited", 4_000) as Parameters<typeof retryRemainingMs>[0];
    assert.equal(retryRemainingMs(limited, at), 4_000);
    assert.equal(retryText(limited, retryRemainingMs(limited, at + 100)), "Rate limited — retrying in 4 s (attempt 1 of 3)");
    assert.equal(retryText(limited, retryRemainingMs(limited, at + 3_500)), "Rate limited — retrying in 1 s (attempt 1 of 3)");
    assert.equal(retryText(limited, retryRemainingMs(limited, at + 4_000)), "Rate limited — retried (attempt 1 of 3)");
    assert.equal(retryRemainingMs(limited, at - 60_000), 4_000, "a clock behind never waits longer than the delay");
    const compacted = retry("context_too_long", 0) as Parameters<typeof retryRemainingMs>[0];
    assert.match(retryText(compacted, 0), /^The conversation was too long for the model; older parts were summarised/);
    const unknown = retry("brand_new", 1_000) as Parameters<typeof retryRemainingMs>[0];
    assert.equal(retryText(unknown, 0), "The model call failed (brand_new) — retried (attempt 1 of 3)");
  });
});
