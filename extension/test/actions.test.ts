import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { ActionOutcome, BrowserAction, ExtensionMessage } from "../../protocol/ts/protocol.ts";
import { ActionLog, INDEX_KEY, MAX_FINISHED, RUNNING_KEY } from "../src/action-log.ts";
import { ActionDispatcher, runBound } from "../src/dispatcher.ts";
import { ActionError } from "../src/results.ts";
import type { ActionSuccess } from "../src/results.ts";
import { MemoryKv } from "./memory-kv.ts";

function action(id: string, name: BrowserAction["name"] = "browser_click", attempt = 1, taskId = "t1"): BrowserAction {
  const params = name === "browser_click" ? { clickId: 1 } : name === "browser_wait_for" ? { text: "x" } : {};
  return { actionId: id, attempt, taskId, clientId: "c", tabId: 5, name, params } as BrowserAction;
}

let kv: MemoryKv;
let sent: ExtensionMessage[];
let online: boolean;
let runs: string[];
let clock: number;
let behaviour: (a: BrowserAction) => Promise<ActionSuccess>;

function dispatcher(): ActionDispatcher {
  return new ActionDispatcher({
    log: new ActionLog(kv),
    execute: (a) => {
      runs.push(`${a.actionId}#${a.attempt}`);
      return behaviour(a);
    },
    send: (m) => {
      if (online) sent.push(m);
      return online;
    },
    now: () => clock,
  });
}

const results = () => sent.flatMap((m) => (m.type === "action_result" ? [m.outcome] : []));
const acks = () => sent.filter((m) => m.type === "action_ack").length;

beforeEach(() => {
  kv = new MemoryKv();
  sent = [];
  online = true;
  runs = [];
  clock = 1_000_000;
  behaviour = async (a) => ({ result: { ran: a.actionId } });
});

describe("dispatch", () => {
  it("acks once the attempt is recorded, before the action runs, then sends its outcome", async () => {
    let release!: () => void;
    let entered = 0;
    behaviour = () =>
      new Promise((resolve) => {
        entered = performance.now();
        release = () => resolve({ result: { done: true } });
      });
    const d = dispatcher();
    const done = d.receive(action("a"));
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(sent.map((m) => m.type), ["action_ack"], "acked while it runs");
    assert.deepEqual(Object.keys((await kv.get([RUNNING_KEY]))[RUNNING_KEY] as object), ["a#1"], "recorded as running");
    assert.equal(results().length, 0);
    // How long the executor has held it: the 10 ms less what recording it took on this machine.
    const held = performance.now() - entered;
    release();
    await done;
    const [{ timings, ...outcome }] = results() as [ActionOutcome];
    assert.deepEqual(outcome, { actionId: "a", attempt: 1, taskId: "t1", status: "ok", result: { done: true }, warnings: [] });
    // Where its time went, stage by stage: held in the executor, that is in the last.
    assert.deepEqual(timings?.map((t) => t.stage), ["log", "queue", "outcome"]);
    assert.ok(entered > 0 && timings![2]!.ms >= held - 0.1, `held ${held} ms: ${JSON.stringify(timings)}`);
  });

  it("reports errors with their codes, partial successes, and internal errors", async () => {
    const d = dispatcher();
    behaviour = async () => {
      throw new ActionError("TARGET_NOT_FOUND", "gone");
    };
    await d.receive(action("e"));
    behaviour = async () => ({ result: { x: 1 }, partial: true, warnings: ["fell back"] });
    await d.receive(action("p"));
    behaviour = async () => {
      throw new TypeError("boom");
    };
    await d.receive(action("i"));
    const [e, p, i] = results();
    assert.deepEqual(e!.error, { code: "TARGET_NOT_FOUND", message: "gone", retryable: false });
    assert.deepEqual([p!.status, p!.warnings], ["partial", ["fell back"]]);
    assert.deepEqual(i!.error, { code: "INTERNAL_ERROR", message: "boom", retryable: false });
  });

  it("runs one action at a time per task, and tasks side by side", async () => {
    const order: string[] = [];
    behaviour = async (a) => {
      order.push(`start ${a.actionId}`);
      await new Promise((r) => setTimeout(r, a.actionId === "slow" ? 30 : 1));
      order.push(`end ${a.actionId}`);
      return { result: null };
    };
    const d = dispatcher();
    // (A page-changing action behind a running one would be refused: see "refuses a page-changing action …".)
    await Promise.all([d.receive(action("slow")), d.receive(action("next", "browser_wait_for")), d.receive(action("other", "browser_click", 1, "t2"))]);
    assert.ok(order.indexOf("end slow") < order.indexOf("start next"), order.join());
    assert.ok(order.indexOf("start other") < order.indexOf("end slow"), "another task does not wait");
  });
});

describe("exactly once", () => {
  it("a delivery of a running attempt is only acked again", async () => {
    let release!: () => void;
    behaviour = () => new Promise((resolve) => (release = () => resolve({ result: 1 })));
    const d = dispatcher();
    const first = d.receive(action("a"));
    await new Promise((r) => setTimeout(r, 5));
    await d.receive(action("a"));
    assert.equal(acks(), 2);
    release();
    await first;
    assert.deepEqual(runs, ["a#1"]);
    assert.equal(results().length, 1);
  });

  it("an attempt is never acked before it is recorded: a worker stopped while recording it acked nothing, and runs the resent one once", async () => {
    // The worker is stopped while its write is in flight: the write never lands.
    const stopped = new MemoryKv();
    stopped.set = () => new Promise<void>(() => undefined);
    const d = new ActionDispatcher({ log: new ActionLog(stopped), execute: async () => ({ result: 1 }), send: (m) => (sent.push(m), true), now: () => clock });
    void d.receive(action("o", "browser_wait_for"));
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(acks(), 0, "no ack: the server's short ack timeout sends it again");
    // The restarted worker never heard of it; the server's second delivery runs it, once.
    await dispatcher().receive(action("o", "browser_wait_for"));
    assert.deepEqual(runs, ["o#1"]);
    assert.equal(acks(), 1);
    assert.equal(results().length, 1);
  });

  it("a delivery of a finished attempt gets the stored outcome, also in a new worker", async () => {
    await dispatcher().receive(action("a"));
    const d = dispatcher();
    await d.receive(action("a"));
    assert.deepEqual(runs, ["a#1"]);
    assert.equal(results().length, 2);
    assert.deepEqual(results()[1], results()[0]);
  });

  it("a new attempt runs anew", async () => {
    const d = dispatcher();
    await d.receive(action("a", "browser_click", 1));
    await d.receive(action("a", "browser_click", 2));
    assert.deepEqual(runs, ["a#1", "a#2"]);
  });

  it("on restart, reports a page-changing action that was running as a TIMEOUT (retryable only if a rerun ends the same), and runs a read-only one again", async () => {
    const log = new ActionLog(kv);
    await log.load();
    await log.start({ key: "click#1", action: action("click"), startedAt: clock });
    await log.start({ key: "open#1", action: { ...action("open"), name: "browser_navigate", params: { url: "http://a.test/" } } as BrowserAction, startedAt: clock });
    await log.start({ key: "wait#1", action: action("wait", "browser_wait_for"), startedAt: clock });
    online = false;
    const d = dispatcher();
    await d.ready();
    await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(runs, ["wait#1"], "only the read-only one runs again");
    assert.equal(results().length, 0, "nothing is sent while offline");
    online = true;
    await d.online();
    const byId = new Map(results().map((o) => [o.actionId, o]));
    assert.equal(byId.get("click")!.error!.code, "TIMEOUT");
    assert.equal(byId.get("click")!.error!.retryable, false, "a second click would click again");
    assert.match(byId.get("click")!.error!.message, /restarted while browser_click was running/);
    assert.equal(byId.get("open")!.error!.code, "TIMEOUT");
    assert.equal(byId.get("open")!.error!.retryable, true, "opening a URL again ends the same way");
    assert.equal(byId.get("wait")!.status, "ok");
    // Delivered again now: answered, not run.
    await d.receive(action("click"));
    assert.deepEqual(runs, ["wait#1"]);
  });

  it("answers what became of an attempt from its log, and never starts one by being asked", async () => {
    let release!: () => void;
    behaviour = (a) => (a.actionId === "held" ? new Promise((resolve) => (release = () => resolve({ result: "late" }))) : Promise.resolve({ result: "done" }));
    const d = dispatcher();
    const held = d.receive(action("held"));
    await d.receive(action("quick", "browser_click", 1, "t2"));
    sent = [];
    const ask = (actionId: string, taskId = "t1") => d.query({ taskId, actionId, attempt: 1 });
    await ask("held");
    await ask("quick", "t2");
    await ask("never");
    const statuses = sent.flatMap((m) => (m.type === "action_status" ? [m] : []));
    assert.deepEqual(statuses.map((m) => [m.actionId, m.state]), [["held", "running"], ["quick", "finished"], ["never", "unknown"]]);
    assert.deepEqual(statuses[1]!.outcome?.result, "done");
    assert.deepEqual(runs, ["held#1", "quick#1"], "asking started nothing");
    release();
    await held;
  });

  it("refuses a page-changing action while another of its task is still running, instead of running it late", async () => {
    let release!: () => void;
    behaviour = (a) => (a.actionId === "blocked" ? new Promise((resolve) => (release = () => resolve({ result: "clicked" }))) : Promise.resolve({ result: a.actionId }));
    const d = dispatcher();
    const blocked = d.receive(action("blocked"));
    await new Promise((r) => setTimeout(r, 5));
    await d.receive(action("second"));
    const refused = results().find((o) => o.actionId === "second");
    assert.equal(refused?.error?.code, "TARGET_NOT_INTERACTABLE");
    assert.match(refused!.error!.message, /browser_click \(sent earlier\) is still running/);
    // A read-only action waits its turn; another task is not held.
    const read = d.receive(action("look", "browser_wait_for"));
    await d.receive(action("elsewhere", "browser_click", 1, "t2"));
    assert.deepEqual(runs, ["blocked#1", "elsewhere#1"]);
    release();
    await Promise.all([blocked, read]);
    assert.deepEqual(runs, ["blocked#1", "elsewhere#1", "look#1"], "the refused one never ran");
    await d.receive(action("third"));
    assert.deepEqual(runs.at(-1), "third#1", "once the page is free, page-changing actions run again");
  });

  it("ends a look still running near the server's budget with a TIMEOUT that says what it did, freeing the task's queue — never a page-changing attempt", async () => {
    // A wait that never ends (a frame whose page is frozen, say): each attempt is given 300 ms.
    let release!: () => void;
    behaviour = (a) =>
      a.actionId === "held-click"
        ? new Promise((resolve) => (release = () => resolve({ result: "clicked" })))
        : a.actionId.startsWith("hung")
          ? new Promise(() => undefined)
          : Promise.resolve({ result: a.actionId });
    const d = dispatcher();
    assert.equal(runBound({ budgetMs: 300 }), 270, "a little before the server gives up");
    await d.receive({ ...action("hung-look", "browser_wait_for"), budgetMs: 300 });
    const [look] = results();
    assert.equal(look!.error?.code, "TIMEOUT");
    assert.match(look!.error!.message, /browser_wait_for did not finish within 0\.3 s in the extension \(waiting for/);
    assert.equal(look!.error!.retryable, true, "a look may be run again");
    // The task's queue is free: the next action runs.
    await d.receive(action("after"));
    const { timings: _, ...after } = results()[1]!;
    assert.deepEqual(after, { actionId: "after", attempt: 1, taskId: "t1", status: "ok", result: "after", warnings: [] });

    // A click the page holds is not ended early: what it started may still land, and while it
    // runs the next click is refused rather than run as well.
    const held = d.receive({ ...action("held-click"), budgetMs: 300 });
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(results().length, 2, "still running past its budget");
    await d.receive(action("second"));
    assert.equal(results().find((o) => o.actionId === "second")?.error?.code, "TARGET_NOT_INTERACTABLE");
    release();
    await held;
    assert.equal(results().find((o) => o.actionId === "held-click")?.status, "ok");
  });

  it("resends on welcome exactly the outcomes the server has not acknowledged, also from a new worker", async () => {
    online = false;
    const d = dispatcher();
    await d.receive(action("lost"));
    online = true;
    await d.receive(action("unanswered"));
    await d.receive(action("recorded"));
    await d.acknowledged({ actionId: "recorded", attempt: 1 });
    sent = [];
    await d.online();
    assert.deepEqual(results().map((o) => o.actionId).sort(), ["lost", "unanswered"]);
    await d.acknowledged({ actionId: "lost", attempt: 1 });
    await d.acknowledged({ actionId: "unanswered", attempt: 1 });
    // An ack of an attempt the log does not know changes nothing.
    await d.acknowledged({ actionId: "recorded", attempt: 2 });
    sent = [];
    await d.online();
    assert.deepEqual(results(), [], "nothing the server has, however many reconnects");
    await dispatcher().online();
    assert.deepEqual(results(), [], "the acks are stored");
    // A repeated delivery is the server asking: it gets the stored outcome even when acked.
    await d.receive(action("recorded"));
    assert.deepEqual(results().map((o) => o.actionId), ["recorded"]);
    assert.deepEqual(runs, ["lost#1", "unanswered#1", "recorded#1"]);
  });

  it("resends an outcome of an older version's log (no ack field) once, until acknowledged", async () => {
    const log = new ActionLog(kv);
    await log.load();
    await log.finish({ key: "old#1", taskId: "t1", name: "browser_click", status: "ok", startedAt: 1, finishedAt: 2 }, { actionId: "old", attempt: 1, taskId: "t1", status: "ok", warnings: [] });
    const index = JSON.parse(kv.data.get(INDEX_KEY)!) as Array<Record<string, unknown>>;
    kv.data.set(INDEX_KEY, JSON.stringify(index.map(({ acked: _acked, ...e }) => ({ ...e, sent: true }))));
    const d = dispatcher();
    await d.online();
    assert.deepEqual(results().map((o) => o.actionId), ["old"]);
    await d.acknowledged({ actionId: "old", attempt: 1 });
    sent = [];
    await d.online();
    assert.deepEqual(results(), []);
  });

  it("keeps a large read-only result out of storage, and runs it again when delivered again", async () => {
    behaviour = async () => ({ result: { text: "x".repeat(100_000) } });
    await dispatcher().receive(action("idx", "browser_wait_for"));
    assert.ok(![...kv.data.keys()].some((k) => k.includes("idx#1") && k.startsWith("actions.out.")));
    const d = dispatcher();
    await d.receive(action("idx", "browser_wait_for"));
    assert.deepEqual(runs, ["idx#1", "idx#1"]);
    assert.equal(results().length, 2);
  });
});

describe("the action log", () => {
  it("remembers the last MAX_FINISHED outcomes and forgets older ones", async () => {
    const log = new ActionLog(kv);
    await log.load();
    const outcome = (id: string): ActionOutcome => ({ actionId: id, attempt: 1, taskId: "t", status: "ok", warnings: [] });
    for (let i = 0; i < MAX_FINISHED + 5; i++) {
      await log.finish({ key: `a${i}#1`, taskId: "t", name: "browser_click", status: "ok", startedAt: i, finishedAt: i }, outcome(`a${i}`));
    }
    const index = JSON.parse(kv.data.get(INDEX_KEY)!) as Array<{ key: string }>;
    assert.equal(index.length, MAX_FINISHED);
    assert.equal(index[0]!.key, "a5#1");
    assert.equal(await log.outcome("a0#1"), undefined);
    assert.equal((await log.outcome("a5#1"))?.actionId, "a5");
    assert.deepEqual(JSON.parse(kv.data.get(RUNNING_KEY)!), {});
  });
});
