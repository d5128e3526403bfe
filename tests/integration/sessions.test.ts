// The session list against the built worker in Miniflare: tasks created and messaged through
// the real worker appear in `GET /api/tasks` (the TaskIndex object, kept up to date by each
// task's coordinator) with their title, status and last activity, the most recently active
// first; found by words of their titles, Chinese included; paged with a cursor; gone once
// deleted; bad parameters refused with the reason.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { EventEnvelope, ForkedTask, TaskList, TaskListEntry } from "../../protocol/ts/protocol.ts";
import { api, newTask, WebClient } from "../support/clients.ts";
import { ownRuntime } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";

let mimo: Mimo;
ownRuntime({}, (m) => (mimo = m));

async function list(query = ""): Promise<TaskList> {
  const res = await api(mimo, `/api/tasks${query}`);
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as TaskList;
}

async function ids(query = ""): Promise<string[]> {
  return (await list(query)).tasks.map((t) => t.taskId);
}

/** Sends `content` to the task and waits until its reply is done; the message's and the completion's events. */
async function converse(taskId: string, content: string): Promise<{ sent: EventEnvelope; done: EventEnvelope }> {
  const web = await WebClient.connect(mimo, taskId);
  await web.waitFor((e) => e.type === "ready", "ready");
  const from = web.received.length;
  web.send({ type: "user_message", content });
  const sent = await web.waitFor((e) => e.type === "message" && e.message.content === content, "the message", 10_000, from);
  await web.reply(from);
  const done = await web.waitFor((e) => e.type === "taskStatus" && e.status === "completed", "completed", 10_000, from);
  await web.close();
  return { sent, done };
}

describe("the session list", () => {
  let flight = "";
  let chinese = "";
  let untitled = "";

  it("lists the tasks with title, status and last activity, the most recently active first", async () => {
    assert.deepEqual(await list(), { tasks: [], nextBefore: null });
    flight = await newTask(mimo);
    chinese = await newTask(mimo);
    untitled = await newTask(mimo);
    // Created: listed at once, untitled.
    const created = (await list()).tasks.find((t) => t.taskId === untitled);
    assert.ok(created, "a new task is listed");
    assert.equal(created.status, "created");
    assert.equal(created.title, undefined);

    const a = await converse(flight, "Find the cheapest flight to Lisbon");
    const b = await converse(chinese, "查找最便宜的航班");
    const tasks = (await list()).tasks;
    assert.deepEqual(
      tasks.map((t) => t.taskId),
      [chinese, flight, untitled],
    );
    const entry = tasks[1]!;
    const expected: TaskListEntry = {
      taskId: flight,
      title: "Find the cheapest flight to Lisbon",
      status: "completed",
      createdAt: entry.createdAt,
      lastActivityAt: entry.lastActivityAt,
      forkedFrom: null,
      forks: [],
    };
    assert.deepEqual(entry, expected);
    assert.ok(entry.createdAt <= a.sent.at, "created before its first message");
    assert.ok(entry.lastActivityAt >= a.sent.at && entry.lastActivityAt <= a.done.at, "last active when its reply finished");
    assert.equal(tasks[0]!.title, "查找最便宜的航班");
    assert.ok(tasks[0]!.lastActivityAt >= b.sent.at);

    // A new message moves a task to the top.
    await converse(flight, "And the second cheapest?");
    assert.deepEqual(await ids(), [flight, chinese, untitled]);
    const again = (await list()).tasks[0]!;
    assert.equal(again.title, "Find the cheapest flight to Lisbon", "the title stays the first message's");
    assert.ok(again.lastActivityAt > entry.lastActivityAt);
  });

  it("finds tasks by words of their titles, in any case, Chinese too", async () => {
    assert.deepEqual(await ids("?q=cheapest"), [flight]);
    assert.deepEqual(await ids(`?q=${encodeURIComponent("LISBON flight")}`), [flight]);
    assert.deepEqual(await ids(`?q=${encodeURIComponent("航班")}`), [chinese]);
    assert.deepEqual(await ids(`?q=${encodeURIComponent("最便宜")}`), [chinese]);
    assert.deepEqual(await ids("?q=cheap"), [flight], "a part of a word");
    assert.deepEqual(await ids(`?q=${encodeURIComponent("cheapest train")}`), [], "every word must match");
    assert.deepEqual(await ids(`?q=${encodeURIComponent("%")}`), [], "no wildcard");
    assert.deepEqual(await ids("?q="), [flight, chinese, untitled], "an empty search lists everything");
  });

  it("pages with a cursor, newest first, to the last page", async () => {
    const seen: string[] = [];
    let before: string | null = null;
    for (let pages = 0; pages < 5; pages++) {
      const page: TaskList = await list(`?limit=1${before === null ? "" : `&before=${encodeURIComponent(before)}`}`);
      assert.equal(page.tasks.length, 1);
      seen.push(page.tasks[0]!.taskId);
      before = page.nextBefore;
      if (before === null) break;
    }
    assert.deepEqual(seen, [flight, chinese, untitled]);
    // A search is paged the same way.
    const first = await list("?limit=1&q=e");
    assert.deepEqual(first.tasks.map((t) => t.taskId), [flight]);
    assert.equal(first.nextBefore, null, "the only match");
  });

  it("refuses bad parameters with SCHEMA_VALIDATION_FAILED and says why", async () => {
    const cases: Array<[string, RegExp]> = [
      ["?limit=0", /limit must be a whole number from 1 to 100/],
      ["?limit=101", /limit must be a whole number from 1 to 100/],
      ["?limit=ten", /limit must be a whole number/],
      ["?before=yesterday", /before must be the nextBefore of a previous page/],
      [`?q=${"x".repeat(201)}`, /q is at most 200 characters/],
    ];
    for (const [query, message] of cases) {
      const res = await api(mimo, `/api/tasks${query}`);
      assert.equal(res.status, 400, query);
      const error = (await res.json()) as { code: string; message: string };
      assert.equal(error.code, "SCHEMA_VALIDATION_FAILED", query);
      assert.match(error.message, message, query);
    }
    assert.equal((await api(mimo, "/api/tasks", null)).status, 401);
    assert.equal((await api(mimo, "/api/tasks", "wrong-token")).status, 401);
  });

  it("drops a deleted task from the list and from searches", async () => {
    const deleted = await fetch(`${mimo.url}/api/task/${chinese}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } });
    assert.equal(deleted.status, 200);
    assert.deepEqual(await ids(), [flight, untitled]);
    assert.deepEqual(await ids(`?q=${encodeURIComponent("航班")}`), []);
  });

  it("keeps the entry up to date after the task's object was evicted", async () => {
    await mimo.evictTask(untitled);
    await converse(untitled, "Water the plants");
    const top = (await list()).tasks[0]!;
    assert.equal(top.taskId, untitled);
    assert.equal(top.title, "Water the plants");
    assert.equal(top.status, "completed");
  });
});

describe("a fork", () => {
  type Exported = { task: { status: string; title?: string }; events: EventEnvelope[] };
  const exported = async (taskId: string): Promise<Exported> => (await (await api(mimo, `/api/task/${taskId}/export`)).json()) as Exported;
  const fork = (taskId: string, body: string) =>
    fetch(`${mimo.url}/api/task/${taskId}/fork`, { method: "POST", headers: { authorization: `Bearer ${mimo.token}`, "content-type": "application/json" }, body });

  it("keeps the history up to its message, links both ways, and goes its own way", async () => {
    const source = await newTask(mimo);
    await converse(source, "Plan a trip to Lisbon");
    await converse(source, "Make it a week in May");
    const messages = (await exported(source)).events.flatMap((e) => (e.type === "message" ? [e.message] : []));
    const firstAnswer = (await exported(source)).events.find((e) => e.type === "chatDelta" && e.finished);
    assert.ok(firstAnswer?.type === "chatDelta");

    const res = await fork(source, JSON.stringify({ messageId: firstAnswer.messageId }));
    assert.equal(res.status, 201, await res.clone().text());
    const made = (await res.json()) as ForkedTask;
    assert.deepEqual(made.forkedFrom, { taskId: source, messageId: firstAnswer.messageId });

    // The fork's history: the question and its answer, nothing after; done until told more.
    const forked = await exported(made.taskId);
    assert.equal(forked.task.status, "completed");
    assert.equal(forked.task.title, "Plan a trip to Lisbon");
    const kept = forked.events.flatMap((e) => (e.type === "message" ? [e.message] : []));
    assert.deepEqual(kept.map((m) => [m.role, m.messageId]), [["user", messages[0]!.messageId], ["assistant", firstAnswer.messageId]]);
    const origin = forked.events.find((e) => e.type === "forkedFrom");
    assert.ok(origin?.type === "forkedFrom");
    assert.deepEqual(origin.origin, { taskId: source, messageId: firstAnswer.messageId });
    assert.equal(origin.taskId, made.taskId, "the envelope names the fork");
    // The task forked keeps its history and notes the fork.
    const after = await exported(source);
    const noted = after.events.find((e) => e.type === "forked");
    assert.ok(noted?.type === "forked");
    assert.deepEqual(noted.fork, { taskId: made.taskId, messageId: firstAnswer.messageId });
    assert.equal(after.events.filter((e) => e.type === "message").length, messages.length);
    // The session list links them both ways.
    const entries = (await list()).tasks;
    assert.deepEqual(entries.find((t) => t.taskId === made.taskId)?.forkedFrom, made.forkedFrom);
    assert.deepEqual(entries.find((t) => t.taskId === source)?.forks, [made.taskId]);

    // It goes another way: the model sees the kept history, not what came after in the source.
    mimo.llm.reset();
    await converse(made.taskId, "Make it a weekend in June instead");
    const seen = (mimo.llm.requests().at(-1)!.body as { messages: Array<{ content: string }> }).messages.map((m) => m.content);
    assert.ok(seen.includes("Plan a trip to Lisbon") && seen.includes("Make it a weekend in June instead"), JSON.stringify(seen));
    assert.ok(!seen.includes("Make it a week in May"), JSON.stringify(seen));
  });

  it("refuses a message that is not in the task, a bad body and an unknown task", async () => {
    const source = await newTask(mimo);
    await converse(source, "Hello");
    const missing = await fork(source, JSON.stringify({ messageId: "m99" }));
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { code: string }).code, "NOT_FOUND");
    const bad = await fork(source, "not json");
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { code: string }).code, "SCHEMA_VALIDATION_FAILED");
    const unknown = await fork("00000000-0000-4000-8000-000000000000", JSON.stringify({ messageId: "m1" }));
    assert.equal(unknown.status, 404);
  });
});
