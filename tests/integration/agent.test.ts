// The agent loop over the wire with the Anthropic provider: the built worker in Miniflare, the
// scripted LLM server speaking Anthropic Messages, and a protocol client standing in for the
// extension (the real extension runs the agent in tests/browser/agent.test.ts).
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import type { AuditRecord, BrowserAction, ErrorCode, EventEnvelope, ExtensionMessage, ObservedPart, PresignResponse } from "../../protocol/ts/protocol.ts";
import { api, ExtensionClient, newTask, post, sleep, WebClient } from "../support/clients.ts";
import { ownRuntime } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";
import { agentStep } from "../support/shopper.ts";
import { unzip } from "../support/unzip.ts";

let mimo: Mimo;
// Vision on: the stand-in's screenshots fail (no image is sent) except in the vision test.
ownRuntime(
  { bindings: { MIMO_LLM_PROVIDER: "anthropic", MIMO_LLM_API_KEY: "sk-ant-test", MIMO_AGENT_MAX_STEPS: "3", MIMO_AGENT_VISION: "on" } },
  (m) => (mimo = m),
);

/** Actions the stand-in fails (besides the screenshot, which it never manages). */
let failing = new Set<string>();

/** What the stand-in answers for each action: a result, or an error code. */
function answer(action: BrowserAction): { result: unknown } | { code: string; retryable: boolean } {
  if (failing.has(action.name)) return { code: "TIMEOUT", retryable: false };
  switch (action.name) {
    case "task_start":
      return { result: { tabId: 11, windowId: 3, url: action.params.url ?? "about:blank" } };
    case "browser_screenshot":
      return { code: "CDP_UNAVAILABLE", retryable: false };
    case "browser_readability_extract":
      return { result: { text: "Docs home. Install with npm.", title: "Docs", contentLengthBytes: 28, truncated: false } };
    case "browser_dom_index":
      return { result: { elements: [{ clickId: 1, tag: "a", text: "Install", frameId: 0 }], text: "[1]<a>Install</a>", url: "http://docs.test/", title: "Docs", scrollX: 0, scrollY: 0 } };
    case "browser_observe":
      return { result: { screenshot: part(action, "browser_screenshot"), readability: part(action, "browser_readability_extract"), domIndex: part(action, "browser_dom_index") } };
    default:
      return { result: {} };
  }
}

/** A part of the observation `look`: what the stand-in answers the capture `name` with. */
function part(look: BrowserAction, name: "browser_screenshot" | "browser_readability_extract" | "browser_dom_index"): ObservedPart<unknown> {
  const a = answer({ ...look, name, params: {} });
  return "result" in a ? { result: a.result, partial: false, warnings: [] } : { error: { code: a.code as ErrorCode, message: `${name} failed`, retryable: a.retryable }, partial: false, warnings: [] };
}

/**
 * Acks and answers every action it is sent, as an extension would — except those `hold` picks,
 * which it acks and keeps running (their result is the test's to send).
 */
function standIn(ext: ExtensionClient, hold: (action: BrowserAction) => boolean = () => false): void {
  ext.ws.on("message", (data) => {
    const frame = JSON.parse(String(data)) as { type: string; action?: BrowserAction };
    if (frame.type !== "browser_action" || frame.action === undefined) return;
    const action = frame.action;
    if (hold(action)) {
      ext.send({ type: "action_ack", actionId: action.actionId, attempt: action.attempt, taskId: action.taskId });
      return;
    }
    const base = { actionId: action.actionId, attempt: action.attempt, taskId: action.taskId };
    ext.send({ type: "action_ack", ...base });
    const a = answer(action);
    const outcome: ExtensionMessage =
      "result" in a
        ? { type: "action_result", outcome: { ...base, status: "ok", result: a.result, warnings: [] } }
        : { type: "action_result", outcome: { ...base, status: "error", error: { code: a.code as "CDP_UNAVAILABLE", message: `${action.name} failed`, retryable: a.retryable }, warnings: [] } };
    ext.send(outcome);
  });
}

describe("an agent run with Anthropic Messages", () => {
  it("sends the tool, the tool results and the page in Anthropic's shapes, and finishes", async () => {
    const ext = await ExtensionClient.connect(mimo, "stand-in");
    standIn(ext);
    mimo.llm.script([
      agentStep({ navigate: { url: "http://docs.test/" } }, "Opening the docs."),
      agentStep({ done: { success: true, text: "The docs say: install with npm." } }, "Read the page."),
    ]);
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    web.send({ type: "user_message", content: "How do I install it? Check http://docs.test/" });
    const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 20_000);
    assert.ok(outcome.type === "structuredOutput" && outcome.status === "ok", JSON.stringify(outcome));
    const page = web.received.find((e) => e.type === "pageObserved");
    assert.ok(page?.type === "pageObserved");
    assert.deepEqual(page.missing, ["screenshot"], "one capture missing is a warning, not a failure");

    const [first, second] = mimo.llm.requests().map((r) => r.body as { tools: Array<{ name: string; input_schema: { required: string[] } }>; messages: Array<{ role: string; content: unknown }> });
    assert.equal(first!.tools[0]!.name, "AgentOutput");
    assert.ok(first!.tools[0]!.input_schema.required.includes("action"));
    // The model's call and its result, then the page, alternating as Anthropic requires.
    const roles = second!.messages.map((m) => m.role);
    assert.deepEqual(roles.slice(-2), ["assistant", "user"]);
    const call = (second!.messages.at(-2)!.content as Array<{ type: string; id?: string; name?: string }>).find((b) => b.type === "tool_use")!;
    assert.equal(call.name, "AgentOutput");
    const reply = second!.messages.at(-1)!.content as Array<{ type: string; tool_use_id?: string; content?: string; text?: string }>;
    assert.equal(reply[0]!.type, "tool_result");
    assert.equal(reply[0]!.tool_use_id, call.id);
    assert.equal(JSON.parse(reply[0]!.content!).ok, true);
    assert.match(reply[1]!.text!, /<page>[\s\S]*missing: screenshot[\s\S]*\[1\]<a>Install<\/a>/);

    // The whole run exports: the history as a reconnect replays it, and every action.
    const res = await api(mimo, `/api/task/${taskId}/export`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-disposition"), `attachment; filename="mimo-task-${taskId}.json"`);
    const exported = (await res.json()) as { format: string; task: { status: string }; events: Array<{ seq: number; type: string }>; actions: Array<{ command: { name: string }; state: string }> };
    assert.equal(exported.format, "mimo-task-export/1");
    assert.equal(exported.task.status, "completed");
    assert.deepEqual(exported.events.map((e) => e.seq), exported.events.map((_, i) => i + 1));
    assert.deepEqual(exported.events, web.history(), "the same history the web socket got");
    assert.ok(exported.events.some((e) => e.type === "toolUsed"));
    assert.deepEqual(exported.actions.map((a) => a.command.name), ["task_start", "browser_observe"]);
    assert.equal((await api(mimo, `/api/task/00000000-0000-4000-8000-000000000000/export`)).status, 404);
    await Promise.all([ext.close(), web.close()]);
  });

  it("fails with PAGE_PREP_FAILED when neither a screenshot nor the page's text can be captured", async () => {
    failing = new Set(["browser_readability_extract"]);
    const { web, ext } = await startRun([agentStep({ navigate: { url: "http://docs.test/" } })]);
    const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 20_000);
    assert.ok(outcome.type === "structuredOutput" && outcome.status === "error");
    assert.equal(outcome.error?.code, "PAGE_PREP_FAILED");
    assert.equal(outcome.error?.retryable, true);
    assert.match(outcome.error!.message, /browser_readability_extract failed/);
    await web.waitFor((e) => e.type === "taskStatus" && e.status === "error", "status error");
    await Promise.all([ext.close(), web.close()]);
  });

  it("ends with STEP_LIMIT_EXCEEDED after MIMO_AGENT_MAX_STEPS steps", async () => {
    failing = new Set();
    const scroll = agentStep({ scroll: { direction: "down" } }, "Still looking.");
    const { web, ext } = await startRun([agentStep({ navigate: { url: "http://docs.test/" } }), scroll, scroll, scroll]);
    const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 20_000);
    assert.ok(outcome.type === "structuredOutput" && outcome.status === "error");
    assert.equal(outcome.error?.code, "STEP_LIMIT_EXCEEDED");
    assert.match(outcome.error!.message, /3 steps/);
    assert.equal(web.received.filter((e) => e.type === "toolUsed" && e.phase === "end").length, 3);
    await Promise.all([ext.close(), web.close()]);
  });
});

/** A task whose goal starts a run with `turns`, and a stand-in extension answering it. */
async function startRun(turns: Parameters<Mimo["llm"]["script"]>[0]): Promise<{ web: WebClient; ext: ExtensionClient }> {
  const ext = await ExtensionClient.connect(mimo, `stand-in-${Math.random().toString(16).slice(2)}`);
  standIn(ext);
  mimo.llm.reset();
  mimo.llm.script(turns);
  const taskId = await newTask(mimo);
  const web = await WebClient.connect(mimo, taskId);
  await web.waitFor((e) => e.type === "taskStatus" && e.selectedClientId === ext.clientId, "bound to the stand-in");
  web.send({ type: "user_message", content: "Read http://docs.test/" });
  return { web, ext };
}

describe("what the person sees while the model is asked again", () => {
  it("tells a rate-limited step's retry with its attempt, reason and wait, and keeps it in the audit log and the evidence zip", async () => {
    failing = new Set();
    const { web, ext } = await startRun([
      agentStep({ navigate: { url: "http://docs.test/" } }),
      { error: { status: 429, message: "Number of request tokens has exceeded your per-minute rate limit", retryAfter: 1 } },
      agentStep({ done: { success: true, text: "Install it with npm." } }),
    ]);
    const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 20_000);
    assert.ok(outcome.type === "structuredOutput" && outcome.status === "ok", JSON.stringify(outcome));
    const retries = web.history().filter((e) => e.type === "modelRetry");
    assert.equal(retries.length, 1, JSON.stringify(retries));
    const retry = retries[0]!;
    assert.ok(retry.type === "modelRetry");
    assert.deepEqual(
      { attempt: retry.attempt, maxAttempts: retry.maxAttempts, reason: retry.reason, delayMs: retry.delayMs, message: retry.message },
      { attempt: 1, maxAttempts: 3, reason: "rate_limited", delayMs: 1_000, message: "Number of request tokens has exceeded your per-minute rate limit" },
    );
    // Told before the wait, and the wait is the one the provider asked for.
    const requests = mimo.llm.requests();
    assert.equal(requests.length, 3);
    assert.ok(retry.at <= requests[2]!.at, "the event comes before the retried call");
    assert.ok(requests[2]!.at - requests[1]!.answeredAt! >= 900, `retried ${requests[2]!.at - requests[1]!.answeredAt!} ms after the 429`);
    const done = web.history().find((e) => e.type === "toolUsed" && e.step === 2 && e.phase === "start");
    assert.ok(done !== undefined && done.seq! > retry.seq!, "the step it chose comes after it");

    const taskId = retry.taskId;
    const jsonl = await (await api(mimo, `/api/task/${taskId}/audit.jsonl`)).text();
    const records = jsonl.trimEnd().split("\n").map((line) => JSON.parse(line) as AuditRecord);
    assert.deepEqual(records.map((r) => [r.step, r.modelRetries?.length ?? 0]), [[1, 0], [2, 1]], "kept with the step the retried call chose");
    assert.deepEqual(records[1]!.modelRetries![0], { at: retry.at, attempt: 1, maxAttempts: 3, reason: "rate_limited", message: retry.message, delayMs: 1_000 });

    const work = await mkdtemp(path.join(tmpdir(), "mimo-retry-"));
    try {
      const zip = path.join(work, "evidence.zip");
      await writeFile(zip, Buffer.from(await (await api(mimo, `/api/task/${taskId}/export.zip`)).arrayBuffer()));
      const names = unzip(zip, work);
      assert.ok(names.includes("audit.jsonl") && names.includes("task.json"), names.join(", "));
      assert.equal(await readFile(path.join(work, "audit.jsonl"), "utf8"), jsonl);
      const exported = JSON.parse(await readFile(path.join(work, "task.json"), "utf8")) as { events: EventEnvelope[] };
      assert.deepEqual(exported.events.filter((e) => e.type === "modelRetry"), [retry]);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    await Promise.all([ext.close(), web.close()]);
  });

  it("compacts a step's prompt that is too long for the model and asks again, and the run goes on to finish", async () => {
    failing = new Set();
    const { web, ext } = await startRun([
      agentStep({ navigate: { url: "http://docs.test/" } }),
      { contextOverflow: true },
      agentStep({ done: { success: true, text: "Install it with npm." } }),
    ]);
    const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 20_000);
    assert.ok(outcome.type === "structuredOutput" && outcome.status === "ok", JSON.stringify(outcome));
    assert.equal((outcome.output as { text: string }).text, "Install it with npm.");
    const retry = web.history().find((e) => e.type === "modelRetry");
    assert.ok(retry?.type === "modelRetry", "the person is told");
    assert.deepEqual(
      { attempt: retry.attempt, maxAttempts: retry.maxAttempts, reason: retry.reason, delayMs: retry.delayMs, message: retry.message },
      { attempt: 1, maxAttempts: 3, reason: "context_too_long", delayMs: 0, message: "prompt is too long: 210000 tokens > 200000 maximum" },
    );
    const [, refused, retried] = mimo.llm.requests().map((r) => JSON.stringify(r.body).length);
    assert.ok(retried! <= refused!, `the step is asked again, no longer (${retried} > ${refused})`);
    await Promise.all([ext.close(), web.close()]);
  });

  it("names the task from its first exchange, with the model's title cleaned to one line", async () => {
    mimo.llm.reset();
    mimo.llm.script([
      { text: "Run npm install, then npm start.", chunkDelayMs: 0 },
      { title: true, text: '"Installing the docs tool."\nThe person asked how to install it.', chunkDelayMs: 0 },
    ]);
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    const first = "How do I install it? I read the docs twice and still do not know where to start";
    web.send({ type: "user_message", content: first });
    const named = await web.waitFor((e) => e.type === "taskStatus" && e.title === "Installing the docs tool", "the model's title", 20_000);
    const before = web.history().filter((e) => e.type === "taskStatus" && e.seq! < named.seq!);
    assert.ok(before.some((e) => e.type === "taskStatus" && e.title === first.slice(0, 60)), "the first message named it until then");
    assert.ok(web.history().some((e) => e.type === "structuredOutput" && e.seq! < named.seq!), "after the first answer");
    const summary = (await (await api(mimo, `/api/task/${taskId}`)).json()) as { title: string };
    assert.equal(summary.title, "Installing the docs tool");
    const [asked] = mimo.llm.titleRequests();
    const body = asked!.body as { system: Array<{ text: string }> | string; tools?: unknown[]; messages: Array<{ content: Array<{ text: string }> | string }> };
    assert.equal(body.tools, undefined, "no tools offered");
    assert.match(JSON.stringify(body.system), /Name this conversation:/);
    const shown = JSON.stringify(body.messages);
    assert.ok(shown.includes(first) && shown.includes("Run npm install, then npm start."), shown);
    assert.equal(mimo.llm.requests().length, 1, "the chat's own requests are untouched");
    await web.close();
  });
});

describe("results relayed while the model thinks", () => {
  it("acknowledges an action's result at once, without waiting for the model turn it leads to", async () => {
    failing = new Set();
    const { web, ext } = await startRun([
      agentStep({ navigate: { url: "http://docs.test/" } }),
      // The model takes its time over the next step (longer than this test waits).
      { ...agentStep({ done: { success: true, text: "never" } }), stallMs: 60_000 },
    ]);
    const look = await ext.waitFor((m) => m.type === "browser_action" && m.action.name === "browser_observe", "the page's observation", 20_000);
    assert.ok(look.type === "browser_action");
    // The observation's result ends the page's preparation: the next model call follows it.
    await ext.waitFor((m) => m.type === "result_ack" && m.actionId === look.action.actionId, "its result acknowledged", 10_000);
    for (let i = 0; i < 100 && mimo.llm.requests().length < 2; i++) await sleep(50);
    assert.equal(mimo.llm.requests().length, 2, "the model is thinking about the next step");
    assert.ok(!web.received.some((e) => e.type === "structuredOutput"), "and has not answered");
    web.send({ type: "stop" });
    await web.waitFor((e) => e.type === "taskStatus" && e.status === "canceled", "stopped");
    await Promise.all([ext.close(), web.close()]);
  });
});

describe("a run across a restart", () => {
  it("continues from storage when the runtime restarts in the middle of a step, running no action twice", async () => {
    failing = new Set();
    let ext = await ExtensionClient.connect(mimo, "stand-in-restart");
    const { clientId } = ext;
    const received: BrowserAction[] = [];
    const record = (e: ExtensionClient) =>
      e.ws.on("message", (data) => {
        const frame = JSON.parse(String(data)) as { type: string; action?: BrowserAction };
        if (frame.type === "browser_action" && frame.action) received.push(frame.action);
      });
    record(ext);
    // The click of step 2 is running in the browser when the runtime goes down.
    standIn(ext, (a) => a.name === "browser_click");
    mimo.llm.reset();
    mimo.llm.script([
      agentStep({ navigate: { url: "http://docs.test/" } }),
      agentStep({ click: { index: 1 } }, "Opening the install page."),
      agentStep({ done: { success: true, text: "Installed." } }),
    ]);
    const taskId = await newTask(mimo);
    let web = await WebClient.connect(mimo, taskId);
    await web.waitFor((e) => e.type === "taskStatus" && e.selectedClientId === clientId, "bound");
    web.send({ type: "user_message", content: "Install it from http://docs.test/" });
    const click = await ext.waitFor((m) => m.type === "browser_action" && m.action.name === "browser_click", "the click", 20_000);
    assert.ok(click.type === "browser_action");

    await mimo.restart();
    // The browser reconnects, and reports the click that finished meanwhile.
    ext = await ExtensionClient.connect(mimo, "stand-in-restart", undefined, ext.credential);
    record(ext);
    standIn(ext);
    web = await WebClient.connect(mimo, taskId);
    const held = click.action;
    ext.send({ type: "action_result", outcome: { actionId: held.actionId, attempt: held.attempt, taskId, status: "ok", result: { clicked: true }, warnings: [] } });

    const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 30_000);
    assert.ok(outcome.type === "structuredOutput" && outcome.status === "ok", JSON.stringify(outcome));
    const sent = received.map((a) => `${a.actionId}#${a.attempt}`);
    assert.equal(new Set(sent).size, sent.length, `an action was sent twice: ${sent.join(", ")}`);
    assert.equal(received.filter((a) => a.name === "browser_click").length, 1, "the click ran once");
    // Step 2's result reached the model after the restart, and the page was prepared again.
    const pages = web.received.filter((e) => e.type === "pageObserved");
    assert.ok(pages.some((e) => e.type === "pageObserved" && e.step === 2), "the page after step 2 was observed");
    await Promise.all([ext.close(), web.close()]);
  });
});

describe("vision", () => {
  /** Answers a held observation as the extension does: its screenshot a JPEG uploaded through a presigned URL. */
  async function shoot(ext: ExtensionClient, action: BrowserAction, jpeg: Buffer): Promise<void> {
    const presign = { taskId: action.taskId, kind: "screenshot", contentType: "image/jpeg", contentLength: jpeg.length, actionId: action.actionId };
    const granted = await post(mimo, "/api/artifacts/presign", presign, ext.token);
    assert.equal(granted.status, 200, await granted.clone().text());
    const grant = (await granted.json()) as PresignResponse;
    const put = await fetch(grant.uploadUrl, { method: "PUT", headers: { "content-type": "image/jpeg" }, body: new Uint8Array(jpeg) });
    assert.equal(put.status, 201, await put.clone().text());
    const base = { actionId: action.actionId, attempt: action.attempt, taskId: action.taskId };
    const screenshot = { result: { artifactId: grant.artifactId, url: grant.uploadUrl, width: 1280, height: 720 }, partial: false, warnings: [] };
    const result = { screenshot, readability: part(action, "browser_readability_extract"), domIndex: part(action, "browser_dom_index") };
    ext.send({ type: "action_result", outcome: { ...base, status: "ok", result, warnings: [] } });
  }

  it("sends the latest page's screenshot with the page, and pages as text once the model refuses it", async () => {
    failing = new Set();
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(2_000, 7)]);
    const ext = await ExtensionClient.connect(mimo, "stand-in-vision");
    standIn(ext, (action) => action.name === "browser_observe");
    ext.ws.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { type: string; action?: BrowserAction };
      if (frame.type === "browser_action" && frame.action?.name === "browser_observe") void shoot(ext, frame.action, jpeg);
    });
    mimo.llm.reset();
    mimo.llm.script([
      agentStep({ navigate: { url: "http://docs.test/" } }),
      agentStep({ scroll: { direction: "down" } }, "Looking further."),
      // A model that takes no images: the page's screenshot is refused, the call sent again without it.
      { ...agentStep({ done: { success: true, text: "Install with npm." } }), refuseImages: true },
    ]);
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    await web.waitFor((e) => e.type === "taskStatus" && e.selectedClientId === ext.clientId, "bound to the stand-in");
    web.send({ type: "user_message", content: "Read http://docs.test/" });
    const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 20_000);
    assert.ok(outcome.type === "structuredOutput" && outcome.status === "ok", JSON.stringify(outcome));

    const requests = mimo.llm.requests();
    assert.deepEqual(requests.map((r) => r.images.length), [0, 1, 1, 0], "no page, page 1, page 2 (refused), page 2 as text");
    const [, first, second] = requests;
    const messages = (first!.body as { messages: unknown[] }).messages;
    assert.deepEqual(first!.images, [{ message: messages.length - 1, mediaType: "image/jpeg", bytes: jpeg.length }], "with the page, the last message");
    assert.equal(second!.images.length, 1, "only the latest page's");
    const warning = web.received.find((e) => e.type === "warning");
    assert.ok(warning?.type === "warning");
    assert.match(warning.message, /image_url is only supported[\s\S]*text only/);
    await Promise.all([ext.close(), web.close()]);
  });
});

describe("a run's limits", () => {
  // Its own runtime, with a repeat limit of 2 and a token budget that only a huge step breaks.
  ownRuntime(
    {
      bindings: { MIMO_LLM_PROVIDER: "anthropic", MIMO_LLM_API_KEY: "sk-ant-test", MIMO_AGENT_MAX_STEPS: "10", MIMO_AGENT_MAX_REPEATS: "2", MIMO_AGENT_MAX_TOKENS: "100000" },
    },
    (m) => (mimo = m),
  );

  it("ends with LOOP_DETECTED when the model repeats an action on an unchanged page", async () => {
    failing = new Set();
    const click = agentStep({ click: { index: 1 } }, "Trying again.");
    const { web, ext } = await startRun([agentStep({ navigate: { url: "http://docs.test/" } }), click, click, click]);
    const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 20_000);
    assert.ok(outcome.type === "structuredOutput" && outcome.status === "error", JSON.stringify(outcome));
    assert.equal(outcome.error?.code, "LOOP_DETECTED");
    assert.match(outcome.error!.message, /click on the same unchanged page 2 times in a row/);
    // The first click ran; the repeat was not.
    assert.equal(ext.received.filter((m) => m.type === "browser_action" && m.action.name === "browser_click").length, 1);
    await Promise.all([ext.close(), web.close()]);
  });

  it("ends with BUDGET_EXCEEDED when a step takes the run over its token budget", async () => {
    failing = new Set();
    const { web, ext } = await startRun([
      agentStep({ navigate: { url: "http://docs.test/" } }),
      { ...agentStep({ click: { index: 1 } }, "A long think."), usage: { input: 150_000, output: 20 } },
    ]);
    const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 20_000);
    assert.ok(outcome.type === "structuredOutput" && outcome.status === "error", JSON.stringify(outcome));
    assert.equal(outcome.error?.code, "BUDGET_EXCEEDED");
    assert.match(outcome.error!.message, /over its budget of 100000 \(MIMO_AGENT_MAX_TOKENS\)/);
    assert.equal(ext.received.filter((m) => m.type === "browser_action" && m.action.name === "browser_click").length, 0, "the step never ran");
    await Promise.all([ext.close(), web.close()]);
  });
});

describe("the audit log", () => {
  // Its own runtime, whose risk rules make "Install" irreversible: the click waits for the person.
  ownRuntime(
    {
      bindings: { MIMO_LLM_PROVIDER: "anthropic", MIMO_LLM_API_KEY: "sk-ant-test", MIMO_RISK_RULES: JSON.stringify({ irreversibleWords: ["install"] }) },
    },
    (m) => (mimo = m),
  );

  it("has one line per step: action, target, risk, pages before and after, outcome, and who confirmed it when", async () => {
    failing = new Set();
    const { web, ext } = await startRun([
      agentStep({ navigate: { url: "http://docs.test/" } }, "Opening the docs."),
      agentStep({ click: { index: 1 } }, "Installing."),
      agentStep({ done: { success: true, text: "Installed." } }, "Done."),
    ]);
    const asked = await web.waitFor((e) => e.type === "confirmationRequested", "the confirmation", 20_000);
    assert.ok(asked.type === "confirmationRequested");
    assert.match(asked.reason, /looks irreversible \(“install”\)/);
    web.send({ type: "confirm", step: asked.step, approve: true });
    await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 20_000);
    const taskId = asked.taskId;
    const res = await api(mimo, `/api/task/${taskId}/audit.jsonl`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /application\/x-ndjson/);
    assert.equal(res.headers.get("content-disposition"), `attachment; filename="mimo-audit-${taskId}.jsonl"`);
    const lines = (await res.text()).trimEnd().split("\n").map((l) => JSON.parse(l) as Record<string, any>);
    assert.deepEqual(lines.map((l) => [l.step, l.action.type]), [[1, "navigate"], [2, "click"], [3, "done"]]);
    const click = lines[1]!;
    assert.equal(click.taskId, taskId);
    assert.deepEqual(click.action, { type: "click", target: 1, targetName: "Install", params: { index: 1 }, risk: "high" });
    assert.deepEqual(click.before, { url: "http://docs.test/", title: "Docs" }, "the stand-in takes no screenshot");
    assert.equal(click.outcome.ok, true);
    assert.equal(click.confirmation.required, true);
    assert.equal(click.confirmation.approved, true);
    assert.equal(click.confirmation.by, "web");
    assert.ok(click.confirmation.answeredAt >= click.confirmation.askedAt && click.confirmation.askedAt >= click.ts);
    assert.equal(click.clientId, ext.clientId);
    assert.deepEqual(click.browser, { name: "Chromium", version: "156", userAgent: "test" }, "the request's origin: the extension's browser, as its hello said");
    assert.equal(click.reflection.memory, "Installing.");
    assert.equal(lines[0]!.action.risk, "low");
    assert.equal(lines[0]!.confirmation, undefined);
    // Audit history is the task's: an unknown task has none.
    assert.equal((await api(mimo, `/api/task/00000000-0000-4000-8000-000000000000/audit.jsonl`)).status, 404);
    await Promise.all([ext.close(), web.close()]);
  });
});
