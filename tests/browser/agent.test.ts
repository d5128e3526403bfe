// The agent loop end to end: the real worker in workerd, the real extension in Chromium, the
// fixture shop, and the scripted LLM server playing a model that reads the pages it is shown.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { EventEnvelope, FrontendEvent } from "../../protocol/ts/protocol.ts";
import { api, newTask, WebClient } from "../support/clients.ts";
import { agentStep, buyTwoBlueMugs, onElement } from "../support/shopper.ts";
import { pageAt, startHarness } from "./harness.ts";
import type { ActionRecord, Harness } from "./harness.ts";

let h: Harness;
before(async () => (h = await startHarness()));
after(async () => {
  await h?.close();
});

type Output = Extract<FrontendEvent, { type: "structuredOutput" }>;
type ToolUsed = Extract<FrontendEvent, { type: "toolUsed" }>;

/** Starts a task with `goal` and returns its web socket. */
async function ask(goal: string): Promise<{ taskId: string; web: WebClient }> {
  const taskId = await newTask(h.mimo);
  const web = await WebClient.connect(h.mimo, taskId);
  web.send({ type: "user_message", content: goal });
  return { taskId, web };
}

async function outcome(web: WebClient, timeoutMs = 60_000): Promise<Output & EventEnvelope> {
  return (await web.waitFor((e) => e.type === "structuredOutput", "the task's outcome", timeoutMs)) as Output & EventEnvelope;
}

function steps(web: WebClient, phase: "start" | "end"): ToolUsed[] {
  return web.received.filter((e): e is ToolUsed & EventEnvelope => e.type === "toolUsed" && e.phase === phase);
}

async function actions(taskId: string): Promise<ActionRecord[]> {
  return (await (await api(h.mimo, `/api/task/${taskId}/actions`)).json()) as ActionRecord[];
}

/** Every action ran once: one attempt each, no action id twice. */
function ranOnce(records: ActionRecord[]): void {
  const ids = records.map((r) => r.actionId);
  assert.equal(new Set(ids).size, ids.length, `duplicate action ids: ${ids.join(", ")}`);
  for (const r of records) assert.equal(r.attempt, 1, `${r.command.name} ran ${r.attempt} times: ${JSON.stringify(r.outcome)}`);
}

describe("a browser task", () => {
  it("runs step by step to the answer, recovering from a target that is gone and a 429", async () => {
    const shop = `${h.a}/shop/index.html`;
    const [navigate, search, openMug, quantity, ...rest] = buyTwoBlueMugs(shop);
    h.mimo.llm.script([
      navigate!,
      search!,
      openMug!,
      // A stale index (the element is gone): the model hears TARGET_NOT_FOUND and goes on.
      agentStep({ click: { index: 9999 } }, "On the product page."),
      // The provider is busy once; the call is retried after Retry-After.
      { error: { status: 429, message: "Rate limit reached", retryAfter: 0 } },
      quantity!,
      ...rest,
    ]);
    const requestsBefore = h.mimo.llm.requests().length;
    const { taskId, web } = await ask(`Open ${shop}, find the blue mug and add two to the cart`);
    const result = await outcome(web);
    assert.equal(result.status, "ok", JSON.stringify(result));
    assert.match(String((result.output as { text: string }).text), /two blue mugs/);

    // The task's tab shows the cart.
    const cart = await pageAt(h, `${h.a}/shop/cart.html`);
    assert.deepEqual(await cart.locator("#cart tr:not(:first-child) td").allInnerTexts(), ["Blue mug", "2"]);

    // Every step was shown with its reflection, then its result.
    const started = steps(web, "start");
    const ended = steps(web, "end");
    assert.deepEqual(started.map((s) => Object.keys(s.action)[0]), ["navigate", "type", "click", "click", "type", "click", "click", "done"]);
    assert.equal(ended.length, started.length);
    assert.ok(started.every((s) => s.reflection !== undefined && s.usage !== undefined));
    const stale = ended[3]!;
    assert.equal(stale.result?.ok, false);
    assert.equal(stale.result?.error?.code, "TARGET_NOT_FOUND");
    assert.ok(ended.filter((s) => s !== stale).every((s) => s.result?.ok), JSON.stringify(ended));
    assert.ok(web.received.filter((e) => e.type === "pageObserved").length >= 7);

    // The model saw the failure as a tool result in the seed's shape, and the 429 was retried.
    const requests = h.mimo.llm.requests().slice(requestsBefore);
    assert.equal(requests.length, 9, "eight steps and one retry");
    const messages = (requests[4]!.body as { messages: Array<{ role: string; content: string }> }).messages;
    const toolResult = JSON.parse(messages.filter((m) => m.role === "tool").at(-1)!.content) as { ok: boolean; error: { code: string }; name: string };
    assert.deepEqual([toolResult.ok, toolResult.error.code, toolResult.name], [false, "TARGET_NOT_FOUND", "click"]);
    assert.deepEqual(requests[5]!.body, requests[4]!.body, "the retry sends the same request");

    const records = await actions(taskId);
    ranOnce(records);
    assert.ok(records.every((r) => r.state === "succeeded" || r.outcome?.error?.code === "TARGET_NOT_FOUND"), JSON.stringify(records.map((r) => [r.command.name, r.state])));
    const summary = (await (await api(h.mimo, `/api/task/${taskId}`)).json()) as { status: string };
    assert.equal(summary.status, "completed");
    web.close();
  });

  it("answers a question that needs no browser as chat", async () => {
    h.mimo.llm.script([{ text: "Four." }]);
    const { taskId, web } = await ask("What is two plus two?");
    const result = await outcome(web);
    assert.equal(result.status, "ok");
    assert.equal(steps(web, "start").length, 0);
    assert.deepEqual(await actions(taskId), []);
    web.close();
  });
});
