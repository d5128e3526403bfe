// The extension under stress, end to end: the person closing the task tab, CDP turned off
// (DOM fallbacks with a warning, CDP_UNAVAILABLE when CDP was required), an action delivered
// twice (run once, answered from the stored outcome — also after Chrome stopped the worker),
// the worker stopped in the middle of an action, the person taking over from the overlay, and
// the side panel.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { BrowserAction, DomIndexResult, ExtensionMessage, ScreenshotResult, ServerToExtension } from "../../protocol/ts/protocol.ts";
import { sleep } from "../support/clients.ts";
import { act, downloadArtifact, extensionCredential, extensionStorage, fails, logged, ok, overlayHtml, pageAt, pageLog, pairFromOptions, pixels, pressOverlay, serviceWorker, startHarness, startTask, stopServiceWorker } from "./harness.ts";
import type { ActionRecord, Harness } from "./harness.ts";

let h: Harness;
before(async () => (h = await startHarness()));
after(async () => {
  await h?.close();
});

async function clickIdOf(taskId: string, text: string): Promise<number> {
  const { result } = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: {} });
  const found = result.elements.find((e) => e.text === text);
  assert.ok(found, `no "${text}" in ${result.text}`);
  return found.clickId;
}

/** Stops the worker, and wakes it again as the options page does, until it is online. */
async function restartWorker(): Promise<void> {
  const before = ((await extensionStorage<{ connection: { since: number } }>(h, ["connection"])).connection).since;
  await stopServiceWorker(h);
  await sleep(200);
  await h.options.reload();
  for (const deadline = Date.now() + 15_000; ; ) {
    const { connection } = await extensionStorage<{ connection: { state: string; since: number } }>(h, ["connection"]);
    if (connection.state === "online" && connection.since > before) return;
    assert.ok(Date.now() < deadline, "the worker came back online");
    await sleep(100);
  }
}

/**
 * Delivers a frame to the extension as if the server had sent it; returns the frames it sent
 * back about that action (the extension may send other frames meanwhile: snapshots, other
 * actions' outcomes).
 */
async function deliver(action: BrowserAction): Promise<ExtensionMessage[]> {
  const frame: ServerToExtension = { type: "browser_action", action };
  const worker = await serviceWorker(h);
  const sent = await worker.evaluate(async (raw) => {
    type Hooks = { deliver(f: string): void; sent: string[]; total: number };
    const hooks = () => (globalThis as unknown as { __mimoTest?: Hooks }).__mimoTest;
    for (let i = 0; hooks() === undefined && i < 50; i++) await new Promise((r) => setTimeout(r, 50));
    const t = hooks()!;
    const from = t.total;
    t.deliver(raw);
    await new Promise((r) => setTimeout(r, 500));
    return t.sent.slice(Math.max(0, t.sent.length - (t.total - from)));
  }, JSON.stringify(frame));
  const about = (m: ExtensionMessage) =>
    (m.type === "action_ack" && m.actionId === action.actionId && m.attempt === action.attempt) ||
    (m.type === "action_result" && m.outcome.actionId === action.actionId && m.outcome.attempt === action.attempt);
  return sent.map((s) => JSON.parse(s) as ExtensionMessage).filter(about);
}

function asAction(record: ActionRecord, taskId: string, clientId: string): BrowserAction {
  return { actionId: record.actionId, attempt: record.attempt, taskId, clientId, tabId: record.tabId, ...record.command } as BrowserAction;
}

describe("the task tab", () => {
  it("closed by the person gives TASK_TAB_CLOSED, until task_start opens a new one", { timeout: 30_000 }, async () => {
    const { taskId, tabId, page } = await startTask(h, `${h.a}/buttons.html?closing`);
    await page.close();
    const closed = await fails(h, taskId, { name: "browser_dom_index", params: {} }, "TASK_TAB_CLOSED");
    assert.match(closed.message, /task_start/);
    await fails(h, taskId, { name: "browser_click", params: { clickId: 1 } }, "TASK_TAB_CLOSED");
    const again = await ok<{ tabId: number }>(h, taskId, { name: "task_start", params: { url: `${h.a}/buttons.html?reopened` } });
    assert.notEqual(again.result.tabId, tabId);
    await ok(h, taskId, { name: "browser_dom_index", params: {} });
  });
});

describe("without CDP", () => {
  it("falls back to DOM events with a warning, and says CDP_UNAVAILABLE when CDP was required", { timeout: 60_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/buttons.html?nocdp`);
    await h.options.evaluate(() => chrome.storage.local.set({ useCdp: false }));
    try {
      const buy = await clickIdOf(taskId, "Add to cart");
      const click = await ok<{ strategy: string }>(h, taskId, { name: "browser_click", params: { clickId: buy } }, { partial: true });
      assert.equal(click.record.outcome!.status, "partial");
      assert.equal(click.result.strategy, "dom_click");
      assert.match(click.warnings.join(), /CDP input failed.*untrusted/);
      await logged(page, "click:buy:trusted=false");

      const required = await act(h, taskId, { name: "browser_click", params: { clickId: buy, strategy: "cdp_mouse" } });
      assert.equal(required.outcome?.error?.code, "CDP_UNAVAILABLE");
      assert.equal(required.outcome?.error?.retryable, true);
      assert.equal(required.attempt, 2, "a retryable error is retried once by the server");
      assert.equal((await pageLog(page)).filter((l) => l.startsWith("click:buy")).length, 1, "the required-CDP click never ran");

      const shot = await ok<{ width: number }>(h, taskId, { name: "browser_screenshot", params: {} }, { partial: true });
      assert.equal(shot.record.outcome!.status, "partial");
      assert.match(shot.warnings.join(), /captured the visible tab/);
      assert.ok(shot.result.width > 0);

      await ok(h, taskId, { name: "browser_navigate", params: { url: `${h.a}/react.html` } });
      const react = await pageAt(h, `${h.a}/react.html`);
      const typed = await ok<{ strategy: string; value: string }>(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='react-name']", text: "dom" } }, { partial: true });
      assert.equal(typed.result.strategy, "dom_input");
      assert.equal(await react.locator("#greeting").innerText(), "Hello, DOM");
      await fails(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='react-name']", text: "x", strategy: "cdp_key" } }, "CDP_UNAVAILABLE");
    } finally {
      await h.options.evaluate(() => chrome.storage.local.set({ useCdp: true }));
    }
  });
});

describe("exactly once", () => {
  let clientId: string;
  before(async () => {
    clientId = (await extensionCredential(h.options))!.clientId;
  });

  it("runs an action delivered twice once, and answers the repeat from its stored outcome, also after a restart", { timeout: 60_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/buttons.html?twice`);
    const buy = await clickIdOf(taskId, "Add to cart");
    const { record } = await ok(h, taskId, { name: "browser_click", params: { clickId: buy } });
    await logged(page, "click:buy:trusted=true");

    const action = asAction(record, taskId, clientId);
    const repeat = await deliver(action);
    assert.deepEqual(repeat.map((m) => m.type), ["action_ack", "action_result"]);
    const resent = repeat[1] as Extract<ExtensionMessage, { type: "action_result" }>;
    assert.deepEqual(resent.outcome, record.outcome, "the stored outcome, not a new run");

    await restartWorker();
    const afterRestart = await deliver(action);
    assert.deepEqual(afterRestart.map((m) => m.type), ["action_ack", "action_result"]);
    assert.deepEqual((afterRestart[1] as Extract<ExtensionMessage, { type: "action_result" }>).outcome, record.outcome);
    assert.deepEqual((await pageLog(page)).filter((l) => l.startsWith("click:buy")), ["click:buy:trusted=true"], "clicked once");

    // A new attempt is a new run.
    await deliver({ ...action, attempt: action.attempt + 1 });
    await logged(page, "click:buy:trusted=true");
    assert.equal((await pageLog(page)).filter((l) => l.startsWith("click:buy")).length, 2);
  });

  it("never runs a click twice when the page holds it behind a confirm() dialog past its time", { timeout: 90_000 }, async (t) => {
    // Without CDP, nothing tells the extension of the dialog (with CDP the click ends at once
    // with it: dialogs.test.ts), so the click's DOM event is held by it past its time.
    await h.options.evaluate(() => chrome.storage.local.set({ useCdp: false }));
    t.after(() => h.options.evaluate(() => chrome.storage.local.set({ useCdp: true })));
    const { taskId, page } = await startTask(h, `${h.a}/dialog.html?held`);
    const dialogs: import("playwright-core").Dialog[] = [];
    // Held open, as a person who has not answered yet (Playwright would dismiss it at once).
    page.on("dialog", (dialog) => void dialogs.push(dialog));
    const remove = await clickIdOf(taskId, "Delete everything");
    const record = await act(h, taskId, { name: "browser_click", params: { clickId: remove } });
    assert.equal(dialogs.length, 1);
    assert.equal(record.state, "timed_out", JSON.stringify(record));
    assert.equal(record.attempt, 1, "asked about, never sent again");
    assert.equal(record.outcome?.error?.code, "PLUGIN_TIMEOUT_EXEC");
    assert.equal(record.outcome?.error?.retryable, false);
    assert.match(record.outcome!.error!.message, /still running in the browser/);

    // Another click while the first is held is refused at once, not queued to run late.
    const again = await act(h, taskId, { name: "browser_click", params: { clickId: remove } });
    assert.equal(again.outcome?.error?.code, "TARGET_NOT_INTERACTABLE", JSON.stringify(again));
    assert.match(again.outcome!.error!.message, /still running on this page/);

    await dialogs[0]!.accept();
    await logged(page, "deleted");
    await sleep(1_000);
    const log = await pageLog(page);
    assert.deepEqual(log.filter((l) => l.startsWith("click:delete")), ["click:delete:trusted=false"], "clicked once");
    assert.equal(dialogs.length, 1, "one confirm");
    const { "actions.index": index } = await extensionStorage<{ "actions.index": Array<{ key: string; status: string }> }>(h, ["actions.index"]);
    assert.deepEqual(index.filter((e) => e.key.startsWith(record.actionId)).map((e) => [e.key, e.status]), [[`${record.actionId}#1`, "partial"]], "run once (by DOM events: partial), in the extension's own log");
  });

  it("finishes a read-only action that was running when Chrome stopped the worker", { timeout: 60_000 }, async () => {
    const { taskId } = await startTask(h, `${h.a}/mutate.html?ready=5000`);
    const pending = act(h, taskId, { name: "browser_wait_for", params: { text: "Data ready", timeoutMs: 20_000 } });
    await sleep(800);
    await restartWorker();
    const record = await pending;
    assert.equal(record.state, "succeeded", JSON.stringify(record));
    assert.equal(record.attempt, 1, "the same attempt, run again after the restart");
    assert.equal((record.outcome!.result as { matched: string }).matched, "text");
  });

  it("reports a page-changing action cut short by a stopped worker as a retryable TIMEOUT, never silently running it again", { timeout: 90_000 }, async () => {
    const { taskId } = await startTask(h, `${h.a}/buttons.html?cut`);
    const pending = act(h, taskId, { name: "browser_navigate", params: { url: `${h.a}/slow?ms=4000` } });
    await sleep(800);
    await restartWorker();
    const record = await pending;
    const { "actions.index": index } = await extensionStorage<{ "actions.index": Array<{ key: string; code?: string; status: string }> }>(h, ["actions.index"]);
    const first = index.find((e) => e.key === `${record.actionId}#1`);
    assert.equal(first?.status, "error");
    assert.equal(first?.code, "TIMEOUT");
    // The server retried it as attempt 2, which ran to the end.
    assert.equal(record.attempt, 2, JSON.stringify(record));
    assert.equal(record.state, "succeeded");
    assert.equal((record.outcome!.result as { title: string }).title, "Slow");
  });
});

describe("the overlay and takeover", () => {
  type Stored = { tasks: Record<string, { overlay: string; takeover?: { reason: string }; stopRequested?: unknown }>; takeovers: Array<{ taskId: string; type: string }> };
  const overlayState = (page: import("playwright-core").Page) => page.evaluate(() => document.getElementById("mimo-overlay-host")?.dataset.state ?? "none");
  const waitState = (page: import("playwright-core").Page, state: string) =>
    page.waitForFunction((s) => (document.getElementById("mimo-overlay-host")?.dataset.state ?? "none") === s, state, { timeout: 10_000 });
  async function serverStatus(taskId: string): Promise<string> {
    const res = await fetch(`${h.mimo.url}/api/task/${taskId}`, { headers: { authorization: `Bearer ${h.mimo.token}` } });
    return ((await res.json()) as { status: string }).status;
  }
  async function until(what: string, check: () => Promise<boolean>): Promise<void> {
    for (const deadline = Date.now() + 10_000; !(await check()); await sleep(100)) assert.ok(Date.now() < deadline, what);
  }

  it("is ongoing while the task runs, hidden while it waits, and Mimo's own input is no takeover", { timeout: 60_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/buttons.html?overlay`);
    // Idle between actions (the server says `ongoing`): nothing on the page.
    await waitState(page, "none");
    const running = act(h, taskId, { name: "browser_wait_for", params: { text: "Take your time", timeoutMs: 1500 } });
    await waitState(page, "ongoing");
    const drawn = (await overlayHtml(page)) ?? "";
    assert.equal(drawn.match(/class="frame"/g)?.length, 1, drawn);
    assert.match(drawn, /<div class="label"[^>]*><span>Mimo: waiting for Take your time<\/span>/);
    assert.equal((await running).outcome?.error?.code, "TIMEOUT");
    await waitState(page, "none");

    // Clicks, keys and typing through CDP while the overlay is up: never a takeover.
    const buy = await clickIdOf(taskId, "Add to cart");
    await ok(h, taskId, { name: "browser_click", params: { clickId: buy } });
    await ok(h, taskId, { name: "browser_press_key", params: { key: "Escape" } });
    await ok(h, taskId, { name: "browser_hover", params: { clickId: buy } });
    await logged(page, "key:Escape:trusted=true");
    const stored = await extensionStorage<Stored>(h, ["tasks", "takeovers"]);
    assert.equal(stored.tasks[taskId]?.takeover, undefined);
    assert.ok(!(stored.takeovers ?? []).some((t) => t.taskId === taskId));
    assert.equal(await serverStatus(taskId), "ongoing");
  });

  it("switches to takeover on the person's own input, pauses the task, and resumes or stops it", { timeout: 60_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/buttons.html?takeover`);
    const running = act(h, taskId, { name: "browser_wait_for", params: { text: "never there", timeoutMs: 2000 } });
    await waitState(page, "ongoing");

    // The person clicks in the page.
    await page.mouse.click(700, 500);
    await waitState(page, "takeover");
    await running;
    await until("the server knows of the takeover", async () => (await serverStatus(taskId)) === "takeover");
    let stored = await extensionStorage<Stored>(h, ["tasks", "takeovers"]);
    assert.match(stored.tasks[taskId]!.takeover!.reason, /mousedown by the person/);
    assert.deepEqual(stored.takeovers.filter((t) => t.taskId === taskId).map((t) => t.type), ["takeover"]);

    // The server holds new actions while the person has control; Resume in the overlay lets them run.
    const held = act(h, taskId, { name: "browser_click", params: { xpath: "//*[@id='buy']" } });
    await sleep(500);
    assert.equal(await overlayState(page), "takeover");
    await pressOverlay(page, "resume");
    const done = await held;
    assert.equal(done.outcome?.status, "ok", JSON.stringify(done));
    await logged(page, "click:buy:trusted=true");

    // A key press is a takeover too, also after a navigation; Stop ends the task.
    await ok(h, taskId, { name: "browser_navigate", params: { url: `${h.a}/page2.html?takeover` } });
    const next = await pageAt(h, `${h.a}/page2.html?takeover`);
    const again = act(h, taskId, { name: "browser_wait_for", params: { text: "never there", timeoutMs: 2000 } });
    await waitState(next, "ongoing");
    await next.keyboard.press("x");
    await waitState(next, "takeover");
    await again;
    await pressOverlay(next, "stop");
    await waitState(next, "none");
    await until("the server canceled the task", async () => (await serverStatus(taskId)) === "canceled");
    stored = await extensionStorage<Stored>(h, ["tasks", "takeovers"]);
    assert.deepEqual(stored.takeovers.filter((t) => t.taskId === taskId).map((t) => t.type), ["takeover", "resume", "takeover", "stop"]);
    assert.ok(stored.tasks[taskId]!.stopRequested);
  });
});

describe("the overlay of the developer API's actions", () => {
  type Stored = { tasks: Record<string, { overlay: string; takeover?: { reason: string } }>; takeovers?: Array<{ taskId: string; type: string }> };
  const overlayState = (page: import("playwright-core").Page) => page.evaluate(() => document.getElementById("mimo-overlay-host")?.dataset.state ?? "none");
  async function serverStatus(taskId: string): Promise<string> {
    const res = await fetch(`${h.mimo.url}/api/task/${taskId}`, { headers: { authorization: `Bearer ${h.mimo.token}` } });
    return ((await res.json()) as { status: string }).status;
  }
  const takeovers = async (taskId: string) => ((await extensionStorage<Stored>(h, ["takeovers"])).takeovers ?? []).filter((t) => t.taskId === taskId);

  // The task stays `ongoing` while such an action runs (no status flips each way): the extension
  // alone knows an action is under way, in every frame of the tab, and only while it is.
  it("takes over on the person's input in any frame while one runs, and never once it ended", { timeout: 60_000 }, async () => {
    const url = `${h.a}/frames.html?other=${new URL(h.b).port}&api-overlay`;
    const { taskId, page } = await startTask(h, url);
    await page.frameLocator("#cross").locator("#frame-btn").waitFor();
    await ok(h, taskId, { name: "browser_click", params: { xpath: "//*[@id='top-btn']" } });
    await logged(page, "click:top-btn:trusted=true");
    assert.equal(await serverStatus(taskId), "ongoing", "no status change for an action of the developer API");

    // Just after it (its label may still be drawn): the page is the person's, in every frame.
    await page.frameLocator("#same").locator("#frame-btn").click();
    await page.mouse.click(700, 20);
    await page.keyboard.press("x");
    await logged(page, "click:same:trusted=true");
    await page.waitForFunction(() => document.getElementById("mimo-overlay-host") === null, undefined, { timeout: 10_000 });
    assert.deepEqual(await takeovers(taskId), [], "input after the action is no takeover");
    assert.equal(await serverStatus(taskId), "ongoing");

    // While one runs, input in a cross-origin frame takes over.
    const running = act(h, taskId, { name: "browser_wait_for", params: { text: "never there", timeoutMs: 2000 } });
    await page.waitForFunction(() => document.getElementById("mimo-overlay-host")?.dataset.state === "ongoing", undefined, { timeout: 10_000 });
    await page.frameLocator("#cross").locator("#frame-input").click();
    await running;
    for (const deadline = Date.now() + 10_000; (await serverStatus(taskId)) !== "takeover"; await sleep(100)) {
      assert.ok(Date.now() < deadline, "the server knows of the takeover");
    }
    assert.deepEqual((await takeovers(taskId)).map((t) => t.type), ["takeover"]);
    assert.equal(await overlayState(page), "takeover", "the overlay hands the tab to the person");
    await pressOverlay(page, "stop");
  });

  it("is drawn while a screenshot is taken, and is not in it", { timeout: 60_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/buttons.html?shot-overlay`);
    // A look at the page first: its label lingers, drawn, when the screenshot is taken.
    await ok(h, taskId, { name: "browser_dom_index", params: {} });
    await page.waitForFunction(() => document.getElementById("mimo-overlay-host")?.dataset.state === "ongoing", undefined, { timeout: 10_000 });
    const { result } = await ok<ScreenshotResult>(h, taskId, { name: "browser_screenshot", params: {} });
    const jpeg = Buffer.from(await (await downloadArtifact(h, result.artifactId)).arrayBuffer());
    // The overlay's frame is a purple border 3 CSS pixels wide along every edge of the viewport;
    // the page is white there.
    const [width, height] = await page.evaluate(() => [innerWidth, innerHeight]);
    const edges = await pixels(h, jpeg, width!, [
      { x: 1, y: height! / 2 },
      { x: width! - 2, y: height! / 2 },
      { x: width! / 2, y: 1 },
      { x: width! / 2, y: height! - 2 },
    ]);
    for (const [r, g, b] of edges) assert.ok(r! > 200 && g! > 200 && b! > 200, `the page's white at the edges, not the overlay: ${JSON.stringify(edges)}`);
  });
});

describe("the side panel", () => {
  it("shows the connection, the task and the last actions", { timeout: 30_000 }, async () => {
    const { taskId } = await startTask(h, `${h.a}/buttons.html?panel`);
    await ok(h, taskId, { name: "browser_dom_index", params: {} });
    const panel = await h.context.newPage();
    await panel.goto(`chrome-extension://${h.extensionId}/side_panel.html`);
    await panel.locator('#connection[data-state="online"]').waitFor();
    await panel.locator("#tasks li", { hasText: taskId.slice(0, 8) }).waitFor();
    // Its status in words, and a way to open its conversation in the panel.
    const row = panel.locator("#tasks li", { hasText: taskId.slice(0, 8) });
    assert.match(await row.innerText(), new RegExp(`${taskId.slice(0, 8)} — Ready · reading the page`));
    assert.equal(await row.getByTestId("panel-show-task").getAttribute("data-task-id"), taskId);
    assert.match(await panel.locator("#actions li").first().innerText(), /browser_dom_index — ok/);
    await ok(h, taskId, { name: "browser_scroll", params: { direction: "down" } });
    await panel.locator("#actions li", { hasText: "browser_scroll — ok" }).waitFor();
    await panel.close();
  });

  it("logged no errors or warnings on the way", () => {
    assert.deepEqual(h.logs, []);
  });
});

describe("a new pairing", () => {
  it("is what the next upload uses: the server and credential are read again when they change", { timeout: 60_000 }, async () => {
    const { taskId } = await startTask(h, `${h.a}/buttons.html`);
    // Read once and kept: the service worker does not read its vault for every action.
    await ok(h, taskId, { name: "browser_screenshot", params: {} });
    const before = (await extensionCredential(h.options))!;
    const auth = { authorization: `Bearer ${h.mimo.token}` };
    assert.equal((await fetch(`${h.mimo.url}/api/extension/${before.clientId}`, { method: "DELETE", headers: auth })).status, 200);
    await h.options.locator('#status[data-state="offline"]').waitFor({ timeout: 10_000 });
    await pairFromOptions(h.mimo, h.options);
    await h.options.locator('#status[data-state="online"]').waitFor({ timeout: 15_000 });
    const paired = (await extensionCredential(h.options))!;
    assert.notEqual(paired.token, before.token, "the revoked credential was replaced");
    // Uploaded with the new credential: the revoked one would be refused.
    const again = await startTask(h, `${h.a}/buttons.html?again`);
    const { result } = await ok<ScreenshotResult>(h, again.taskId, { name: "browser_screenshot", params: {} });
    assert.equal((await downloadArtifact(h, result.artifactId)).status, 200);
  });
});
