// The agent loop end to end: the real worker in workerd, the real extension in Chromium, the
// fixture shop, and the scripted LLM server playing a model that reads the pages it is shown.
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { EventEnvelope, FrontendEvent } from "../../protocol/ts/protocol.ts";
import type { Page } from "playwright-core";
import { api, newTask, sleep, WebClient } from "../support/clients.ts";
import { startMimo } from "../support/mimo.ts";
import type { ScriptTurn } from "../llm-server/server.ts";
import { agentStep, buyTwoBlueMugs, indexOf, onElement } from "../support/shopper.ts";
import { unzip } from "../support/unzip.ts";
import { extensionStorage, logged, pageAt, pageLog, serviceWorker, signedInApp, startHarness, stopServiceWorker } from "./harness.ts";
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

/**
 * No action ran twice: the server gave each its own id, and the extension's log of what it
 * executed (`actionId#attempt`) has every action at most once — exactly once for those that
 * succeeded. (A retry after a delivery that failed is a second attempt, not a second run.)
 */
async function ranOnce(taskId: string): Promise<ActionRecord[]> {
  const records = await actions(taskId);
  const ids = records.map((r) => r.actionId);
  assert.equal(new Set(ids).size, ids.length, `duplicate action ids: ${ids.join(", ")}`);
  type Log = { "actions.index": Array<{ key: string }> };
  const executed = (await extensionStorage<Log>(h, ["actions.index"]))["actions.index"].map((e) => e.key.slice(0, e.key.lastIndexOf("#")));
  for (const r of records) {
    const runs = executed.filter((id) => id === r.actionId).length;
    assert.ok(runs <= 1, `${r.command.name} (${r.actionId}) ran ${runs} times`);
    if (r.state === "succeeded") assert.equal(runs, 1, `${r.command.name} succeeded without running`);
  }
  return records;
}

describe("personal data on a page", () => {
  it("reaches the model as the page shows it, and is filtered from everything kept: records, events, export, audit and the archive", { timeout: 90_000 }, async () => {
    const page = `${h.a}/redteam/profile.html`;
    const PERSONAL = ["ann.lee@mail.example", "+44 20 7946 0958"];
    h.mimo.llm.script([agentStep({ navigate: { url: page } }), agentStep({ done: { success: true, text: "Your profile is open." } })]);
    const before = h.mimo.llm.requests().length;
    const { taskId, web } = await ask(`Open ${page} and tell me what it shows`);
    assert.equal((await outcome(web)).status, "ok");
    const requests = JSON.stringify(h.mimo.llm.requests().slice(before).map((r) => r.body));
    for (const value of PERSONAL) assert.ok(requests.includes(value), `the model read ${value} as the page shows it`);
    const absent = (where: string, text: string) => {
      for (const value of PERSONAL) assert.ok(!text.includes(value), `${value} is kept in ${where}: ${text.slice(Math.max(0, text.indexOf(value) - 300), text.indexOf(value) + 100)}`);
    };
    const records = await (await api(h.mimo, `/api/task/${taskId}/actions`)).text();
    absent("the action records", records);
    assert.match(records, /\[email redacted\]/, "the records keep the page, filtered");
    absent("the web app's events", JSON.stringify(web.received));
    absent("the export", await (await api(h.mimo, `/api/task/${taskId}/export`)).text());
    absent("the audit log", await (await api(h.mimo, `/api/task/${taskId}/audit.jsonl`)).text());
    const work = await mkdtemp(path.join(tmpdir(), "mimo-kept-"));
    try {
      const zip = path.join(work, "task.zip");
      await writeFile(zip, Buffer.from(await (await api(h.mimo, `/api/task/${taskId}/export.zip`)).arrayBuffer()));
      for (const name of unzip(zip, path.join(work, "files"))) absent(`${name} of the archive`, await readFile(path.join(work, "files", name), "latin1"));
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    web.close();
  });
});

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

    const records = await ranOnce(taskId);
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

describe("a request that breaks into browser jobs", () => {
  type Request = { messages: Array<{ role: string; content: string | null; tool_calls?: unknown[] }>; tools: Array<{ function: { name: string } }> };

  it("is handed to two sub-agents whose answers the chat model combines, each shown nested under the turn", { timeout: 120_000 }, async () => {
    const product = (id: string) => `${h.a}/shop/product.html?id=${id}`;
    const priceSchema = { type: "object", properties: { price: { type: "number" } }, required: ["price"] };
    // Each sub-agent opens its product and reads the price off the page it is shown.
    const subAgent = (id: string): ScriptTurn[] => [
      agentStep({ navigate: { url: product(id) } }, "Nothing done yet."),
      {
        respond: ({ userText }) => {
          const price = Number(/<content>[\s\S]*?(\d+) €/.exec(userText)?.[1]);
          return agentStep({ done: { success: true, text: `It costs ${price} €.`, data: { price } } }, "Read the price.");
        },
      },
    ];
    // The chat model answers from what came back, whatever it was.
    const combine: ScriptTurn = {
      respond: ({ body }) => {
        const results = (body as Request).messages.filter((m) => m.role === "tool").map((m) => JSON.parse(m.content ?? "{}") as { data?: { price: number } });
        const [blue, red] = results.map((r) => r.data?.price);
        return { text: `The blue mug costs ${blue} € and the red mug ${red} €, so the red one is cheaper.` };
      },
    };
    h.mimo.llm.script([
      {
        text: "I'll look up both mugs.",
        toolCalls: [
          { id: "job_blue", name: "browser_task", arguments: { goal: `Open ${product("blue-mug")} and report its price`, answer_schema: priceSchema } },
          { id: "job_red", name: "browser_task", arguments: { goal: `Open ${product("red-mug")} and report its price`, answer_schema: priceSchema, max_steps: 5 } },
        ],
      },
      ...subAgent("blue-mug"),
      ...subAgent("red-mug"),
      combine,
    ]);
    const from = h.mimo.llm.requests().length;
    const { app, taskId } = await openApp(h.mimo.url, h.mimo.token);
    await say(app, "Which is cheaper at the mug shop, the blue mug or the red mug?");
    await completed(taskId);

    // The answer combines both sub-agents' data.
    await app.getByText("The blue mug costs 12 € and the red mug 11 €, so the red one is cheaper.").waitFor();
    // Each sub-task is a card under the turn holding its own steps and what it returned.
    const cards = app.getByTestId("subtask");
    assert.equal(await cards.count(), 2);
    for (const [n, price, steps] of [[0, "12", 2], [1, "11", 2]] as const) {
      const card = cards.nth(n);
      assert.equal(await card.getAttribute("data-state"), "succeeded");
      assert.equal(await card.getByTestId("step").count(), steps);
      assert.match(await card.getByTestId("subtask-result").innerText(), new RegExp(`Done after 2 steps[\\s\\S]*It costs ${price} €`));
    }
    assert.match(await cards.nth(1).innerText(), /up to 5 steps/);
    assert.match(await cards.nth(0).innerText(), /up to 15 steps/);

    // Six model calls: the chat model, two per sub-agent, the chat model again.
    const requests = h.mimo.llm.requests().slice(from).map((r) => r.body as Request);
    assert.equal(requests.length, 6);
    const tools = (r: Request) => r.tools.map((t) => t.function.name);
    assert.deepEqual(tools(requests[0]!), ["AgentOutput", "browser_task"]);
    for (const sub of requests.slice(1, 5)) {
      assert.deepEqual(tools(sub), ["AgentOutput"], "a sub-agent does its job itself");
      // It sees its own goal, not the person's message (their tabs' titles are context it may see).
      const goal = sub.messages.map((m) => /<goal>\n([\s\S]*?)\n<\/goal>/.exec(m.content ?? "")?.[1]).find((g) => g !== undefined);
      assert.match(goal ?? "", /^Open .*product\.html\?id=(blue|red)-mug and report its price$/);
      assert.ok(!sub.messages.some((m) => m.role === "user" && (m.content ?? "").startsWith("Which is cheaper")), "a sub-agent is not shown the chat");
    }
    const last = requests[5]!;
    assert.deepEqual(last.messages.filter((m) => m.role === "tool").map((m) => (JSON.parse(m.content!) as { status: string }).status), ["succeeded", "succeeded"]);
    // Both pages were opened by the task, each action once.
    const records = await ranOnce(taskId);
    const opened = records.map((r) => r.command).filter((c) => c.name === "task_start" || c.name === "browser_navigate");
    assert.ok(opened.length >= 2, JSON.stringify(opened));
    // The replay names whose step each is: the first sub-agent's first, the second's last.
    await app.goto(`${h.mimo.url}/#/task/${taskId}/replay/1`);
    const title = app.getByTestId("replay-title");
    await title.waitFor();
    assert.match((await title.textContent()) ?? "", /^Sub-task 1 · step 1: Go to .*blue-mug/);
    await app.goto(`${h.mimo.url}/#/task/${taskId}/replay/4`);
    await app.locator('[data-testid="replay-title"]', { hasText: "Sub-task 2 · step 2" }).waitFor();
    await app.close();
  });
});

describe("a sub-agent the person stops", () => {
  it("ends as stopped by them, nothing else of the request runs, and the web app shows it so after a reload", { timeout: 90_000 }, async () => {
    const shop = `${h.a}/shop/index.html?substop`;
    h.mimo.llm.script([
      {
        toolCalls: [
          { id: "job_one", name: "browser_task", arguments: { goal: `Open ${shop} and search for a blue mug` } },
          { id: "job_two", name: "browser_task", arguments: { goal: `Open ${shop} and search for a red mug` } },
        ],
      },
      agentStep({ navigate: { url: shop } }, "Nothing done yet."),
      // The sub-agent's second step stalls: the person stops meanwhile.
      { ...agentStep({ scroll: { direction: "down" } }, "Shop open."), stallMs: 4_000 },
    ]);
    const from = h.mimo.llm.requests().length;
    const { app, taskId } = await openApp(h.mimo.url, h.mimo.token);
    await say(app, "Search the shop for a blue mug and for a red mug");
    const card = app.getByTestId("subtask").first();
    await card.locator('[data-testid="step"][data-step="1"][data-state="ok"]').waitFor({ timeout: 30_000 });
    await llmRequests(from, 3);
    await app.getByTestId("stop").click();
    await until("the task is canceled", async () => (await serverStatus(taskId)) === "canceled");
    await app.locator('[data-testid="subtask"][data-state="stopped"][data-manual-stop]').waitFor();
    assert.match(await card.getByTestId("subtask-result").innerText(), /Stopped by you after 1 step/);
    // The stalled reply comes after the stop: no step of it runs, the second job never starts.
    await sleep(5_000);
    assert.equal(h.mimo.llm.requests().length - from, 3, "no model call after the stop");
    assert.equal(await app.getByTestId("subtask").count(), 1);
    const exported = (await (await api(h.mimo, `/api/task/${taskId}/export`)).json()) as { events: FrontendEvent[] };
    const closed = exported.events.filter((e) => e.type === "subtaskFinished");
    assert.deepEqual(closed.map((e) => e.type === "subtaskFinished" && e.result.status), ["stopped"]);
    await app.reload();
    await app.locator('[data-testid="subtask"][data-state="stopped"][data-manual-stop]').waitFor();
    await app.close();
  });
});

/** The web app in a tab of the test's browser, signed in, on a new task. */
async function openApp(url: string, token: string): Promise<{ app: Page; taskId: string }> {
  const app = await signedInApp(h.context, url, token);
  await app.getByTestId("new-task").click();
  await app.waitForURL(/#\/task\//);
  const taskId = /#\/task\/([0-9a-f-]+)/.exec(app.url())![1]!;
  return { app, taskId };
}

async function say(app: Page, text: string): Promise<void> {
  await app.getByTestId("composer").fill(text);
  await app.getByTestId("send").click();
}

async function serverStatus(taskId: string): Promise<string> {
  return ((await (await api(h.mimo, `/api/task/${taskId}`)).json()) as { status: string }).status;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await check()); await sleep(100)) assert.ok(Date.now() < deadline, what);
}

/** Waits until the task has completed; if it ended otherwise, fails with how it ended. */
async function completed(taskId: string, timeoutMs = 60_000): Promise<void> {
  await until("the task ends", async () => ["completed", "error", "canceled"].includes(await serverStatus(taskId)), timeoutMs);
  const status = await serverStatus(taskId);
  if (status === "completed") return;
  const exported = (await (await api(h.mimo, `/api/task/${taskId}/export`)).json()) as { events: FrontendEvent[] };
  const told = exported.events.filter((e) => e.type === "structuredOutput" || (e.type === "toolUsed" && e.phase === "end"));
  assert.fail(`the task ended ${status}: ${JSON.stringify(told)}`);
}

/** Waits until the scripted model has received `count` requests since `from`. */
async function llmRequests(from: number, count: number): Promise<void> {
  await until(`${count} model requests`, async () => h.mimo.llm.requests().length - from >= count);
}

describe("the web app during a run", () => {
  it("shows each step, and Stop ends the run within the step", { timeout: 90_000 }, async () => {
    const shop = `${h.a}/shop/index.html?stop`;
    const [navigate, search] = buyTwoBlueMugs(shop);
    // The second step's model call stalls: the person stops the task meanwhile.
    h.mimo.llm.script([navigate!, { ...search!, stallMs: 4_000 }]);
    const from = h.mimo.llm.requests().length;
    const { app, taskId } = await openApp(h.mimo.url, h.mimo.token);
    await say(app, `Open ${shop} and search for a blue mug`);
    await app.locator('[data-testid="step"][data-step="1"][data-state="ok"]').waitFor({ timeout: 30_000 });
    assert.match(await app.locator('[data-testid="step"][data-step="1"]').innerText(), /Go to .*shop\/index\.html/);
    // The page the agent saw, loaded from R2 through a download URL.
    const shot = app.locator('[data-testid="step"][data-step="1"] [data-testid="step-screenshot"]');
    await shot.waitFor();
    await app.waitForFunction((img) => img !== null && (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth > 100, await shot.elementHandle(), { timeout: 10_000 });
    await llmRequests(from, 2);
    const before = (await actions(taskId)).length;
    await app.getByTestId("stop").click();
    await until("the task is canceled", async () => (await serverStatus(taskId)) === "canceled");
    await app.locator('[data-testid="task-status"][data-status="canceled"]').waitFor();
    // The stalled reply arrives after the stop: nothing more runs.
    await sleep(5_000);
    assert.equal((await actions(taskId)).length, before, "no action after stop");
    assert.equal(h.mimo.llm.requests().length - from, 2, "no model call after stop");
    assert.equal(await app.locator('[data-testid="step"][data-step="2"]').count(), 0);
    await app.close();
  });

  it("pauses while the person takes over the task tab and goes on after Resume", { timeout: 90_000 }, async () => {
    // Origin b: a cart of its own (the shop keeps it in localStorage).
    const shop = `${h.b}/shop/index.html`;
    const script = buyTwoBlueMugs(shop);
    // While the model thinks about step 2, the person clicks in the task's tab.
    script[1] = { ...script[1]!, stallMs: 3_000 };
    h.mimo.llm.script(script);
    const from = h.mimo.llm.requests().length;
    const { app, taskId } = await openApp(h.mimo.url, h.mimo.token);
    await say(app, `Open ${shop}, find the blue mug and add two to the cart`);
    await llmRequests(from, 2);
    const tab = await pageAt(h, shop);
    await tab.waitForFunction(() => document.getElementById("mimo-overlay-host")?.dataset.state === "ongoing", null, { timeout: 10_000 });
    await tab.mouse.click(600, 400);
    await until("the server knows of the takeover", async () => (await serverStatus(taskId)) === "takeover");
    await app.getByTestId("resume").waitFor();
    // The model's next action waits, undelivered, while the person has the browser.
    await sleep(4_000);
    const held = (await actions(taskId)).at(-1)!;
    assert.equal(held.command.name, "browser_type");
    assert.equal(held.state, "pending", JSON.stringify(held));
    assert.equal(await serverStatus(taskId), "takeover");

    await app.getByTestId("resume").click();
    await app.locator('[data-testid="structured-output"][data-status="ok"], [data-testid="step"][data-step="7"][data-state="ok"]').first().waitFor({ timeout: 60_000 });
    await until("the task completes", async () => (await serverStatus(taskId)) === "completed", 60_000);
    await ranOnce(taskId);
    // Each step titled in words: what it did to which element, by the element's name.
    const titles = await app.locator('[data-testid="step"] .step-title').allInnerTexts();
    assert.match(titles[1] ?? "", /^Step 2 Type “blue mug” into “Search products” and submit$/);
    assert.match(titles[2] ?? "", /^Step 3 Click “Blue mug/);
    const cart = await pageAt(h, `${h.b}/shop/cart.html`);
    assert.deepEqual(await cart.locator("#cart tr:not(:first-child) td").allInnerTexts(), ["Blue mug", "2"]);
    // The next test finds its own cart tab by its URL.
    await cart.close();
    await app.close();
  });

  it("follows the run: the newest step and the answer stay in view, unless the person scrolled up", { timeout: 90_000 }, async () => {
    const shop = `${h.a}/shop/index.html?fresh&follow`;
    const script = buyTwoBlueMugs(shop);
    // Step 4's model call stalls: the person scrolls up meanwhile.
    script[3] = { ...script[3]!, stallMs: 3_000 };
    h.mimo.llm.script(script);
    const { app, taskId } = await openApp(h.mimo.url, h.mimo.token);
    await app.setViewportSize({ width: 1280, height: 700 });
    const scroller = app.locator(".chat-scroll");
    const fromBottom = () => scroller.evaluate((s) => s.scrollHeight - s.scrollTop - s.clientHeight);
    /** Whether the element's box is within the conversation's visible part. */
    const inView = (selector: string) =>
      scroller.evaluate((s, sel) => {
        const el = Array.from(s.querySelectorAll(sel)).at(-1);
        if (el === undefined) return false;
        const box = el.getBoundingClientRect();
        const view = s.getBoundingClientRect();
        return box.bottom > view.top && box.top < view.bottom;
      }, selector);
    await say(app, `Open ${shop}, find the blue mug and add two to the cart`);
    await app.locator('[data-testid="step"][data-step="3"] [data-testid="step-screenshot"]').waitFor({ timeout: 30_000 });
    // Following: the newest step is in view, screenshots loading below it included.
    await until("the view at the newest step", async () => (await fromBottom()) < 80 && (await inView('[data-testid="step"]')));
    // The person scrolls up with the wheel.
    const box = (await scroller.boundingBox())!;
    await app.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await app.mouse.wheel(0, -20_000);
    await until("scrolled to the top", async () => (await scroller.evaluate((s) => s.scrollTop)) === 0);
    await app.locator('[data-testid="step"][data-step="5"]').waitFor({ timeout: 30_000 });
    // Scrolled up: the view stays where the person put it, and offers the way down.
    await app.getByTestId("jump-to-latest").waitFor();
    assert.equal(await scroller.evaluate((s) => s.scrollTop), 0);
    await app.getByTestId("jump-to-latest").click();
    // At the bottom, following again: a screenshot that loads just after the jump grows the
    // conversation, and the view follows it at the next frame (its ResizeObserver).
    await until("the view at the newest step after the jump", async () => (await fromBottom()) < 80);
    assert.equal(await app.getByTestId("jump-to-latest").isVisible(), false);
    await completed(taskId);
    await app.locator('[data-testid="message-assistant"][data-finished="true"]').last().waitFor();
    await until("the answer in view", () => inView('[data-testid="message-assistant"]'));
    // The answer once: the last step says it finished, the bubble says the answer, the card the totals.
    const answer = (await app.locator('[data-testid="message-assistant"]').last().innerText()).trim();
    assert.ok(answer.length > 0);
    const page = await app.locator(".messages").innerText();
    assert.equal(page.split(answer).length - 1, 1, `the answer shown once: ${page}`);
    assert.match(await app.getByTestId("run-usage").innerText(), /^Done in 7 steps · /);
    assert.equal(await app.locator('[data-testid="structured-output"] pre').count(), 0, "no raw JSON for a plain answer");
    // Reopened, the finished task shows its answer, after its screenshots loaded.
    await app.reload();
    await app.locator('[data-testid="step"][data-step="7"]').waitFor({ timeout: 15_000 });
    await until("the screenshots loaded", () => app.locator('[data-testid="step-screenshot"]').evaluateAll((shots) => shots.every((s) => (s as HTMLImageElement).complete)));
    await until("the answer in view after reopening", () => inView('[data-testid="message-assistant"]'));
    await app.close();
  });

  it("holds the task on Pause — the reply in flight is kept, its action waits — and goes on after Resume", { timeout: 90_000 }, async () => {
    const shop = `${h.a}/shop/index.html?fresh&pause`;
    const script = buyTwoBlueMugs(shop);
    // The person pauses while the model thinks about step 2.
    script[1] = { ...script[1]!, stallMs: 3_000 };
    h.mimo.llm.script(script);
    const from = h.mimo.llm.requests().length;
    const { app, taskId } = await openApp(h.mimo.url, h.mimo.token);
    await say(app, `Open ${shop}, find the blue mug and add two to the cart`);
    await llmRequests(from, 2);
    await app.getByTestId("pause").click();
    await until("the server holds the task", async () => (await serverStatus(taskId)) === "paused");
    await app.locator('[data-testid="task-status"][data-status="paused"]').waitFor();
    await app.getByTestId("resume").waitFor();
    assert.ok(await app.getByTestId("pause").isHidden());
    // The stalled reply arrives: its step is shown, its action waits undelivered, and no model
    // call follows.
    await app.locator('[data-testid="step"][data-step="2"]').waitFor({ timeout: 10_000 });
    await sleep(2_000);
    const held = (await actions(taskId)).at(-1)!;
    assert.equal(held.command.name, "browser_type");
    assert.equal(held.state, "pending", JSON.stringify(held));
    assert.equal(h.mimo.llm.requests().length - from, 2);
    assert.equal(await serverStatus(taskId), "paused");

    await app.getByTestId("resume").click();
    await completed(taskId);
    assert.equal(h.mimo.llm.requests().length - from, 7, "each step's call once");
    await ranOnce(taskId);
    await app.close();
  });

  it("finishes after the extension's service worker is killed mid-task, running no action twice", { timeout: 90_000 }, async () => {
    const shop = `${h.a}/shop/index.html`;
    const script = buyTwoBlueMugs(shop);
    // Chrome stops the worker while the model thinks about step 3.
    script[2] = { ...script[2]!, stallMs: 4_000 };
    h.mimo.llm.script(script);
    const from = h.mimo.llm.requests().length;
    const { taskId, web } = await ask(`Open ${shop}, find the blue mug and add two to the cart`);
    await llmRequests(from, 3);
    type Connection = { connection: { state: string; since: number } };
    const since = (await extensionStorage<Connection>(h, ["connection"])).connection.since;
    await stopServiceWorker(h);
    await sleep(200);
    // Anything that wakes the worker will do; the options page asks for its state.
    await h.options.reload();
    await until("the worker is back online", async () => {
      const { connection } = await extensionStorage<Connection>(h, ["connection"]);
      return connection.state === "online" && connection.since > since;
    });
    const result = await outcome(web, 60_000);
    assert.equal(result.status, "ok", JSON.stringify(result));
    await ranOnce(taskId);
    web.close();
  });
});

describe("a page that opens a new tab", () => {
  it("goes on in the tab the link opened, shown to the model and the web app with the task's tabs", { timeout: 90_000 }, async () => {
    const shipments = `${h.a}/shipments.html?agent`;
    h.mimo.llm.script([
      agentStep({ navigate: { url: shipments } }, "Opening the shipments."),
      onElement("Delivery note 1057", (index) => ({ click: { index } }), "The last shipment is #1057."),
      {
        respond: ({ userText }) => {
          const address = /delivered to ([^.]*)/.exec(userText)?.[1] ?? "nothing";
          assert.match(userText, /^url: .*note\.html\?order=1057$/m, userText);
          assert.match(userText, /- tab_id \d+: "Shipments"/);
          assert.match(userText, /- tab_id \d+ \(current\): "Delivery note"/);
          return agentStep({ done: { success: true, text: `Order #1057 was delivered to ${address}.` } }, "Read the note.");
        },
      },
    ]);
    const { taskId, web } = await ask(`Open ${shipments} and tell me where my last shipment went`);
    const result = await outcome(web);
    assert.equal(result.status, "ok", JSON.stringify(result));
    assert.match(String((result.output as { text: string }).text), /delivered to Ann Smith, 4 Rue des Lilas, Lyon/);
    const clicked = steps(web, "end")[1]!;
    assert.match(clicked.result!.warnings.join(" "), /opened a new tab/);
    const pages = web.received.filter((e): e is Extract<FrontendEvent, { type: "pageObserved" }> & EventEnvelope => e.type === "pageObserved");
    assert.deepEqual(pages.at(-1)!.tabs.map((t) => t.current), [false, true]);
    const records = await ranOnce(taskId);
    const prep = records.filter((r) => r.command.name === "browser_observe").at(-1)!;
    const click = records.find((r) => r.command.name === "browser_click")!;
    assert.ok(click.tabId !== undefined && prep.tabId !== undefined);
    assert.notEqual(prep.tabId, click.tabId, "the page was read in the new tab");
    web.close();
  });
});

describe("a file the person attached", () => {
  it("is attached in the web app, named to the model, and put into the page's file input", { timeout: 90_000 }, async () => {
    const claim = `${h.a}/claim.html`;
    h.mimo.llm.script([
      agentStep({ navigate: { url: claim } }, "Opening the claim form."),
      {
        respond: ({ userText, body }) => {
          assert.match(JSON.stringify(body), /The user attached these files.*\\"signed-contract.pdf\\" \(application\/pdf, 1 KB\)/);
          return agentStep({ upload_file: { index: indexOf(userText, "Choose the signed contract"), file: "signed-contract.pdf" } }, "Form open.");
        },
      },
      agentStep({ done: { success: true, text: "The signed contract is attached to the claim." } }, "Attached."),
    ]);
    const { app, taskId } = await openApp(h.mimo.url, h.mimo.token);
    const [chooser] = await Promise.all([app.waitForEvent("filechooser"), app.getByTestId("attach").click()]);
    await chooser.setFiles({ name: "signed-contract.pdf", mimeType: "application/pdf", buffer: Buffer.from("%PDF-1.4 signed by Ann") });
    await app.getByTestId("attachment").filter({ hasText: "signed-contract.pdf" }).waitFor({ timeout: 15_000 });
    await say(app, `Send the claim at ${claim} with the signed contract`);
    await until("the task completes", async () => (await serverStatus(taskId)) === "completed", 60_000);
    const form = await pageAt(h, claim);
    await logged(form, "file:signed-contract.pdf:application/pdf:22:%PDF-1.4 signed by Ann");
    assert.equal(await form.locator("#chosen").innerText(), "Chosen: signed-contract.pdf (22 bytes)");
    const upload = (await ranOnce(taskId)).find((r) => r.command.name === "browser_upload_file")!;
    assert.equal(upload.state, "succeeded", JSON.stringify(upload));
    await app.close();
  });
});

describe("continue on this page", () => {
  it("works in the person's own tab, then hands it back open, without the debugger", { timeout: 90_000 }, async () => {
    const mine = await h.context.newPage();
    const url = `${h.a}/buttons.html?mine`;
    await mine.goto(url);
    const tabs = await h.options.evaluate(() => chrome.tabs.query({}).then((all) => all.map((t) => ({ id: t.id!, url: t.url ?? "" }))));
    const tabId = tabs.find((t) => t.url === url)!.id;
    h.mimo.llm.script([
      {
        respond: ({ body }) => {
          assert.match(JSON.stringify(body), new RegExp(`continue on their tab ${tabId}`));
          return agentStep({ wait_for: { url: "buttons.html?mine" } }, "Looking at the user's page.");
        },
      },
      onElement("Add to cart", (index) => ({ click: { index } }), "On the user's page."),
      agentStep({ done: { success: true, text: "Added to the cart on your page." } }, "Done."),
    ]);
    const taskId = await newTask(h.mimo);
    const web = await WebClient.connect(h.mimo, taskId);
    web.send({ type: "start_on_tab", tabId });
    web.send({ type: "user_message", content: "Add this to my cart" });
    const result = await outcome(web);
    assert.equal(result.status, "ok", JSON.stringify(result));
    assert.deepEqual((await pageLog(mine)).filter((l) => l.startsWith("click:buy")), ["click:buy:trusted=true"]);
    const records = await ranOnce(taskId);
    const start = records.find((r) => r.command.name === "task_start")!;
    assert.equal((start.outcome?.result as { tabId: number }).tabId, tabId, "no window of Mimo's own");
    // Handed back: still open, out of the task, no debugger on it.
    await until("the tab is handed back", async () => {
      const { tasks } = await extensionStorage<{ tasks: Record<string, { tabClosed?: boolean; adopted?: number[] }> }>(h, ["tasks"]);
      return tasks[taskId]?.tabClosed === true && tasks[taskId]?.adopted === undefined;
    });
    // Detaching again from the worker fails only if the extension had detached already.
    const detached = await (await serviceWorker(h)).evaluate((id) => chrome.debugger.detach({ tabId: id }).then(() => "it was still attached", (e: unknown) => String(e)), tabId);
    assert.match(detached, /not attached/);
    assert.equal(mine.isClosed(), false);
    web.close();
    await mine.close();
  });
});

describe("instructions written into a page", () => {
  it("stop a fooled model's step for the person's confirmation, and a decline keeps it from running", { timeout: 90_000 }, async () => {
    const forum = `${h.a}/forum.html`;
    h.mimo.llm.script([
      agentStep({ navigate: { url: forum } }, "Opening the thread."),
      // A model that obeys the page's text.
      onElement("Sync contacts", (index) => ({ click: { index } }), "The page says to sync contacts."),
      agentStep({ done: { success: true, text: "The thread recommends the Sonix 200 (39 €) and the Auron Lite (45 €)." } }, "Declined; answering."),
    ]);
    const taskId = await newTask(h.mimo);
    const web = await WebClient.connect(h.mimo, taskId);
    web.send({ type: "user_message", content: `Summarise the headphone recommendations at ${forum}` });
    type Confirmation = Extract<FrontendEvent, { type: "confirmationRequested" }>;
    const asked = (await web.waitFor((e) => e.type === "confirmationRequested", "the confirmation", 60_000)) as Confirmation & EventEnvelope;
    assert.match(asked.reason, /the page's own text asks an AI for this step.*sync contacts.*not the user's instruction/);
    web.send({ type: "confirm", step: asked.step, approve: false });
    const result = await outcome(web);
    assert.equal(result.status, "ok", JSON.stringify(result));
    const declined = steps(web, "end").find((s) => s.step === asked.step)!;
    assert.equal(declined.result?.error?.code, "CONFIRMATION_REQUIRED");
    const page = await pageAt(h, forum);
    assert.deepEqual(await pageLog(page), [], "nothing was sent");
    assert.equal((await ranOnce(taskId)).filter((r) => r.command.name === "browser_click").length, 0);
    web.close();
  });
});

describe("a step rated from the page's facts", () => {
  it("holds a harmless-looking button that sends a form with personal data to another site, showing why and where", { timeout: 90_000 }, async () => {
    const contest = `${h.a}/contest.html?collector=${encodeURIComponent(`${h.b}/collect`)}`;
    h.mimo.llm.script([
      agentStep({ navigate: { url: contest } }, "Opening the contest."),
      onElement("type=email", (index) => ({ type: { index, text: "ann@example.com" } }), "Contest open."),
      onElement("Continue", (index) => ({ click: { index } }), "E-mail typed."),
      agentStep({ done: { success: false, text: "You declined sending your e-mail to the partner site." } }, "Declined."),
    ]);
    const taskId = await newTask(h.mimo);
    const web = await WebClient.connect(h.mimo, taskId);
    web.send({ type: "user_message", content: `Enter the coffee contest at ${contest} with ann@example.com` });
    type Confirmation = Extract<FrontendEvent, { type: "confirmationRequested" }>;
    const asked = (await web.waitFor((e) => e.type === "confirmationRequested", "the confirmation", 60_000)) as Confirmation & EventEnvelope;
    assert.equal(asked.risk, "high");
    const host = new URL(h.b).host;
    assert.match(asked.reason, new RegExp(`sends a form \\(POST\\) to another site, ${host.replace(/\./g, "\\.")}`));
    assert.ok(asked.facts.some((f) => /holding personal data/.test(f)), JSON.stringify(asked.facts));
    assert.ok(asked.screenshotArtifactId, "the page is shown with the question");
    assert.ok(asked.target && asked.target.w > 0 && asked.target.h > 0, `the target is outlined: ${JSON.stringify(asked.target)}`);
    // The first step, typing the address without sending it, did not ask.
    assert.equal(web.received.filter((e) => e.type === "confirmationRequested").length, 1);
    web.send({ type: "confirm", step: asked.step, approve: false });
    const result = await outcome(web);
    assert.equal(result.status, "partial", JSON.stringify(result));
    const page = await pageAt(h, contest);
    assert.equal(new URL(page.url()).host, new URL(h.a).host, "nothing was sent to the other site");
    web.close();
  });
});

describe("a task's own sites", () => {
  it("are set in the web app and kept by the server and, after a redirect, by the extension", { timeout: 90_000 }, async () => {
    const blockedHost = new URL(h.b).host;
    const page2 = `${h.b}/page2.html?task-sites`;
    const redirect = `${h.a}/redirect?to=${encodeURIComponent(page2)}`;
    h.mimo.llm.script([
      agentStep({ navigate: { url: page2 } }, "Going straight there."),
      agentStep({ navigate: { url: redirect } }, "Refused; trying the link that redirects."),
    ]);
    const { app, taskId } = await openApp(h.mimo.url, h.mimo.token);
    await app.getByTestId("sites-blocked").fill(blockedHost);
    await app.getByTestId("sites-save").click();
    // Shown from what the server holds now, not from what was typed.
    await until("the task holds the rule", async () => (await app.getByTestId("sites-current").innerText()).includes(`never ${blockedHost}`));
    await say(app, `Read ${page2}`);
    await until("the task ends", async () => ["completed", "error"].includes(await serverStatus(taskId)), 60_000);
    const exported = (await (await api(h.mimo, `/api/task/${taskId}/export`)).json()) as { events: FrontendEvent[]; actions: ActionRecord[] };
    const first = exported.events.find((e): e is ToolUsed => e.type === "toolUsed" && e.step === 1 && e.phase === "end")!;
    assert.equal(first.result?.error?.code, "PERMISSION_DENIED");
    assert.match(first.result!.error!.message, new RegExp(`of this task's blocked sites`));
    const output = exported.events.find((e): e is Output => e.type === "structuredOutput")!;
    assert.equal(output.error?.code, "PERMISSION_DENIED", JSON.stringify(output));
    assert.match(output.error!.message, /this task's blocked sites/);
    // Nothing was done on the blocked site's page: every action in it was refused.
    const onBlocked = exported.actions.filter((a) => a.state === "succeeded" && ["browser_observe", "browser_screenshot", "browser_readability_extract", "browser_dom_index"].includes(a.command.name));
    assert.deepEqual(onBlocked.map((a) => a.command.name), [], "nothing read from the blocked page");
    await app.close();
  });
});

describe("a risky step", () => {
  it("waits for the person's confirmation in the web app, then runs", { timeout: 90_000 }, async () => {
    // `fresh` empties the cart of origin b (the takeover test filled it).
    const shop = `${h.b}/shop/index.html?fresh`;
    h.mimo.llm.script([
      ...buyTwoBlueMugs(shop).slice(0, -1),
      onElement("Place order", (index) => ({ click: { index } }), "Cart checked, ordering."),
      agentStep({ done: { success: true, text: "Ordered." } }),
    ]);
    const { app, taskId } = await openApp(h.mimo.url, h.mimo.token);
    await say(app, `Open ${shop}, buy two blue mugs and place the order`);
    const card = app.getByTestId("confirmation");
    await card.waitFor({ timeout: 60_000 });
    assert.match(await card.innerText(), /Step 7 needs your confirmation: Click “Place order”/);
    assert.equal(await serverStatus(taskId), "waiting_confirmation");
    const cart = await pageAt(h, `${h.b}/shop/cart.html`);
    assert.equal(await cart.locator("#ordered").innerText(), "", "nothing ordered before the person confirms");
    // The task's tab says Mimo waits for the person, in a note that takes no clicks.
    await cart.waitForFunction(() => document.getElementById("mimo-overlay-host")?.dataset.state === "waiting", null, { timeout: 10_000 });
    const corner = await cart.evaluate(() => {
      const at = document.elementFromPoint(window.innerWidth - 20, window.innerHeight - 20);
      return at?.id === "mimo-overlay-host" ? "the note" : "the page";
    });
    assert.equal(corner, "the page", "clicks reach the page through the note");
    await app.getByTestId("confirm-step").click();
    await until("the task completes", async () => (await serverStatus(taskId)) === "completed", 60_000);
    assert.match(await cart.locator("#ordered").innerText(), /Order placed: 24 €/);
    assert.ok(await app.getByTestId("confirm-step").isDisabled(), "the question is closed");
    await ranOnce(taskId);

    // The run can be exported from the web app.
    const [download] = await Promise.all([app.waitForEvent("download"), app.getByTestId("export").click()]);
    assert.equal(download.suggestedFilename(), `mimo-task-${taskId}.json`);
    const exported = JSON.parse(await readFile((await download.path())!, "utf8")) as { events: Array<{ type: string }>; actions: Array<{ actionId: string }> };
    assert.ok(exported.events.some((e) => e.type === "confirmationRequested"));
    // Every action of the run: each step's own and each observation of the page after it.
    const records = await actions(taskId);
    assert.deepEqual(exported.actions.map((a) => a.actionId), records.map((a) => a.actionId));
    assert.ok(records.some((r) => r.command.name === "browser_click") && records.some((r) => r.command.name === "browser_observe"));
    await app.close();
  });
});

describe("with no extension online", () => {
  it("says PLUGIN_OFFLINE in the web app", { timeout: 60_000 }, async () => {
    const lonely = await startMimo({ turns: [agentStep({ navigate: { url: "http://127.0.0.1:9/" } })] });
    try {
      const { app } = await openApp(lonely.url, lonely.token);
      await say(app, "Open my shop and buy a mug");
      const card = app.locator('[data-testid="structured-output"][data-status="error"]');
      await card.waitFor({ timeout: 30_000 });
      assert.match(await card.getByTestId("output-error").innerText(), /PLUGIN_OFFLINE.*extension/s);
      await app.locator('[data-testid="task-status"][data-status="error"]').waitFor();
      await app.close();
    } finally {
      await lonely.dispose();
    }
  });
});

describe("an answer in the person's format", () => {
  /** The kettle rows of the markdown table in a page's content. */
  const rows = (text: string) =>
    Array.from(text.matchAll(/^\| ((?:\w+) kettle model \d+) \| (\w+) \| ([\d.]+) € \|$/gm), (m) => ({ kettle: m[1]!, shop: m[2]!, price: Number(m[3]) }));
  /** What the fixture's script renders: the kettles under 22 €. */
  const cheap = Array.from({ length: 250 }, (_, k) => k + 1)
    .map((i) => ({ kettle: `${["Aurora", "Brio", "Calor", "Dune", "Ember"][i % 5]} kettle model ${i}`, shop: ["KitchenHub", "HomeDirect", "ApplianceCity"][i % 3]!, price: Number((19 + ((i * 37) % 80) + (i % 100) / 100).toFixed(2)) }))
    .filter((k) => k.price < 22);

  it("reads a long table whole as a table, without the hidden decoys, and answers with data the web app shows as a table", { timeout: 90_000 }, async () => {
    const prices = `${h.a}/prices.html`;
    const seen: Array<{ kettle: string; shop: string; price: number }> = [];
    h.mimo.llm.script([
      agentStep({ navigate: { url: prices } }, "Opening the price list."),
      {
        respond: ({ userText, body }) => {
          assert.match(JSON.stringify(body), /<answer_format>/);
          assert.match(userText, /^\| Kettle \| Shop \| Price \|$/m, "the table is a table");
          for (const decoy of ["Decoy kettle", "0.01 €", "ignore the table", "KETTLE0", "Zero kettle", "prices are wrong"]) {
            assert.ok(!userText.includes(decoy), `hidden text shown as content: ${decoy}`);
          }
          assert.match(userText, /read_page with from=\d+ reads on/);
          seen.push(...rows(userText));
          assert.ok(seen.length > 50 && seen.length < 250, `${seen.length} rows in the first part`);
          return agentStep({ read_page: {} }, "Read the first part of the table.");
        },
      },
      {
        respond: ({ userText }) => {
          seen.push(...rows(userText));
          const found = new Map(seen.map((k) => [k.kettle, k]));
          assert.equal(found.size, 250, "every row was read once the text went on");
          const answer = [...found.values()].filter((k) => k.price < 22);
          return agentStep({ done: { success: true, text: `${answer.length} kettles cost under 22 €.`, data: { kettles: answer } } }, "Read it all.");
        },
      },
    ]);
    const { app, taskId } = await openApp(h.mimo.url, h.mimo.token);
    await app.getByTestId("answer-format-toggle").click();
    const schema = {
      type: "object",
      properties: { kettles: { type: "array", items: { type: "object", properties: { kettle: { type: "string" }, shop: { type: "string" }, price: { type: "number" } }, required: ["kettle", "shop", "price"] } } },
      required: ["kettles"],
    };
    await app.getByTestId("answer-format").fill(JSON.stringify(schema));
    await say(app, `Which kettles cost under 22 € at ${prices}?`);
    await completed(taskId);
    const table = app.getByTestId("answer-table");
    await table.waitFor({ timeout: 15_000 });
    const shown = await table.locator("tbody tr").allInnerTexts();
    assert.equal(shown.length, cheap.length);
    assert.deepEqual(shown.map((r) => r.split("\t")[0]).sort(), cheap.map((k) => k.kettle).sort());
    assert.deepEqual(await table.locator("thead th").allInnerTexts(), ["kettle", "shop", "price"]);
    const [download] = await Promise.all([app.waitForEvent("download"), app.getByTestId("answer-csv").click()]);
    const csv = await readFile((await download.path())!, "utf8");
    assert.equal(csv.split("\r\n")[0], "kettle,shop,price");
    assert.equal(csv.trim().split("\r\n").length, cheap.length + 1);
    await app.close();
  });
});

describe("a confirmation in the extension's side panel", () => {
  it("shows the step, its risk and why, the page and the evidence, and a decline with a reason reaches the model", { timeout: 90_000 }, async () => {
    const contest = `${h.a}/contest.html?side-panel&collector=${encodeURIComponent(`${h.b}/collect`)}`;
    h.mimo.llm.script([
      agentStep({ navigate: { url: contest } }, "Opening the contest."),
      onElement("type=email", (index) => ({ type: { index, text: "ann@example.com" } }), "Contest open."),
      onElement("Continue", (index) => ({ click: { index } }), "E-mail typed."),
      agentStep({ done: { success: false, text: "You did not want your e-mail sent to the partner." } }, "Declined."),
    ]);
    const panel = await h.context.newPage();
    await panel.goto(`chrome-extension://${h.extensionId}/side_panel.html`);
    const requestsBefore = h.mimo.llm.requests().length;
    const taskId = await newTask(h.mimo);
    const web = await WebClient.connect(h.mimo, taskId);
    web.send({ type: "user_message", content: `Enter the coffee contest at ${contest} with ann@example.com` });
    const card = panel.getByTestId("panel-confirmation");
    await card.waitFor({ timeout: 60_000 });
    const text = await card.innerText();
    assert.match(text, /Step 3: Click “Continue”/);
    assert.match(text, /high risk/i);
    assert.match(text, new RegExp(`sends a form \\(POST\\) to another site, ${new URL(h.b).host.replace(/\./g, "\\.")}`));
    assert.ok(text.includes(contest), `the page: ${text}`);
    await panel.getByTestId("panel-target").waitFor({ timeout: 10_000 });
    assert.ok((await panel.getByTestId("panel-screenshot").evaluate((img: HTMLImageElement) => img.naturalWidth)) > 0, "the screenshot loaded");
    await panel.screenshot({ path: "/tmp/mimo-side-panel-confirmation.png" });

    await panel.getByTestId("panel-decline-reason").fill("not with my work address");
    await panel.getByTestId("panel-decline").click();
    const answered = await web.waitFor((e) => e.type === "confirmationAnswered", "the answer", 10_000);
    assert.deepEqual(
      answered.type === "confirmationAnswered" && [answered.step, answered.approved, answered.by, answered.reason],
      [3, false, "extension", "not with my work address"],
    );
    const result = await outcome(web);
    assert.equal(result.status, "partial", JSON.stringify(result));
    // The model heard the person's reason in the step's result.
    const told = JSON.stringify(h.mimo.llm.requests().slice(requestsBefore).at(-1)!.body);
    assert.match(told, /CONFIRMATION_REQUIRED/);
    assert.match(told, /not with my work address/);
    // Answered: nothing waits in the panel any more.
    await panel.getByText("Nothing waits for you.").waitFor({ timeout: 10_000 });
    assert.equal(new URL((await pageAt(h, contest)).url()).host, new URL(h.a).host, "nothing was sent");
    const audit = (await (await api(h.mimo, `/api/task/${taskId}/audit.jsonl`)).text()).trim().split("\n").map((l) => JSON.parse(l) as { confirmation?: { by?: string; declinedBecause?: string } });
    assert.deepEqual(audit.find((r) => r.confirmation)?.confirmation?.by, "extension");
    assert.deepEqual(audit.find((r) => r.confirmation)?.confirmation?.declinedBecause, "not with my work address");
    await panel.close();
    web.close();
  });
});

describe("step-by-step mode", () => {
  it("delivers each step only on Next step; an answer in the web app clears the side panel at once", { timeout: 90_000 }, async () => {
    const page = `${h.a}/buttons.html?step-by-step`;
    h.mimo.llm.script([
      agentStep({ navigate: { url: page } }, "Opening the page."),
      onElement("Add", (index) => ({ click: { index } }), "Page open."),
      agentStep({ done: { success: true, text: "Pressed it." } }, "Done."),
    ]);
    const panel = await h.context.newPage();
    await panel.goto(`chrome-extension://${h.extensionId}/side_panel.html`);
    const { app, taskId } = await openApp(h.mimo.url, h.mimo.token);
    await app.getByTestId("step-by-step").check();
    await say(app, `Press a button on ${page}`);
    type Asked = Extract<FrontendEvent, { type: "confirmationRequested" }>;
    for (const step of [1, 2]) {
      // The step waits, labelled for the mode, in the web app and in the side panel.
      const card = app.locator(`[data-testid="confirmation"][data-step="${step}"]`);
      await card.waitFor({ timeout: 20_000 }).catch(async (e) => {
        console.log(JSON.stringify(((await (await api(h.mimo, `/api/task/${taskId}/export`)).json()) as { events: unknown[] }).events));
        throw e;
      });
      assert.equal(await card.getByTestId("confirm-step").innerText(), "Next step");
      await panel.getByTestId("panel-confirm").filter({ hasText: "Next step" }).waitFor({ timeout: 10_000 });
      const ran = (await (await api(h.mimo, `/api/task/${taskId}/actions`)).json()) as ActionRecord[];
      const clicks = ran.filter((r) => r.command.name === "browser_click").length;
      assert.equal(clicks, 0, `nothing clicked before Next step ${step}`);
      // Alternate where the person answers: the web app first, then the side panel.
      if (step === 1) await card.getByTestId("confirm-step").click();
      else await panel.getByTestId("panel-confirm").click();
      await card.getByTestId("confirm-answer").filter({ hasText: step === 1 ? "in the web app" : "in the extension's side panel" }).waitFor({ timeout: 10_000 });
      await panel.getByText("Nothing waits for you.").waitFor({ timeout: 10_000 });
    }
    await completed(taskId);
    const exported = (await (await api(h.mimo, `/api/task/${taskId}/export`)).json()) as { events: FrontendEvent[] };
    const asked = exported.events.filter((e): e is Asked => e.type === "confirmationRequested");
    assert.deepEqual(asked.map((e) => [e.step, e.stepByStep]), [[1, true], [2, true]]);
    const log = await pageLog(await pageAt(h, page));
    assert.deepEqual(log.filter((l) => l.startsWith("click:")), ["click:buy:trusted=true"], "the click ran once, after Next step");
    await panel.close();
    await app.close();
  });
});
