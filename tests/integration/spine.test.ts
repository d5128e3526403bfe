// The spine against the real built worker in workerd (Miniflare): auth, tasks, streaming chat
// to several sockets, replay by sequence number, hibernation, restarts, bad input, LLM errors.
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, it } from "node:test";
import WebSocket from "ws";
import type { EventEnvelope, TaskSummary } from "../../protocol/ts/protocol.ts";
import { api, newTask, sleep, WebClient, wsTicket } from "../support/clients.ts";
import { ownRuntime, startMimo, OBJECTS_NAME } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";

const API_KEY = "sk-test-never-leaks-0123456789";

// Each suite below has a runtime of its own (restarts and evictions stay in their suite).
const MIMO_OPTIONS = { bindings: { MIMO_LLM_API_KEY: API_KEY } };
let mimo: Mimo;

/** Every history event of a task, as a fresh client replaying from the start sees it. */
async function fullHistory(taskId: string): Promise<EventEnvelope[]> {
  const client = await WebClient.connect(mimo, taskId);
  await client.waitFor((e) => e.type === "ready", "ready");
  await client.close();
  return client.history();
}

/** Opens the SQLite file of a task's coordinator, while the runtime is stopped. */
async function coordinatorDatabase(taskId: string): Promise<DatabaseSync> {
  const dir = path.join(mimo.durableObjectsDir, `${OBJECTS_NAME}-TaskCoordinator`);
  for (const file of (await readdir(dir)).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite")) {
    const db = new DatabaseSync(path.join(dir, file));
    const row = db.prepare("SELECT task_id FROM task").get() as { task_id: string } | undefined;
    if (row?.task_id === taskId) return db;
    db.close();
  }
  throw new Error(`no stored coordinator for ${taskId} in ${dir}`);
}

function seqs(events: EventEnvelope[]): number[] {
  return events.map((e) => e.seq ?? -1);
}

describe("auth", () => {
  ownRuntime(MIMO_OPTIONS, (m) => (mimo = m));

  it("refuses every API route and socket without the right token", async () => {
    for (const route of ["/api/task/id", "/api/extension/extension-list"]) {
      for (const token of [null, "wrong-token"]) {
        const res = await api(mimo, route, token);
        assert.equal(res.status, 401, `${route} with ${token}`);
        const body = (await res.json()) as { code: string; message: string; retryable: boolean };
        assert.equal(body.code, "UNAUTHORIZED");
        assert.equal(body.retryable, false);
        assert.ok(body.message.length > 0);
      }
    }
    const taskId = await newTask(mimo);
    const ws = mimo.url.replace("http", "ws");
    for (const url of [
      `${ws}/ws/web?taskId=${taskId}`,
      `${ws}/ws/web?taskId=${taskId}&token=wrong`,
      `${ws}/ws/extension?clientId=c1`,
    ]) {
      const refused = await new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(url);
        socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
        socket.on("open", () => reject(new Error(`${url} opened without a valid token`)));
      });
      assert.equal(refused, 401, url);
    }
  });

  it("serves the health check and the web app without a token", async () => {
    assert.equal((await api(mimo, "/api/health", null)).status, 200);
    const page = await fetch(`${mimo.url}/`);
    assert.equal(page.status, 200);
  });
});

describe("tasks", () => {
  ownRuntime(MIMO_OPTIONS, (m) => (mimo = m));

  it("hands out distinct random task ids", async () => {
    const a = await newTask(mimo);
    const b = await newTask(mimo);
    assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(a, b);
  });

  it("summarizes a task, and says 404 for one that does not exist", async () => {
    const taskId = await newTask(mimo);
    const fresh = (await (await api(mimo, `/api/task/${taskId}`)).json()) as TaskSummary;
    assert.equal(fresh.taskId, taskId);
    assert.equal(fresh.status, "created");
    assert.equal(fresh.lastSeq, 1, "the log starts with the created status");
    const web = await WebClient.connect(mimo, taskId);
    web.send({ type: "user_message", content: "summarize me" });
    await web.reply();
    await web.waitFor((e) => e.type === "taskStatus" && e.status === "completed");
    const done = (await (await api(mimo, `/api/task/${taskId}`)).json()) as TaskSummary;
    assert.equal(done.status, "completed");
    assert.equal(done.title, "summarize me");
    assert.equal(done.lastSeq, web.lastSeq());
    await web.close();
    const unknown = await api(mimo, "/api/task/00000000-0000-4000-8000-000000000000");
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { code: string }).code, "NOT_FOUND");
    assert.equal((await api(mimo, "/api/task/nonsense")).status, 400);
    assert.equal((await api(mimo, `/api/task/${taskId}`, null)).status, 401);
  });

  it("refuses sockets for malformed and unknown task ids", async () => {
    const ws = mimo.url.replace("http", "ws");
    const status = (url: string) =>
      new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(url);
        socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
        socket.on("open", () => reject(new Error("opened")));
      });
    assert.equal(await status(`${ws}/ws/web?taskId=not-a-task&ticket=${await wsTicket(mimo)}`), 400);
    const unknown = "00000000-0000-4000-8000-000000000000";
    assert.equal(await status(`${ws}/ws/web?taskId=${unknown}&ticket=${await wsTicket(mimo)}`), 404);
  });
});

describe("chat streaming", () => {
  ownRuntime(MIMO_OPTIONS, (m) => (mimo = m));

  it("streams every delta to two sockets of the same task, in the same order", async () => {
    const taskId = await newTask(mimo);
    mimo.llm.script([{ match: "two sockets", chunks: ["Deltas ", "reach ", "both ", "tabs."], chunkDelayMs: 30 }]);
    const first = await WebClient.connect(mimo, taskId);
    const second = await WebClient.connect(mimo, taskId);
    await Promise.all([first.waitFor((e) => e.type === "ready"), second.waitFor((e) => e.type === "ready")]);
    first.send({ type: "user_message", content: "stream to two sockets please" });
    const [a, b] = await Promise.all([first.reply(), second.reply()]);
    assert.equal(a.text, "Deltas reach both tabs.");
    assert.deepEqual(b, a);
    const deltas = (c: WebClient) => c.received.filter((e) => e.type === "chatDelta");
    assert.equal(deltas(first).length, 5, "four text deltas and the closing one");
    assert.deepEqual(deltas(second), deltas(first));
    // The person's own message is echoed to both, and the task ends completed.
    for (const client of [first, second]) {
      await client.waitFor((e) => e.type === "taskStatus" && e.status === "completed", "completed");
      const echoed = client.received.find((e) => e.type === "message");
      assert.ok(echoed && echoed.type === "message" && echoed.message.content === "stream to two sockets please");
      const output = await client.waitFor((e) => e.type === "structuredOutput");
      assert.ok(output.type === "structuredOutput" && output.status === "ok");
    }
    // The gateway spoke OpenAI's streaming format with the configured key.
    const request = mimo.llm.requests().find((r) => JSON.stringify(r.body).includes("two sockets"));
    assert.ok(request, "the LLM server saw the request");
    assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
    assert.equal((request.body as { stream: boolean }).stream, true);
    await Promise.all([first.close(), second.close()]);
  });

  it("answers messages sent while a reply streams, in order, after it", async () => {
    const taskId = await newTask(mimo);
    mimo.llm.script([
      { match: "queue-one", text: "first answer", chunkDelayMs: 80 },
      { match: "queue-two", text: "second answer" },
    ]);
    const web = await WebClient.connect(mimo, taskId);
    web.send({ type: "user_message", content: "queue-one" });
    await web.waitFor((e) => e.type === "chatDelta", "first delta");
    web.send({ type: "user_message", content: "queue-two" });
    const first = await web.reply();
    const second = await web.reply(web.received.findIndex((e) => e.type === "chatDelta" && e.finished) + 1);
    assert.equal(first.text, "first answer");
    assert.equal(second.text, "second answer");
    // The second turn saw the conversation in the order it happened.
    const request = mimo.llm.requests().find((r) => JSON.stringify(r.body).includes("queue-two"));
    const messages = (request?.body as { messages: Array<{ role: string; content: string }> }).messages;
    assert.deepEqual(
      messages.slice(1).map((m) => [m.role, m.content]),
      [
        ["user", "queue-one"],
        ["assistant", "first answer"],
        ["user", "queue-two"],
      ],
    );
    await web.close();
  });

  it("stops a streaming reply where it is", async () => {
    const taskId = await newTask(mimo);
    mimo.llm.script([{ match: "long story", text: "one two three four five six seven eight nine ten", chunkDelayMs: 150 }]);
    const web = await WebClient.connect(mimo, taskId);
    web.send({ type: "user_message", content: "tell me a long story" });
    await web.waitFor((e) => e.type === "chatDelta", "first delta");
    web.send({ type: "stop" });
    const stopped = await web.reply();
    await web.waitFor((e) => e.type === "taskStatus" && e.status === "canceled", "canceled");
    assert.ok(stopped.text.length > 0 && stopped.text.length < "one two three four five six seven eight nine ten".length);
    await sleep(600);
    const last = web.received.findLast((e) => e.type === "chatDelta" && e.messageId === stopped.messageId);
    assert.ok(last?.type === "chatDelta" && last.finished, "no delta after the message finished");
    await web.close();
  });

  it("retries a rate-limited call after the time the provider asked for, then streams", async () => {
    const taskId = await newTask(mimo);
    mimo.llm.script([
      { match: "busy now", error: { status: 429, message: "Rate limit reached", retryAfter: 1 } },
      { match: "busy now", text: "Answered on the second try" },
    ]);
    const web = await WebClient.connect(mimo, taskId);
    const started = Date.now();
    web.send({ type: "user_message", content: "busy now" });
    assert.equal((await web.reply()).text, "Answered on the second try");
    assert.ok(Date.now() - started >= 1000, "waited the Retry-After second");
    assert.equal(mimo.llm.requests().filter((r) => JSON.stringify(r.body).includes("busy now")).length, 2);
    assert.ok(!web.received.some((e) => e.type === "structuredOutput" && e.status === "error"));
    await web.close();
  });

  it("reports an LLM failure as a structured error and never leaks the key", async () => {
    const taskId = await newTask(mimo);
    mimo.llm.script([{ match: "rate me", error: { status: 401, message: "Invalid API key provided" } }]);
    const web = await WebClient.connect(mimo, taskId);
    web.send({ type: "user_message", content: "rate me" });
    const output = await web.waitFor((e) => e.type === "structuredOutput", "structured output");
    assert.ok(output.type === "structuredOutput");
    assert.equal(output.status, "error");
    assert.equal(output.error?.code, "LLM_ERROR");
    assert.equal(output.error?.retryable, false, "a bad key is not retried");
    assert.match(output.error?.message ?? "", /Invalid API key/);
    assert.equal(mimo.llm.requests().filter((r) => JSON.stringify(r.body).includes("rate me")).length, 1);
    await web.waitFor((e) => e.type === "taskStatus" && e.status === "error", "error status");
    assert.ok(!JSON.stringify(web.received).includes(API_KEY));
    await web.close();
  });
});

describe("replay", () => {
  ownRuntime(MIMO_OPTIONS, (m) => (mimo = m));

  it("a client reconnecting with lastSeq gets exactly what it missed, then live events", async () => {
    const taskId = await newTask(mimo);
    const words = Array.from({ length: 24 }, (_, i) => `w${i}`);
    mimo.llm.script([{ match: "replay me", chunks: words.map((w) => `${w} `), chunkDelayMs: 60 }]);
    const first = await WebClient.connect(mimo, taskId);
    first.send({ type: "user_message", content: "replay me" });
    await first.waitFor((e) => e.type === "chatDelta" && e.delta === "w3 ", "a few deltas");
    await first.close();
    const seen = first.history();
    const lastSeq = first.lastSeq();

    const second = await WebClient.connect(mimo, taskId, lastSeq);
    const reply = await second.reply();
    await second.waitFor((e) => e.type === "taskStatus" && e.status === "completed", "completed");
    assert.equal(first.assistantText(reply.messageId) + second.assistantText(reply.messageId), words.map((w) => `${w} `).join(""));
    const resumed = second.history();
    assert.ok(resumed.length > 0 && resumed[0]!.seq === lastSeq + 1, "starts right after lastSeq");

    // No gap and no duplicate: together they are exactly the task's history.
    const all = await fullHistory(taskId);
    assert.deepEqual([...seen, ...resumed], all);
    assert.deepEqual(seqs(all), all.map((_, i) => i + 1));
    await second.close();
  });

  it("sends ready with the last sequence number after the replay", async () => {
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    web.send({ type: "user_message", content: "hello" });
    await web.reply();
    const history = await fullHistory(taskId);
    const late = await WebClient.connect(mimo, taskId, 2);
    const ready = await late.waitFor((e) => e.type === "ready");
    assert.ok(ready.type === "ready");
    assert.equal(ready.lastSeq, history.at(-1)!.seq);
    assert.deepEqual(seqs(late.history()), seqs(history).filter((s) => s > 2));
    await Promise.all([web.close(), late.close()]);
  });
});

describe("hibernation and restarts", () => {
  ownRuntime(MIMO_OPTIONS, (m) => (mimo = m));

  it("hibernates when idle and wakes with its sockets and state intact", async () => {
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    web.send({ type: "user_message", content: "before sleeping" });
    await web.reply();
    await web.waitFor((e) => e.type === "taskStatus" && e.status === "completed");
    const summary = async () => (await (await api(mimo, `/api/task/${taskId}`)).json()) as TaskSummary;
    const awake = await summary();
    // workerd evicts an idle object after some 10–15 s; its hibernatable socket stays open.
    let asleep = awake;
    for (let i = 0; i < 4 && asleep.instanceStartedAt === awake.instanceStartedAt; i++) {
      await sleep(16_000);
      asleep = await summary();
    }
    assert.ok(asleep.instanceStartedAt > awake.instanceStartedAt, "a new instance was constructed");
    assert.deepEqual({ ...asleep, instanceStartedAt: 0 }, { ...awake, instanceStartedAt: 0 }, "state intact");
    assert.equal(web.closed, null, "the socket survived");
    web.send({ type: "user_message", content: "after waking" });
    assert.equal((await web.reply(web.received.length)).text, "You said: after waking");
    await web.close();
  });

  it("keeps sockets and state when the coordinator is evicted", async () => {
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    web.send({ type: "user_message", content: "before eviction" });
    const before = await web.reply();
    await mimo.evictTask(taskId);
    web.send({ type: "user_message", content: "after eviction" });
    const from = web.received.length;
    const afterReply = await web.reply(from);
    assert.equal(afterReply.text, "You said: after eviction");
    assert.notEqual(afterReply.messageId, before.messageId, "message ids continue after the restart of the object");
    assert.equal(web.closed, null, "the socket survived");
    const history = await fullHistory(taskId);
    assert.deepEqual(seqs(history), history.map((_, i) => i + 1), "one unbroken log");
    await web.close();
  });

  it("keeps tasks and messages across a runtime restart", async () => {
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    web.send({ type: "user_message", content: "remember me" });
    await web.reply();
    const before = await fullHistory(taskId);
    await mimo.restart();
    const after = await fullHistory(taskId);
    assert.deepEqual(after, before);
    const again = await WebClient.connect(mimo, taskId, after.at(-1)!.seq);
    again.send({ type: "user_message", content: "still there?" });
    await again.reply();
    const request = mimo.llm.requests().find((r) => JSON.stringify(r.body).includes("still there?"));
    const contents = (request?.body as { messages: Array<{ content: string }> }).messages.map((m) => m.content);
    assert.deepEqual(contents.slice(1), ["remember me", "You said: remember me", "still there?"]);
    await again.close();
  });

  it("answers a task whose stored records cannot be read with a clear error, and lets it be deleted", async () => {
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    web.send({ type: "user_message", content: "a task that will not load" });
    await web.reply();
    await web.close();
    await mimo.restart(async () => {
      // A record written by a release that no longer exists (or damaged on disk).
      const db = await coordinatorDatabase(taskId);
      db.prepare("INSERT INTO actions (action_id, created_at, body) VALUES (?, ?, ?)").run("act_future", 1, '{"actionId":"act_future","shape":"unknown"}');
      db.close();
    });
    const res = await api(mimo, `/api/task/${taskId}`);
    assert.equal(res.status, 500);
    const error = (await res.json()) as { code: string; message: string };
    assert.equal(error.code, "INTERNAL_ERROR");
    assert.match(error.message, /stored records cannot be read \(.*missing field/);
    assert.match(error.message, /delete the task/);
    // Still answering, with the same reason, on every route.
    const again = await api(mimo, `/api/task/${taskId}/actions`);
    assert.equal(((await again.json()) as { message: string }).message, error.message);
    const deleted = await fetch(`${mimo.url}/api/task/${taskId}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } });
    assert.equal(deleted.status, 200, await deleted.clone().text());
    assert.equal((await api(mimo, `/api/task/${taskId}`)).status, 404);
  });

  it("re-runs a reply that a restart cut off", async () => {
    const taskId = await newTask(mimo);
    mimo.llm.script([
      { match: "cut off", chunks: ["partial ", "never ", "finished"], stallAfterFirstChunkMs: 60_000 },
      { match: "cut off", text: "answered after the restart" },
    ]);
    const web = await WebClient.connect(mimo, taskId);
    web.send({ type: "user_message", content: "this gets cut off" });
    const partial = await web.waitFor((e) => e.type === "chatDelta", "the first delta");
    await mimo.restart();
    const back = await WebClient.connect(mimo, taskId, web.lastSeq());
    const closed = await back.waitFor(
      (e) => e.type === "chatDelta" && e.finished && partial.type === "chatDelta" && e.messageId === partial.messageId,
      "the cut-off message closed",
    );
    assert.ok(closed);
    const reply = await back.reply(back.received.indexOf(closed) + 1, 20_000);
    assert.equal(reply.text, "answered after the restart");
    assert.notEqual(reply.messageId, partial.type === "chatDelta" ? partial.messageId : "");
    await Promise.all([web.close(), back.close()]);
  });
});

describe("bad input", () => {
  ownRuntime(MIMO_OPTIONS, (m) => (mimo = m));

  it("answers each malformed frame with SCHEMA_VALIDATION_FAILED, keeps the socket and stores nothing", async () => {
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    web.send({ type: "user_message", content: "a stored message" });
    await web.reply();
    const stored = await fullHistory(taskId);
    const frames: Array<[string, string | Buffer]> = [
      ["not JSON", "{this is not json"],
      ["unknown type", JSON.stringify({ type: "launch_missiles" })],
      ["missing field", JSON.stringify({ type: "user_message" })],
      ["wrong field type", JSON.stringify({ type: "user_message", content: 42 })],
      ["empty message", JSON.stringify({ type: "user_message", content: "   " })],
      ["oversize frame", JSON.stringify({ type: "user_message", content: "x".repeat(200 * 1024) })],
      ["binary frame", Buffer.from([1, 2, 3])],
      ["answer format that is no JSON Schema", JSON.stringify({ type: "user_message", content: "list kettles", answerSchema: { type: "kettle" } })],
      ["answer format that is not an object", JSON.stringify({ type: "user_message", content: "list kettles", answerSchema: "a table please" })],
    ];
    for (const [what, frame] of frames) {
      const from = web.received.length;
      web.sendRaw(frame);
      const error = await web.waitFor((e) => e.type === "error", what, 5000, from);
      assert.ok(error.type === "error");
      assert.equal(error.error.code, "SCHEMA_VALIDATION_FAILED", what);
      if (what.startsWith("answer format")) assert.match(error.error.message, /answerSchema/, what);
      assert.equal(error.error.retryable, false);
      assert.equal(error.seq, undefined, `${what}: errors are not history`);
    }
    assert.equal(web.closed, null, "the socket stayed open");
    assert.deepEqual(await fullHistory(taskId), stored, "nothing stored changed");
    web.send({ type: "user_message", content: "still works" });
    assert.equal((await web.reply(web.received.length)).text, "You said: still works");
    await web.close();
  });
});

describe("anthropic provider", () => {
  ownRuntime(MIMO_OPTIONS, (m) => (mimo = m));

  it("streams a reply through the Anthropic Messages format", async () => {
    const anthropic = await startMimo({
      bindings: { MIMO_LLM_PROVIDER: "anthropic", MIMO_LLM_API_KEY: "sk-ant-test" },
      turns: [{ text: "Hello from Claude's wire format" }],
    });
    try {
      const taskId = await newTask(anthropic);
      const web = await WebClient.connect(anthropic, taskId);
      web.send({ type: "user_message", content: "hi" });
      assert.equal((await web.reply()).text, "Hello from Claude's wire format");
      const request = anthropic.llm.requests()[0]!;
      assert.equal(request.path, "/v1/messages");
      assert.equal(request.headers["x-api-key"], "sk-ant-test");
      await web.close();
    } finally {
      await anthropic.dispose();
    }
  });
});
