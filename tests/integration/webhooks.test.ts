// Webhooks against the built worker in Miniflare: subscriptions made over the API, a task's
// events delivered to a local receiver that checks every signature with the `standardwebhooks`
// package and fails the first two deliveries (retried from the dispatcher's alarm with the same
// webhook-id, in order, no event missing), a rotated secret (both sign for a while), a
// subscription to one task and some events, the delivery log and "send again", a receiver that
// never answers given up, and receivers outside the allowed hosts refused with nothing stored.
// Retries are made fast by WEBHOOK_RETRY_BASE_MS (a test-only setting; production waits 10 s,
// doubling); the loopback receiver needs WEBHOOK_ALLOW_LOOPBACK (local development and tests).
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, describe, it } from "node:test";
import type {
  EventEnvelope,
  WebhookDeliveryList,
  WebhookList,
  WebhookPayload,
  WebhookSecret,
} from "../../protocol/ts/protocol.ts";
import { api, ExtensionClient, newTask, observation, post, sleep, WebClient } from "../support/clients.ts";
import { ownRuntime, OBJECTS_NAME } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";
import { agentStep } from "../support/shopper.ts";
import { Receiver, verify } from "../support/webhooks.ts";

let mimo: Mimo;
ownRuntime(
  {
    bindings: {
      WEBHOOK_ALLOWED_HOSTS: "hooks.example.com, *.example.org",
      WEBHOOK_ALLOW_LOOPBACK: "true",
      WEBHOOK_RETRY_BASE_MS: "100",
      WEBHOOK_RETRY_FOR_MS: "2000",
      MIMO_AGENT_MAX_STEPS: "5",
    },
  },
  (m) => (mimo = m),
);

async function subscribe(body: unknown): Promise<WebhookSecret> {
  const res = await post(mimo, "/api/webhooks", body);
  assert.equal(res.status, 201, await res.clone().text());
  return (await res.json()) as WebhookSecret;
}

async function deliveries(webhookId: string): Promise<WebhookDeliveryList["deliveries"]> {
  const res = await api(mimo, `/api/webhooks/deliveries?webhook=${webhookId}`);
  assert.equal(res.status, 200);
  return ((await res.json()) as WebhookDeliveryList).deliveries;
}

/**
 * The log once `done` holds for it: a receiver sees a request before the dispatcher records
 * its answer.
 */
async function deliveriesOnce(webhookId: string, what: string, done: (log: WebhookDeliveryList["deliveries"]) => boolean): Promise<WebhookDeliveryList["deliveries"]> {
  let log = await deliveries(webhookId);
  for (const deadline = Date.now() + 15_000; !done(log); log = await deliveries(webhookId)) {
    if (Date.now() > deadline) assert.fail(`the log never showed ${what}: ${JSON.stringify(log)}`);
    await sleep(50);
  }
  return log;
}

/**
 * The webhook events a task's history holds, told independently of the server's mapping: each
 * change of status that is a creation, pause, resumption or ending; each finished step; each
 * confirmation asked and answered.
 */
function expectedEvents(history: EventEnvelope[]): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  let status: string | undefined;
  const held = (s?: string) => s === "paused" || s === "takeover";
  for (const e of history) {
    if (e.type === "taskStatus") {
      const before = status;
      status = e.status;
      if (before === e.status) continue;
      const type =
        { created: "task.created", completed: "task.completed", error: "task.failed", canceled: "task.canceled" }[e.status as string] ??
        (held(e.status) ? (held(before) ? undefined : "task.paused") : held(before) ? "task.resumed" : undefined);
      if (type) out.push([e.seq!, type]);
    } else if (e.type === "toolUsed" && e.phase === "end") out.push([e.seq!, "task.step_finished"]);
    else if (e.type === "confirmationRequested") out.push([e.seq!, "task.confirmation_requested"]);
    else if (e.type === "confirmationAnswered") out.push([e.seq!, "task.confirmation_answered"]);
  }
  return out;
}

/** Acks and answers every action, as an extension would. */
function standIn(ext: ExtensionClient): void {
  const page = { elements: [{ clickId: 1, tag: "button", text: "Buy", frameId: 0 }], text: "[1]<button>Buy</button>", url: "http://shop.test/", title: "Shop", scrollX: 0, scrollY: 0 };
  ext.serve((action) => {
    if (action.name === "task_start") return { result: { tabId: 11, windowId: 3, url: "http://shop.test/" } };
    return { result: action.name === "browser_observe" ? observation(page, "A shop.") : {} };
  });
}

const receiver = new Receiver((n) => (n < 2 ? 500 : 204));
const refusing = new Receiver(() => 503);
before(async () => {
  await receiver.start();
  await refusing.start();
});
after(async () => {
  await receiver.close();
  await refusing.close();
});

describe("webhooks", () => {
  let hook: WebhookSecret;
  let taskId: string;

  it("refuses receivers outside the allowed hosts, and private or non-https ones, storing nothing", async () => {
    for (const [url, code, status] of [
      ["http://10.0.0.1/hook", "PERMISSION_DENIED", 403],
      ["https://10.0.0.1/hook", "PERMISSION_DENIED", 403],
      ["http://localhost:8080/hook", "PERMISSION_DENIED", 403],
      ["https://169.254.169.254/latest", "PERMISSION_DENIED", 403],
      ["http://127.0.0.2:9/hook", "PERMISSION_DENIED", 403],
      ["https://evil.example.net/hook", "PERMISSION_DENIED", 403],
      ["http://hooks.example.com/hook", "PERMISSION_DENIED", 403],
      ["not a url", "SCHEMA_VALIDATION_FAILED", 400],
    ] as const) {
      const res = await post(mimo, "/api/webhooks", { url, events: [] });
      const body = (await res.json()) as { code: string; message: string };
      assert.equal(res.status, status, `${url}: ${JSON.stringify(body)}`);
      assert.equal(body.code, code, url);
      if (code === "PERMISSION_DENIED") assert.match(body.message, /webhook receiver refused/);
    }
    const bad = await post(mimo, "/api/webhooks", { url: receiver.url, events: ["task.exploded"] });
    assert.equal(bad.status, 400);
    const list = (await (await api(mimo, "/api/webhooks")).json()) as WebhookList;
    assert.deepEqual(list.webhooks, [], "nothing was stored");
    // The routes are the deployment's: no token, no webhooks.
    assert.equal((await api(mimo, "/api/webhooks", null)).status, 401);
    assert.equal((await post(mimo, "/api/webhooks", { url: receiver.url }, "wrong")).status, 401);
  });

  it("delivers every event of a task once by webhook-id, signed, in order, through two failed deliveries", async () => {
    hook = await subscribe({ url: receiver.url, events: [] });
    assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.match(hook.webhook.id, /^wh_[0-9a-f]{16}$/);
    const listed = (await (await api(mimo, "/api/webhooks")).json()) as WebhookList;
    assert.deepEqual(listed.webhooks, [hook.webhook]);
    assert.ok(!JSON.stringify(listed).includes(hook.secret), "the list never shows a secret");

    const ext = await ExtensionClient.connect(mimo, "stand-in");
    standIn(ext);
    mimo.llm.script([
      agentStep({ navigate: { url: "http://shop.test/" } }, "Opening the shop."),
      agentStep({ click: { index: 1 } }, "On the shop."),
      agentStep({ done: { success: true, text: "Bought." } }, "Clicked."),
    ]);
    taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    // Step by step: each step asks for a confirmation first.
    web.send({ type: "set_step_mode", stepByStep: true });
    web.send({ type: "user_message", content: "Buy it at http://shop.test/" });
    const first = await web.waitFor((e) => e.type === "confirmationRequested", "the first confirmation");
    assert.ok(first.type === "confirmationRequested");
    // Confirmed and paused at once: the step in flight ends, nothing new starts until resumed.
    web.send({ type: "confirm", step: first.step, approve: true });
    web.send({ type: "pause" });
    const paused = await web.waitFor((e) => e.type === "taskStatus" && e.status === "paused", "paused");
    web.send({ type: "resume" });
    await web.waitFor((e) => e.type === "taskStatus" && e.status !== "paused", "resumed", 10_000, web.received.indexOf(paused) + 1);
    let answered = web.received.length;
    for (;;) {
      const next = await web.waitFor((e) => e.type === "confirmationRequested" || e.type === "structuredOutput", "a confirmation or the end", 20_000, answered);
      answered = web.received.indexOf(next) + 1;
      if (next.type === "structuredOutput") break;
      if (next.type === "confirmationRequested") web.send({ type: "confirm", step: next.step, approve: true });
    }
    await web.waitFor((e) => e.type === "taskStatus" && e.status === "completed", "completed");
    await receiver.waitFor("task.completed", () => receiver.delivered().some((r) => r.payload.type === "task.completed"));

    // The first two requests failed; each was the first event again (nothing after it went out
    // before it was delivered), with the same id and a fresh signature each time.
    const [one, two, three] = receiver.requests;
    assert.deepEqual([one!.status, two!.status, three!.status], [500, 500, 204]);
    assert.equal(one!.id, two!.id);
    assert.equal(two!.id, three!.id);
    assert.equal(three!.payload.type, "task.created");
    // Every request verifies with the secret, as the standardwebhooks package checks it.
    for (const r of receiver.requests) verify(hook.secret, r);
    assert.throws(() => verify(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, receiver.requests[0]!), /signature/i);
    const tampered = { ...three!, body: three!.body.replace("task.created", "task.canceled") };
    assert.throws(() => verify(hook.secret, tampered), /signature/i);

    // Each event once, in the task's order, and nothing missing against its history.
    const delivered = receiver.delivered();
    const ids = delivered.map((r) => r.id);
    assert.equal(new Set(ids).size, ids.length, `each id delivered once: ${ids}`);
    const seqs = delivered.map((r) => r.payload.data.seq);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), "in the task's order");
    const history = web.history();
    assert.deepEqual(
      delivered.map((r) => [r.payload.data.seq, r.payload.type]),
      expectedEvents(history),
      "every webhook event of the task's history, none missing",
    );
    const types = new Set(delivered.map((r) => r.payload.type));
    for (const type of ["task.created", "task.confirmation_requested", "task.confirmation_answered", "task.paused", "task.resumed", "task.step_finished", "task.completed"]) {
      assert.ok(types.has(type as WebhookPayload["type"]), type);
    }
    const steps = history.filter((e) => e.type === "toolUsed" && e.phase === "end");
    const finished = delivered.filter((r) => r.payload.type === "task.step_finished");
    assert.deepEqual(
      finished.map((r) => [r.payload.data.seq, r.payload.data.step, r.payload.data.summary]),
      steps.map((e) => [e.seq, e.type === "toolUsed" ? e.step : 0, e.type === "toolUsed" ? e.summary : ""]),
      "every finished step, with its summary",
    );
    // The completion carries the task's answer, as its history has it.
    const answer = history.findLast((e) => e.type === "structuredOutput");
    assert.ok(answer?.type === "structuredOutput" && answer.output !== undefined);
    const completed = delivered.find((r) => r.payload.type === "task.completed")!;
    assert.deepEqual(completed.payload.data.output, answer.output);
    assert.equal(completed.payload.data.ok, answer.status === "ok");
    const data = finished[0]!.payload.data;
    assert.equal(data.taskId, taskId);
    assert.equal(data.action, "navigate");
    assert.equal(data.ok, true);
    assert.equal(data.links!.audit, `${mimo.url}/api/task/${taskId}/audit.jsonl`);
    assert.equal(data.links!.task, `${mimo.url}/#/task/${taskId}`);
    assert.match(finished[0]!.payload.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal((await api(mimo, new URL(data.links!.audit).pathname)).status, 200, "the evidence link opens with the deployment token");

    // The log: all delivered, the first after three attempts.
    const log = await deliveriesOnce(hook.webhook.id, "every delivery delivered", (l) => l.every((d) => d.status === "delivered"));
    assert.equal(log.length, delivered.length);
    assert.ok(log.every((d) => d.nextAttemptAt === null), JSON.stringify(log));
    const created = log.find((d) => d.type === "task.created")!;
    assert.equal(created.attempts, 3);
    assert.equal(created.responseStatus, 204);
    assert.equal(created.messageId, three!.id);
    assert.deepEqual(log.map((d) => d.id), [...log.map((d) => d.id)].sort((a, b) => b - a), "newest first");
    await Promise.all([ext.close(), web.close()]);
  });

  it("reports a fork's creation, whatever it starts as", async () => {
    const history = (await (await api(mimo, `/api/task/${taskId}/export`)).json()) as { events: EventEnvelope[] };
    const answer = history.events.findLast((e) => e.type === "message" && e.message.role === "assistant");
    assert.ok(answer?.type === "message");
    const res = await post(mimo, `/api/task/${taskId}/fork`, { messageId: answer.message.messageId });
    assert.equal(res.status, 201, await res.clone().text());
    const fork = ((await res.json()) as { taskId: string }).taskId;
    const forkCreated = () => receiver.delivered().find((r) => r.payload.data.taskId === fork && r.payload.type === "task.created");
    await receiver.waitFor("the fork's task.created", () => forkCreated() !== undefined);
    const created = forkCreated()!;
    // A fork that ends with an answer is done until told more: created, as completed.
    assert.equal(created.payload.data.status, "completed");
    await sleep(300);
    const ofFork = receiver.delivered().filter((r) => r.payload.data.taskId === fork);
    assert.deepEqual(ofFork.map((r) => r.payload.type), ["task.created"], "its creation once, and nothing copied from the task it came from");
  });

  it("sends a delivery again with the same webhook-id", async () => {
    const before = receiver.requests.length;
    const created = (await deliveries(hook.webhook.id)).find((d) => d.type === "task.created" && d.taskId === taskId)!;
    const res = await post(mimo, `/api/webhooks/deliveries/${created.id}/resend`);
    assert.equal(res.status, 200, await res.clone().text());
    await receiver.waitFor("the delivery sent again", () => receiver.requests.length > before);
    const again = receiver.requests[before]!;
    assert.equal(again.id, created.messageId);
    assert.equal(again.status, 204);
    verify(hook.secret, again);
    const log = await deliveriesOnce(hook.webhook.id, "the fourth attempt", (l) => l.find((d) => d.id === created.id)!.attempts === 4);
    const after = log.find((d) => d.id === created.id)!;
    assert.equal(after.status, "delivered");
    assert.equal(after.responseStatus, 204);
    assert.equal((await post(mimo, "/api/webhooks/deliveries/999999/resend")).status, 404);
  });

  it("rotates the secret: the new one signs, and the old one still does for a while", async () => {
    const rotated = (await (await post(mimo, `/api/webhooks/${hook.webhook.id}/rotate`)).json()) as WebhookSecret;
    assert.notEqual(rotated.secret, hook.secret);
    assert.match(rotated.secret, /^whsec_/);
    assert.ok(rotated.webhook.previousSecretUntil! > Date.now() + 23 * 3600_000);
    const before = receiver.requests.length;
    const other = await newTask(mimo);
    await receiver.waitFor("the new task's creation", () => receiver.requests.slice(before).some((r) => r.payload.data.taskId === other));
    const r = receiver.requests.slice(before).find((x) => x.payload.data.taskId === other)!;
    assert.equal(r.payload.type, "task.created");
    assert.equal(r.signature.split(" ").length, 2, "two signatures, space separated");
    verify(rotated.secret, r);
    verify(hook.secret, r);
    // After the overlap only the new one would sign (the overlap is a day; the rule is unit-tested).
  });

  it("reports a task stored before webhooks from its next event on, never its history again", async () => {
    const old = await newTask(mimo);
    await receiver.waitFor("its creation", () => receiver.delivered().some((r) => r.payload.data.taskId === old));
    // As an older release left it: no webhook cursor in the task's storage.
    await mimo.restart(async () => {
      const dir = path.join(mimo.durableObjectsDir, `${OBJECTS_NAME}-TaskCoordinator`);
      let found = false;
      for (const file of (await readdir(dir)).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite")) {
        const db = new DatabaseSync(path.join(dir, file));
        const row = db.prepare("SELECT task_id FROM task").get() as { task_id: string } | undefined;
        if (row?.task_id === old) {
          db.exec("DROP TABLE webhook_cursor");
          found = true;
        }
        db.close();
      }
      assert.ok(found, "the task's storage was found");
    });
    const web = await WebClient.connect(mimo, old);
    web.send({ type: "stop" });
    await web.waitFor((e) => e.type === "taskStatus" && e.status === "canceled", "canceled");
    await web.close();
    await receiver.waitFor("its cancellation", () => receiver.delivered().some((r) => r.payload.data.taskId === old && r.payload.type === "task.canceled"));
    const types = receiver.requests.filter((r) => r.payload.data.taskId === old).map((r) => r.payload.type);
    assert.deepEqual(types, ["task.created", "task.canceled"]);
  });

  it("hears only the events and the task a subscription asks for, and gives up on a receiver that keeps failing", async () => {
    const only = new Receiver();
    await only.start();
    try {
      const other = await newTask(mimo);
      const scoped = await subscribe({ url: only.url, events: ["task.canceled"], taskId: other });
      assert.equal(scoped.webhook.taskId, other);
      assert.deepEqual(scoped.webhook.events, ["task.canceled"]);
      const failing = await subscribe({ url: refusing.url, events: ["task.created"] });
      const third = await newTask(mimo);
      const web = await WebClient.connect(mimo, other);
      web.send({ type: "stop" });
      await web.waitFor((e) => e.type === "taskStatus" && e.status === "canceled", "canceled");
      await web.close();
      await only.waitFor("the canceled task", () => only.delivered().length === 1);
      const got = only.delivered()[0]!;
      assert.equal(got.payload.type, "task.canceled");
      assert.equal(got.payload.data.taskId, other);
      verify(scoped.secret, got);
      // The refusing receiver: tried on the schedule, then given up (WEBHOOK_RETRY_FOR_MS).
      const log = await deliveriesOnce(failing.webhook.id, "the delivery given up", (l) => l.length === 1 && l[0]!.status === "failed");
      assert.equal(log[0]!.taskId, third);
      assert.equal(log[0]!.responseStatus, 503);
      assert.match(log[0]!.lastError ?? "", /503/);
      assert.ok(log[0]!.attempts >= 3, `${log[0]!.attempts} attempts`);
      assert.equal(refusing.requests.length, log[0]!.attempts);
      assert.ok(refusing.requests.every((r) => r.id === log[0]!.messageId));
      // Deleted: gone from the list, its log with it.
      assert.equal((await (await fetch(`${mimo.url}/api/webhooks/${failing.webhook.id}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } })).status), 200);
      const list = (await (await api(mimo, "/api/webhooks")).json()) as WebhookList;
      assert.deepEqual(list.webhooks.map((w) => w.id).sort(), [hook.webhook.id, scoped.webhook.id].sort());
      assert.deepEqual(await deliveries(failing.webhook.id), []);
      assert.equal((await fetch(`${mimo.url}/api/webhooks/${failing.webhook.id}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } })).status, 404);
    } finally {
      await only.close();
    }
  });
});
