// The session list against the built worker in Miniflare: tasks created and messaged through
// the real worker appear in `GET /api/tasks` (the TaskIndex object, kept up to date by each
// task's coordinator) with their title, status and last activity, the most recently active
// first; found by words of their titles, Chinese included; paged with a cursor; gone once
// deleted; bad parameters refused with the reason.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { EventEnvelope, TaskList, TaskListEntry } from "../../protocol/ts/protocol.ts";
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
