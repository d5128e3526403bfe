// The web app in real Chromium against the built worker in Miniflare: token screen, a task's
// chat streaming token by token, a second tab on the same task, reload (replay without
// duplicates), the extensions panel and the live browser view, and reconnection after the
// runtime restarts.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { chromium } from "playwright-core";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { BrowserSnapshot, PairResponse } from "../../protocol/ts/protocol.ts";
import { CHROMIUM, chromiumArgs } from "../support/chromium.ts";
import { ExtensionClient, post } from "../support/clients.ts";
import { ROOT, startMimo } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";

const OUT = path.join(ROOT, "tests/.out");
const TASK_URL = /#\/task\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Builds web/dist when it is missing or older than its sources (the worker serves it). */
function ensureWebBuilt(): void {
  const web = path.join(ROOT, "web");
  const built = path.join(web, "dist/app.js");
  const newest = (dir: string): number =>
    Math.max(0, ...readdirSync(dir, { withFileTypes: true }).map((d) => (d.isDirectory() ? newest(path.join(dir, d.name)) : statSync(path.join(dir, d.name)).mtimeMs)));
  const sources = Math.max(newest(path.join(web, "src")), ...["index.html", "style.css", "build.mjs"].map((f) => statSync(path.join(web, f)).mtimeMs));
  const distFiles = ["app.js", "index.html", "style.css"].map((f) => path.join(web, "dist", f));
  if (existsSync(built) && distFiles.every(existsSync) && Math.min(...distFiles.map((f) => statSync(f).mtimeMs)) >= sources) return;
  execFileSync(process.execPath, [path.join(web, "build.mjs")], { cwd: ROOT, stdio: "inherit" });
}

let mimo: Mimo;
let browser: Browser;
let context: BrowserContext;
let page1: Page;
let page2: Page;
let taskUrl = "";

before(async () => {
  ensureWebBuilt();
  mimo = await startMimo({ bindings: { MIMO_SECRETS_KEY: "webapp-test-secrets-key-0123" } });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: chromiumArgs(),
  });
  context = await browser.newContext({ viewport: { width: 1360, height: 820 } });
});

after(async () => {
  await context?.close();
  await browser?.close();
  await mimo?.dispose();
});

/** Console errors and uncaught exceptions of a page, to fail on broken scripts. */
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
  page.on("console", (msg) => {
    // Failed socket attempts while the runtime restarts are expected noise.
    if (msg.type() === "error" && !/WebSocket|ERR_CONNECTION_REFUSED|Failed to load resource/.test(msg.text())) errors.push(msg.text());
  });
  return errors;
}

const errors = new Map<Page, string[]>();

async function openPage(url: string): Promise<Page> {
  const page = await context.newPage();
  errors.set(page, watchErrors(page));
  await page.goto(url);
  return page;
}

/** A page of its own, signed in, on a new task (of the suite's runtime unless told another). */
async function newTaskPage(runtime: Mimo = mimo): Promise<Page> {
  const page = await openPage(`${runtime.url}/`);
  await page.evaluate((token) => localStorage.setItem("mimo.token", token), runtime.token);
  await page.reload();
  await page.getByTestId("new-task").click();
  await page.waitForURL(TASK_URL);
  await waitLive(page);
  return page;
}

async function waitLive(page: Page): Promise<void> {
  await page.locator('[data-testid="connection-state"][data-state="live"]').waitFor({ timeout: 10_000 });
}

async function sendMessage(page: Page, text: string): Promise<void> {
  const composer = page.getByTestId("composer");
  await composer.fill(text);
  await composer.press("Enter");
}

/** Texts of the messages in order, as `user: …` / `assistant: …`. */
async function transcript(page: Page): Promise<string[]> {
  return page.locator('[data-testid="message-user"], [data-testid="message-assistant"]').evaluateAll((els) =>
    els.map((el) => `${el.getAttribute("data-testid") === "message-user" ? "user" : "assistant"}: ${el.textContent ?? ""}`),
  );
}

/**
 * Waits until the last assistant message streams `full`: first a moment where it holds a proper,
 * non-empty prefix and is not finished, then the whole text, finished. Returns the prefix seen.
 */
async function watchStreaming(page: Page, full: string, nth: number): Promise<string> {
  const partial = await page.waitForFunction(
    ({ full, nth }) => {
      const el = document.querySelectorAll('[data-testid="message-assistant"]')[nth];
      const text = el?.textContent ?? "";
      const streaming = el?.getAttribute("data-finished") !== "true";
      return el && streaming && text.length > 0 && text.length < full.length && full.startsWith(text) ? text : false;
    },
    { full, nth },
    { polling: "raf", timeout: 15_000 },
  );
  const prefix = (await partial.jsonValue()) as string;
  await page.waitForFunction(
    ({ full, nth }) => {
      const el = document.querySelectorAll('[data-testid="message-assistant"]')[nth];
      return el?.getAttribute("data-finished") === "true" && el.textContent === full;
    },
    { full, nth },
    { timeout: 15_000 },
  );
  return prefix;
}

const REPLY_1 = "Sure. I will open the page, read the prices, and report the cheapest flight back to you.";
const REPLY_2 = "Here is a second answer, streamed into every open tab of this task at the same time.";

describe("web app", () => {
  it("asks for the token, rejects a wrong one, then streams a chat reply token by token", async () => {
    page1 = await openPage(`${mimo.url}/`);
    const input = page1.getByTestId("token-input");
    await input.waitFor();

    await input.fill("not-the-token");
    await page1.getByTestId("token-submit").click();
    const tokenError = page1.getByTestId("token-error");
    await tokenError.waitFor();
    assert.match((await tokenError.textContent()) ?? "", /wrong token/, "the server's message is shown");
    assert.equal(await page1.getByTestId("new-task").count(), 0, "still on the token screen");

    await input.fill(mimo.token);
    await page1.getByTestId("token-submit").click();
    await page1.getByTestId("new-task").waitFor();
    assert.equal(await page1.evaluate(() => localStorage.getItem("mimo.token")), mimo.token, "the token is kept");

    await page1.getByTestId("new-task").click();
    await page1.waitForURL(TASK_URL);
    taskUrl = page1.url();
    await waitLive(page1);
    assert.equal(await page1.getByTestId("task-status").getAttribute("data-status"), "created");
    // In words, not the protocol's names.
    assert.equal(await page1.getByTestId("task-status").textContent(), "New");

    // No extension is connected: on a blank task that is a setup step, said in the empty
    // conversation with where to pair one, not an error banner.
    const offline = page1.getByTestId("no-browser");
    await offline.waitFor();
    assert.match(await offline.innerText(), /No browser is connected yet: .*Pair a browser/s);
    assert.equal(await page1.locator('[data-testid="error-banner"][data-code="PLUGIN_OFFLINE"]').count(), 0);

    mimo.llm.script([{ text: REPLY_1, chunkDelayMs: 60 }]);
    await sendMessage(page1, "Find the cheapest flight on this site");
    await page1.getByTestId("message-user").filter({ hasText: "Find the cheapest flight on this site" }).waitFor();
    assert.equal(await page1.getByTestId("composer").inputValue(), "", "the composer is cleared");

    const prefix = await watchStreaming(page1, REPLY_1, 0);
    assert.ok(prefix.length > 0 && prefix.length < REPLY_1.length, `saw a partial reply: ${JSON.stringify(prefix)}`);
    await page1.locator('[data-testid="task-status"][data-status="completed"]').waitFor();
    assert.equal(await page1.getByTestId("stop").isVisible(), false, "no Stop button once completed");
    assert.deepEqual(await transcript(page1), ["user: Find the cheapest flight on this site", `assistant: ${REPLY_1}`]);
    // The title comes from the first message and lands in the session list.
    await page1.locator('[data-testid="task-item"]', { hasText: "Find the cheapest flight" }).waitFor();
  });

  it("a second tab on the same task sees the conversation and the next reply streaming", async () => {
    page2 = await openPage(taskUrl);
    await waitLive(page2);
    assert.equal(await page2.getByTestId("token-input").count(), 0, "the stored token is used");
    assert.deepEqual(await transcript(page2), ["user: Find the cheapest flight on this site", `assistant: ${REPLY_1}`]);
    assert.equal(await page2.getByTestId("task-status").getAttribute("data-status"), "completed");
    assert.equal(await page2.getByTestId("task-status").textContent(), "Done");

    mimo.llm.script([{ text: REPLY_2, chunkDelayMs: 60 }]);
    await sendMessage(page1, "Thanks! And the second cheapest?");
    // Both tabs render the person's message from the server's event, and both stream the reply.
    const [prefix2] = await Promise.all([
      watchStreaming(page2, REPLY_2, 1),
      watchStreaming(page1, REPLY_2, 1),
      page2.getByTestId("message-user").filter({ hasText: "And the second cheapest?" }).waitFor(),
    ]);
    assert.ok(prefix2.length < REPLY_2.length, "page 2 saw the reply while it streamed");
    await page2.locator('[data-testid="task-status"][data-status="completed"]').waitFor();
    const expected = [
      "user: Find the cheapest flight on this site",
      `assistant: ${REPLY_1}`,
      "user: Thanks! And the second cheapest?",
      `assistant: ${REPLY_2}`,
    ];
    assert.deepEqual(await transcript(page1), expected);
    assert.deepEqual(await transcript(page2), expected);
  });

  it("reloading restores the conversation from the replay, without duplicates", async () => {
    const before = await transcript(page1);
    await page1.reload();
    await waitLive(page1);
    assert.equal(page1.url(), taskUrl);
    assert.deepEqual(await transcript(page1), before);
    assert.equal(await page1.locator('[data-testid="message-assistant"][data-finished="true"]').count(), 2);
    assert.equal(await page1.getByTestId("task-status").getAttribute("data-status"), "completed");
    await page2.close();
  });

  it("Stop ends a streaming reply where it is and cancels the task", async () => {
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    mimo.llm.script([{ text: long, chunkDelayMs: 100 }]);
    await sendMessage(page1, "Write something long, slowly");
    const stop = page1.getByTestId("stop");
    await stop.waitFor();
    const assistant = page1.getByTestId("message-assistant").nth(2);
    await page1.waitForFunction(() => (document.querySelectorAll('[data-testid="message-assistant"]')[2]?.textContent ?? "").length > 0);
    await stop.click();
    await page1.locator('[data-testid="task-status"][data-status="canceled"]').waitFor();
    await page1.locator('[data-testid="message-assistant"][data-finished="true"]').nth(2).waitFor();
    const text = (await assistant.textContent()) ?? "";
    assert.ok(text.length > 0 && text.length < long.length && long.startsWith(text), `kept the text so far: ${JSON.stringify(text)}`);
    assert.equal(await stop.isVisible(), false, "no Stop button once canceled");
    // The text does not grow after the stop.
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(await assistant.textContent(), text);
  });

  it("a task link that the server does not know says so instead of spinning silently", async () => {
    const page = await openPage(`${mimo.url}/#/task/${randomUUID()}`);
    await page.locator('[data-testid="error-banner"][data-code="NOT_FOUND"]').waitFor({ timeout: 15_000 });
    assert.notEqual(await page.getByTestId("connection-state").getAttribute("data-state"), "live");
    await page.close();
  });

  it("lists extensions, binds one to the task and shows its browser live", async () => {
    const snapshot: BrowserSnapshot = {
      windows: [
        { windowId: 1, focused: true, kind: "normal" },
        { windowId: 2, focused: false, kind: "normal" },
      ],
      tabs: [
        { tabId: 11, windowId: 1, index: 0, url: "https://flights.example.com/search?from=BER", title: "Flights from Berlin", status: "complete", active: true, groupId: 7 },
        { tabId: 12, windowId: 1, index: 1, url: "https://flights.example.com/deals", title: "Deals of the week", status: "complete", active: false, groupId: 7 },
        { tabId: 13, windowId: 1, index: 2, url: "https://notes.example.org/trip", title: "Trip notes", status: "loading", active: false },
        { tabId: 21, windowId: 2, index: 0, url: "https://mail.example.net/inbox", title: "Inbox (3)", status: "complete", active: true },
      ],
      groups: [{ groupId: 7, windowId: 1, title: "Flights", color: "blue", collapsed: false }],
      activeTabId: 11,
    };
    const ext = await ExtensionClient.connect(mimo, "client-laptop", "Work laptop");
    try {
      ext.sync(snapshot);
      // The list refreshes by itself every few seconds; the refresh button does it at once.
      await page1.getByTestId("extensions-refresh").click();
      const item = page1.locator(`[data-testid="extension-item"][data-client-id="${ext.clientId}"]`);
      await item.waitFor();
      assert.equal(await item.getAttribute("data-online"), "true");
      assert.match((await item.textContent()) ?? "", /Work laptop/);

      await item.getByTestId("extension-select").click();
      await page1.locator(`[data-testid="extension-item"].selected[data-client-id="${ext.clientId}"]`).waitFor();
      // A browser that is not online cannot be chosen.
      const gone = await ExtensionClient.connect(mimo, "client-old", "Old laptop");
      await gone.close();
      await page1.getByTestId("extensions-refresh").click();
      const old = page1.locator(`[data-testid="extension-item"][data-client-id="${gone.clientId}"][data-online="false"]`);
      await old.waitFor();
      assert.equal(await old.getByTestId("extension-select").isDisabled(), true);
      await page1.locator('[data-testid="snapshot-tab"]').nth(3).waitFor();
      assert.equal(await page1.getByTestId("snapshot-tab").count(), 4);
      const active = page1.locator('[data-testid="snapshot-tab"][data-active="true"]');
      assert.equal(await active.count(), 2, "one active tab per window");
      assert.equal(await page1.locator('[data-testid="snapshot-tab"][data-tab-id="11"]').getAttribute("data-group"), "Flights");

      // A change in the browser shows up without a reload.
      ext.sync({ ...snapshot, tabs: [...snapshot.tabs, { tabId: 14, windowId: 1, index: 3, url: "https://hotels.example.com/", title: "Hotels near the airport", status: "complete", active: false }] });
      await page1.locator('[data-testid="snapshot-tab"][data-tab-id="14"]').waitFor();

      // The "no extension" warning from before the extension came is gone once one is bound.
      assert.equal(await page1.locator('[data-testid="error-banner"][data-code="PLUGIN_OFFLINE"]').count(), 0);
      assert.equal(await page1.getByTestId("no-browser").isVisible(), false);

      mkdirSync(OUT, { recursive: true });
      await page1.screenshot({ path: path.join(OUT, "webapp.png") });
    } finally {
      await ext.close();
    }
  });

  it("pairs a browser with a code it shows, and revokes it: the extension is cut off at once", async () => {
    await page1.getByTestId("pair-browser").click();
    const code = (await page1.getByTestId("pairing-code").innerText()).trim();
    assert.match(code, /^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    // The server's address the options ask for is shown beside the code.
    assert.equal(await page1.getByTestId("pairing-server").innerText(), new URL(mimo.url).origin);
    // The person types the code into the extension's options; the extension trades it.
    const paired = await post(mimo, "/api/extension/pair", { code }, null);
    assert.equal(paired.status, 200);
    const credential = (await paired.json()) as PairResponse;
    const { token } = credential;
    const ext = await ExtensionClient.connect(mimo, "client-revoked", "Lost laptop", credential);
    await page1.getByTestId("extensions-refresh").click();
    // Used: the card gives way to the browser it paired.
    await page1.getByTestId("pairing-done").filter({ hasText: "Paired: Lost laptop" }).waitFor();
    assert.equal(await page1.getByTestId("pairing-code").count(), 0);
    const item = page1.locator(`[data-testid="extension-item"][data-client-id="${ext.clientId}"]`);
    await item.locator('[data-testid="extension-revoke"]').click();
    assert.equal(await ext.serverCloseCode(), 4401, "disconnected at once");
    await item.filter({ hasText: "Revoked" }).waitFor();
    assert.equal(await item.getAttribute("data-online"), "false");
    assert.equal((await post(mimo, "/api/ws-ticket", undefined, token)).status, 401, "its credential is dead");
  });

  it("shows a takeover and hands the browser back with Resume", async () => {
    const ext = await ExtensionClient.connect(mimo, "client-takeover", "Takeover laptop");
    try {
      const previous = page1.url();
      await page1.getByTestId("new-task").click();
      await page1.waitForURL((url) => url.toString() !== previous && /#\/task\//.test(url.toString()));
      const taskId = decodeURIComponent(new URL(page1.url()).hash.split("/").pop() ?? "");
      // The only online extension: the new task binds it by itself.
      await page1.getByTestId("extensions-refresh").click();
      await page1.locator(`[data-testid="extension-item"].selected[data-client-id="${ext.clientId}"]`).waitFor();
      // An action makes the task run; the stand-in extension answers it.
      const submitted = fetch(`${mimo.url}/api/task/${taskId}/actions`, {
        method: "POST",
        headers: { authorization: `Bearer ${mimo.token}` },
        body: JSON.stringify({ command: { name: "browser_back", params: {} } }),
      });
      const frame = await ext.waitFor((m) => m.type === "browser_action", "the action");
      assert.ok(frame.type === "browser_action");
      const { actionId, attempt } = frame.action;
      ext.send({ type: "action_ack", actionId, attempt, taskId });
      ext.send({ type: "action_result", outcome: { actionId, attempt, taskId, status: "ok", result: {}, warnings: [] } });
      assert.equal((await submitted).status, 200);
      await page1.locator('[data-testid="task-status"][data-status="ongoing"]').waitFor();

      ext.send({ type: "task_control", taskId, control: "takeover" });
      const resume = page1.getByTestId("resume");
      await resume.waitFor({ state: "visible" });
      await page1.locator('[data-testid="task-status"][data-status="takeover"]').waitFor();
      await resume.click();
      // Nothing is queued, so the task runs again and, idle, waits for what's next.
      await page1.locator('[data-testid="task-status"][data-status="ongoing"]').waitFor();
      assert.equal(await resume.isVisible(), false);
      await ext.waitFor((m) => m.type === "task_state" && m.status === "running", "the extension hears of the resume");
    } finally {
      await ext.close();
    }
  });

  it("reconnects after the runtime restarts and catches up without duplicates", async () => {
    const before = await transcript(page1);
    await mimo.restart();
    // The socket drops, the app backs off and reconnects with lastSeq.
    await page1.locator('[data-testid="connection-state"]:not([data-state="live"])').waitFor({ timeout: 10_000 });
    await waitLive(page1);
    assert.deepEqual(await transcript(page1), before);

    const reply = "Back online, and nothing was lost.";
    mimo.llm.script([{ text: reply, chunkDelayMs: 20 }]);
    await sendMessage(page1, "Are you still there?");
    await page1.locator('[data-testid="message-assistant"][data-finished="true"]', { hasText: reply }).waitFor({ timeout: 15_000 });
    assert.deepEqual(await transcript(page1), [...before, "user: Are you still there?", `assistant: ${reply}`]);
    assert.deepEqual(errors.get(page1), [], "no script errors on the page");
  });

  it("stores a task's secret from the secrets panel, lists it without its value, and deletes it", async () => {
    const value = "panel-Secret-value-77";
    await page1.getByTestId("secret-name").fill("shop_pw");
    await page1.getByTestId("secret-value").fill(value);
    await page1.getByTestId("secret-domains").fill("shop.example, *.shop.example, http://127.0.0.1:8123");
    await page1.getByTestId("secret-save").click();
    const row = page1.getByTestId("secret-row").filter({ hasText: "{{secret:shop_pw}}" });
    await row.waitFor({ timeout: 10_000 });
    assert.match((await row.textContent()) ?? "", /on shop\.example, \*\.shop\.example, http:\/\/127\.0\.0\.1:8123/);
    assert.equal(await page1.getByTestId("secret-value").inputValue(), "", "the value is not kept in the page");
    assert.ok(!(await page1.content()).includes(value));
    const taskId = new URL(page1.url()).hash.split("/").pop()!;
    const listed = await (await fetch(`${mimo.url}/api/task/${taskId}/secrets`, { headers: { authorization: `Bearer ${mimo.token}` } })).text();
    assert.match(listed, /shop_pw/);
    assert.ok(!listed.includes(value));
    // A bad domain is refused with the server's reason.
    await page1.getByTestId("secret-name").fill("other");
    await page1.getByTestId("secret-value").fill("x-value-bad");
    await page1.getByTestId("secret-domains").fill("https://x.test/");
    await page1.getByTestId("secret-save").click();
    await page1.getByTestId("secret-error").filter({ hasText: /not a domain/ }).waitFor({ timeout: 10_000 });
    await row.getByRole("button").click();
    await page1.getByTestId("secret-list").filter({ hasText: "No secrets yet." }).waitFor({ timeout: 10_000 });
    assert.deepEqual(errors.get(page1), [], "no script errors on the page");
  });
});

describe("the skills panel", () => {
  it("stores a pasted SKILL.md and an uploaded one, finds them by a word, says why a file is refused, and deletes them", async () => {
    const page = await openPage(mimo.url);
    const skillsDir = path.join(ROOT, "tests/fixtures/skills");
    await page.locator('[data-testid="token-input"], [data-testid="skills-panel"]').first().waitFor({ timeout: 10_000 });
    if ((await page.getByTestId("token-input").count()) > 0) {
      await page.getByTestId("token-input").fill(mimo.token);
      await page.getByTestId("token-submit").click();
    }
    const row = (name: string) => page.locator(`[data-testid="skill-row"][data-skill="${name}"]`);
    // Pasted, then uploaded as a file.
    await page.getByTestId("skill-text").fill(readFileSync(path.join(skillsDir, "careful-payments/SKILL.md"), "utf8"));
    await page.getByTestId("skill-save").click();
    await row("careful-payments").waitFor({ timeout: 10_000 });
    assert.equal(await page.getByTestId("skill-text").inputValue(), "", "the text is cleared once stored");
    await page.getByTestId("skill-file").setInputFiles(path.join(skillsDir, "file-expense/SKILL.md"));
    await row("file-expense").waitFor({ timeout: 10_000 });
    assert.match((await row("file-expense").textContent()) ?? "", /Sites: https:\/\/expenses\.example\.com\/\*/);

    // A word of its steps finds it, with where it matched.
    await page.getByTestId("skill-search").fill("receipts");
    await page.locator('[data-testid="skill-row"]:not([data-skill="file-expense"])').first().waitFor({ state: "detached", timeout: 10_000 });
    assert.match((await page.getByTestId("skill-snippet").first().textContent()) ?? "", /\[receipt\]/);
    await page.getByTestId("skill-search").fill("");
    await row("careful-payments").waitFor({ timeout: 10_000 });

    // Not a skill: the reason, from the server or (no front matter, so no name) from the panel.
    await page.getByTestId("skill-text").fill("---\nname: bad\ndescription: d\nallowed-tools: [fly]\n---\n1. Fly.");
    await page.getByTestId("skill-save").click();
    await page.getByTestId("skill-error").filter({ hasText: /"fly", which is not an action/ }).waitFor({ timeout: 10_000 });
    await page.getByTestId("skill-text").fill("1. Just steps.");
    await page.getByTestId("skill-save").click();
    await page.getByTestId("skill-error").filter({ hasText: /front matter/ }).waitFor({ timeout: 10_000 });

    await row("careful-payments").getByRole("button", { name: "Delete careful-payments" }).click();
    await row("careful-payments").waitFor({ state: "detached", timeout: 10_000 });
    const listed = (await (await fetch(`${mimo.url}/api/skills`, { headers: { authorization: `Bearer ${mimo.token}` } })).json()) as { skills: Array<{ name: string }> };
    assert.deepEqual(listed.skills.map((s) => s.name), ["file-expense"]);
    assert.deepEqual(errors.get(page), [], "no script errors on the page");
    await page.close();
  });
});

describe("a retried model call", () => {
  it("says why the model is asked again and counts down to it, then settles, also when replayed", async () => {
    const page = await newTaskPage();
    mimo.llm.reset();
    mimo.llm.script([{ error: { status: 429, message: "Rate limit reached", retryAfter: 3 } }, { text: "It is sunny.", chunkDelayMs: 0 }]);
    await sendMessage(page, "What is the weather like?");

    const line = page.getByTestId("model-retry");
    await line.waitFor();
    // Shown as soon as the 429 is in: the retry is 3 s away.
    assert.match((await line.textContent()) ?? "", /^Rate limited — retrying in [1-3] s \(attempt 1 of 3\)$/);
    assert.equal(await line.getAttribute("data-state"), "waiting");
    assert.equal(await page.getByTestId("message-assistant").count(), 0, "no reply yet");
    await page.locator('[data-testid="model-retry"][data-state="settled"]').waitFor({ timeout: 10_000 });
    assert.equal(await line.textContent(), "Rate limited — retried (attempt 1 of 3)");
    await page.locator('[data-testid="message-assistant"][data-finished="true"]', { hasText: "It is sunny." }).waitFor();

    await page.reload();
    await waitLive(page);
    await page.locator('[data-testid="message-assistant"]', { hasText: "It is sunny." }).waitFor();
    assert.deepEqual(await page.getByTestId("model-retry").allTextContents(), ["Rate limited — retried (attempt 1 of 3)"], "replayed once, settled");
    assert.deepEqual(errors.get(page), [], "no script errors on the page");
    await page.close();
  });

  it("says what a running task waits for once nothing has happened for 10 s, and stops saying it when something does", { timeout: 40_000 }, async () => {
    const page = await newTaskPage();
    mimo.llm.reset();
    // The model takes 13 s to answer.
    mimo.llm.script([{ text: "Done thinking.", chunkDelayMs: 0, stallMs: 13_000 }]);
    await sendMessage(page, "Think about it");
    const note = page.getByTestId("stall-note");
    assert.equal(await note.isVisible(), false, "not at once");
    await note.waitFor({ timeout: 13_000 });
    assert.match((await note.textContent()) ?? "", /^Waiting for the model to answer or choose step 1 \(nothing new for 1\d s\)\.$/);
    await page.locator('[data-testid="message-assistant"][data-finished="true"]', { hasText: "Done thinking." }).waitFor();
    await note.waitFor({ state: "hidden" });
    await page.close();
  });
});

describe("regenerating an answer", () => {
  it("keeps the earlier answer as an alternative to switch back to, on the server, and the chat goes on from the chosen one", async () => {
    const page = await newTaskPage();
    mimo.llm.reset();
    mimo.llm.script([{ text: "Blue.", chunkDelayMs: 0 }, { text: "Green.", chunkDelayMs: 0 }, { text: "You chose blue before.", chunkDelayMs: 0 }]);
    await sendMessage(page, "Name a colour");
    await page.locator('[data-testid="task-status"][data-status="completed"]').waitFor();
    const shown = () => page.locator('[data-testid="message-assistant"]:visible').allTextContents();
    assert.deepEqual(await shown(), ["Blue."]);
    assert.equal(await page.getByTestId("answer-version").count(), 0, "one answer: nothing to switch");

    await page.getByTestId("regenerate").click();
    await page.locator('[data-testid="answer-version"]', { hasText: "2/2" }).waitFor();
    assert.deepEqual(await shown(), ["Green."]);
    // The model answered again from the conversation before the first answer.
    const again = mimo.llm.requests().at(-1)!.body as { messages: Array<{ content: string }> };
    assert.equal(again.messages.at(-1)!.content, "Name a colour");
    assert.ok(!again.messages.some((m) => m.content === "Blue."));

    // Back to the first; the choice is the server's, so a reload shows it.
    await page.getByTestId("answer-previous").click();
    await page.locator('[data-testid="answer-version"]', { hasText: "1/2" }).waitFor();
    assert.deepEqual(await shown(), ["Blue."]);
    await page.reload();
    await waitLive(page);
    await page.locator('[data-testid="answer-version"]', { hasText: "1/2" }).waitFor();
    assert.deepEqual(await shown(), ["Blue."]);
    assert.ok(await page.getByTestId("answer-next").isEnabled());

    // The conversation goes on from the chosen answer.
    await sendMessage(page, "Which did you say?");
    await page.locator('[data-testid="message-assistant"]', { hasText: "You chose blue before." }).waitFor();
    const next = mimo.llm.requests().at(-1)!.body as { messages: Array<{ content: string }> };
    const said = next.messages.map((m) => m.content);
    assert.ok(said.includes("Blue.") && !said.includes("Green."), JSON.stringify(said));
    assert.deepEqual(errors.get(page), [], "no script errors on the page");
    await page.close();
  });
});

describe("forking a task", () => {
  it("opens a new task with the conversation up to the message, linked both ways", async () => {
    const page = await newTaskPage();
    const source = page.url();
    mimo.llm.reset();
    mimo.llm.script([{ text: "Lisbon is lovely in May.", chunkDelayMs: 0 }, { text: "A week is enough.", chunkDelayMs: 0 }]);
    await sendMessage(page, "Where should I travel?");
    await page.locator('[data-testid="message-assistant"][data-finished="true"]', { hasText: "Lisbon" }).waitFor();
    await sendMessage(page, "For how long?");
    await page.locator('[data-testid="message-assistant"][data-finished="true"]', { hasText: "A week" }).waitFor();

    const first = page.locator(".msg", { has: page.locator('[data-testid="message-assistant"]', { hasText: "Lisbon" }) });
    await first.hover();
    await first.getByTestId("fork").click();
    await page.waitForURL((url) => TASK_URL.test(url.toString()) && url.toString() !== source);
    await waitLive(page);
    await page.getByTestId("forked-from").waitFor();
    assert.deepEqual(await transcript(page), ["user: Where should I travel?", "assistant: Lisbon is lovely in May."]);

    // Back to the task it came from: the fork is linked at the message.
    await page.getByTestId("forked-from").getByTestId("fork-link").click();
    await page.waitForURL(source);
    await waitLive(page);
    await page.getByTestId("forked").waitFor();
    assert.equal((await transcript(page)).length, 4, "the task forked keeps its whole conversation");
    assert.deepEqual(errors.get(page), [], "no script errors on the page");
    await page.close();
  });
});

describe("a long conversation", () => {
  it("marks where the model's summary stands in for the earlier messages, which stay shown, also after a reload", async () => {
    // A runtime of its own with a small context, so that three long exchanges are compacted.
    const small = await startMimo({ bindings: { MIMO_AGENT_CONTEXT_TOKENS: "2400" } });
    try {
      const page = await newTaskPage(small);
      const long = (what: string): string => `${what}: ${"words of detail ".repeat(56)}`.trim();
      for (const [i, what] of ["the red mug", "the blue lid", "the price"].entries()) {
        await sendMessage(page, long(what));
        await page.locator('[data-testid="message-assistant"][data-finished="true"]').nth(i).waitFor();
      }
      const note = page.getByTestId("compaction");
      await note.waitFor({ timeout: 15_000 });
      assert.match((await note.locator("summary").textContent()) ?? "", /The 4 messages up to here are summarized for the model/);
      // Right after the second answer; every message is still shown.
      const before = await note.evaluate((el) => el.previousElementSibling?.querySelector('[data-testid="message-assistant"]')?.textContent ?? "");
      assert.ok(before.includes("the blue lid"), before);
      assert.equal((await transcript(page)).length, 6);
      // Opened, it says what the model now sees in their place.
      assert.equal(await page.getByTestId("compaction-summary").isVisible(), false);
      await note.locator("summary").click();
      const summary = (await page.getByTestId("compaction-summary").textContent()) ?? "";
      assert.match(summary, /^The person said: the red mug: words of detail.*; the blue lid/);
      await page.reload();
      await waitLive(page);
      await page.getByTestId("compaction").waitFor();
      assert.equal(await page.getByTestId("compaction").count(), 1, "replayed once");
      assert.equal((await transcript(page)).length, 6);
      assert.deepEqual(errors.get(page), [], "no script errors on the page");
      await page.close();
    } finally {
      await small.dispose();
    }
  });
});
