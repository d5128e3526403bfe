// The real extension (extension/dist) in Debian's Chromium against the built worker in
// Miniflare: configuration on its options page, presence in the extension list, the browser's
// tabs reaching a task live (a new tab, a navigation, a title change, a closed tab), and
// reconnection with a fresh full sync after time offline, after Chrome stops the extension's
// service worker, and after the runtime restarts and drops every socket.
// `chrome` is for the code the test runs on the extension's options page.
/// <reference types="chrome" />
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { chromium } from "playwright-core";
import type { BrowserContext, Page } from "playwright-core";
import type { BrowserSnapshot, EventEnvelope, ExtensionInfo, ExtensionList, TabInfo } from "../../protocol/ts/protocol.ts";
import { api, newTask, sleep, WebClient } from "../support/clients.ts";
import { CHROMIUM, chromiumArgs } from "../support/chromium.ts";
import { extensionCredential, setExtensionCredential } from "./harness.ts";
import { ROOT, startMimo } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";

const EXTENSION = path.join(ROOT, "extension/dist");
const BROWSER_NAME = "Test Chromium";

let mimo: Mimo;
let pages: { server: Server; url: string };
let profile: string;
let context: BrowserContext;
let extensionId: string;
let options: Page;
/** Errors and warnings the extension's own code logged (service worker and options page). */
const extensionLogs: string[] = [];

/** Tiny pages whose title is their path: `/one` is "Page one". */
async function startPages(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? "/").slice(1)) || "index";
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(`<!doctype html><title>Page ${name}</title><h1>${name}</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

before(async () => {
  execFileSync(process.execPath, [path.join(ROOT, "extension/build.mjs")], { cwd: ROOT, stdio: "inherit" });
  mimo = await startMimo();
  pages = await startPages();
  profile = await mkdtemp(path.join(tmpdir(), "mimo-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: chromiumArgs(EXTENSION),
  });
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent("serviceworker"));
  extensionId = new URL(worker.url()).host;
  context.on("console", (message) => {
    const source = message.worker()?.url() ?? message.page()?.url() ?? "";
    const fromExtension = source.startsWith(`chrome-extension://${extensionId}/`);
    if (fromExtension && (message.type() === "error" || message.type() === "warning")) extensionLogs.push(message.text());
  });
});

after(async () => {
  await context?.close();
  await mimo?.dispose();
  await new Promise((resolve) => pages?.server.close(resolve));
  if (profile) await rm(profile, { recursive: true, force: true });
});

async function extensions(): Promise<ExtensionInfo[]> {
  const res = await api(mimo, "/api/extension/extension-list");
  assert.equal(res.status, 200);
  return ((await res.json()) as ExtensionList).extensions;
}

/** Waits until the extension list shows the one extension `online` (or not), and returns it. */
async function presence(online: boolean, timeoutMs = 15_000): Promise<ExtensionInfo> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [only, ...others] = await extensions();
    assert.equal(others.length, 0, "one extension");
    if (only?.online === online) return only;
    if (Date.now() > deadline) assert.fail(`the extension never became ${online ? "online" : "offline"}: ${JSON.stringify(only)}`);
    await sleep(100);
  }
}

/** The connection state the service worker publishes, read on the options page. */
async function connectionState(): Promise<{ state: string; lastError?: string; since: number }> {
  return options.evaluate(async () => (await chrome.storage.local.get("connection")).connection as { state: string; lastError?: string; since: number });
}

/**
 * The connection state once the service worker has published "online". The server lists the
 * extension at its hello, a moment before the worker has the welcome and stores its state.
 */
async function onlineState(): Promise<{ state: string; lastError?: string; since: number }> {
  await options.waitForFunction(async () => (await chrome.storage.local.get<{ connection?: { state: string } }>("connection")).connection?.state === "online", undefined, { timeout: 10_000 });
  return connectionState();
}

async function openPage(name: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${pages.url}/${name}`);
  return page;
}

function tabAt(snapshot: BrowserSnapshot, name: string): TabInfo | undefined {
  return snapshot.tabs.find((t) => t.url === `${pages.url}/${name}`);
}

/** Waits for a `snapshotSync` received after index `from` that satisfies `match`. */
async function snapshotWhere(web: WebClient, from: number, match: (s: BrowserSnapshot) => boolean, what: string, timeoutMs = 15_000): Promise<BrowserSnapshot> {
  const event = await web.waitFor((e: EventEnvelope) => e.type === "snapshotSync" && match(e.snapshot), what, timeoutMs, from);
  assert.ok(event.type === "snapshotSync");
  return event.snapshot;
}

/** Stops the extension's service worker as Chrome does when it idles out. */
async function stopServiceWorker(): Promise<void> {
  const cdp = await context.browser()!.newBrowserCDPSession();
  const { targetInfos } = await cdp.send("Target.getTargets");
  const worker = targetInfos.find((t) => t.type === "service_worker" && t.url === `chrome-extension://${extensionId}/background.js`);
  assert.ok(worker, "the extension's service worker is running");
  assert.equal((await cdp.send("Target.closeTarget", { targetId: worker.targetId })).success, true);
  await cdp.detach();
}

describe("the extension", () => {
  let web: WebClient;
  let taskId: string;
  let clientId: string;

  it("waits for configuration, then connects from its options page", { timeout: 60_000 }, async () => {
    options = await context.newPage();
    const pageErrors: string[] = [];
    options.on("pageerror", (err) => pageErrors.push(err.message));
    await options.goto(`chrome-extension://${extensionId}/options.html`);
    // The page's HTML starts "offline" before its script has rendered anything: wait for the
    // script's own words, not for the default.
    await options.locator('#status[data-state="offline"] #status-detail:not(:empty)').waitFor();
    assert.match(await options.locator("#status-detail").innerText(), /not configured/i);
    assert.equal(await options.locator("#name").getAttribute("placeholder"), "Chromium on Linux");
    assert.deepEqual(await extensions(), [], "nothing connects without a server and token");

    // A wrong pairing code: the server refuses it, the page says why, and nothing connects.
    await options.locator("#server-url").fill(`${mimo.url}/`);
    await options.locator("#pairing-code").fill("ABCD-EFGH");
    await options.locator("#save").click();
    await options.locator("#form-error").filter({ hasText: /wrong, expired or already used/ }).waitFor();
    assert.equal(await options.locator("#server-url").inputValue(), `${mimo.url}/`, "nothing saved");
    assert.deepEqual(await extensions(), []);

    // The code the web app shows pairs this browser: its own credential, never the deployment token.
    const issued = await fetch(`${mimo.url}/api/extension/pairing-code`, { method: "POST", headers: { authorization: `Bearer ${mimo.token}` } });
    const { code } = (await issued.json()) as { code: string };
    await options.locator("#pairing-code").fill(code.toLowerCase());
    await options.locator("#name").fill(BROWSER_NAME);
    await options.locator("#save").click();
    await options.locator('#status[data-state="online"]').waitFor({ timeout: 10_000 });
    assert.equal(await options.locator("#server-url").inputValue(), mimo.url, "the address is stored without the trailing slash");
    assert.match(await options.locator("#paired").innerText(), /Paired with this server/);
    assert.equal(await options.locator("#pairing-code").inputValue(), "", "the code is used up");
    const stored = await extensionCredential(options);
    assert.match(stored?.token ?? "", /^mimo_ext_/);
    assert.notEqual(stored?.token, mimo.token);
    // Kept where content scripts cannot read it: nothing of it in `chrome.storage.local`.
    const local = JSON.stringify(await options.evaluate(() => chrome.storage.local.get(null)));
    assert.ok(!local.includes(stored!.token), "the credential is not in chrome.storage.local");

    clientId = await options.locator("#client-id").innerText();
    assert.match(clientId, /^ext-[0-9a-f]{32}$/, "the id the server gave");
    assert.equal(clientId, stored?.clientId);
    const listed = await presence(true);
    assert.equal(listed.clientId, clientId);
    assert.equal(listed.name, BROWSER_NAME);
    assert.equal(listed.browser.name, "Chromium");
    assert.match(listed.browser.version, /^\d+\.\d+\.\d+\.\d+$/, "the full version from the client hints");
    assert.match(listed.browser.userAgent, /Chrome\/\d+/);
    assert.equal(listed.extensionVersion, "0.1.0");

    // Saving unchanged settings means "connect again now".
    const connectedSince = (await connectionState()).since;
    await options.locator("#save").click();
    await options.waitForFunction(
      async (before) => {
        const { connection } = await chrome.storage.local.get<{ connection?: { state: string; since: number } }>("connection");
        return connection?.state === "online" && connection.since > before;
      },
      connectedSince,
      { polling: 100, timeout: 10_000 },
    );
    assert.deepEqual(pageErrors, []);
  });

  it("shows the browser's tabs to a task", { timeout: 60_000 }, async () => {
    await openPage("one");
    await openPage("two");
    taskId = await newTask(mimo);
    web = await WebClient.connect(mimo, taskId);
    const bound = await web.waitFor((e) => e.type === "taskStatus" && e.selectedClientId !== undefined, "binding");
    assert.ok(bound.type === "taskStatus");
    assert.equal(bound.selectedClientId, clientId);
    const snapshot = await snapshotWhere(web, 0, (s) => tabAt(s, "one")?.title === "Page one" && tabAt(s, "two")?.title === "Page two", "both pages");
    const sync = web.received.find((e) => e.type === "snapshotSync");
    assert.ok(sync?.type === "snapshotSync");
    assert.equal(sync.clientId, clientId);

    const one = tabAt(snapshot, "one")!;
    assert.equal(one.status, "complete");
    assert.ok(snapshot.windows.some((w) => w.windowId === one.windowId && w.kind === "normal"));
    assert.ok(snapshot.tabs.some((t) => t.url === `chrome-extension://${extensionId}/options.html`), "the options page is a tab too");
    // Tabs are listed in window order, and the active tab of the focused window is named.
    for (const w of snapshot.windows) {
      const indexes = snapshot.tabs.filter((t) => t.windowId === w.windowId).map((t) => t.index);
      assert.deepEqual(indexes, indexes.map((_, i) => i), `window ${w.windowId} lists its tabs in order`);
    }
    const active = snapshot.tabs.find((t) => t.tabId === snapshot.activeTabId);
    assert.ok(active?.active, "activeTabId names an active tab");
  });

  it("sends every change: a new tab, a navigation, a title, a closed tab", { timeout: 60_000 }, async () => {
    let from = web.received.length;
    const page = await openPage("three");
    let snapshot = await snapshotWhere(web, from, (s) => tabAt(s, "three")?.title === "Page three" && tabAt(s, "three")?.status === "complete", "the new tab, loaded");
    const tabId = tabAt(snapshot, "three")!.tabId;

    from = web.received.length;
    await page.goto(`${pages.url}/four`);
    snapshot = await snapshotWhere(web, from, (s) => s.tabs.some((t) => t.tabId === tabId && t.title === "Page four"), "the navigation");
    const navigated = snapshot.tabs.find((t) => t.tabId === tabId)!;
    assert.equal(navigated.url, `${pages.url}/four`);
    assert.equal(tabAt(snapshot, "three"), undefined);

    from = web.received.length;
    await page.evaluate(() => {
      document.title = "Renamed by script";
    });
    await snapshotWhere(web, from, (s) => s.tabs.some((t) => t.tabId === tabId && t.title === "Renamed by script"), "the new title");

    from = web.received.length;
    const tabsBefore = snapshot.tabs.length;
    await page.close();
    snapshot = await snapshotWhere(web, from, (s) => !s.tabs.some((t) => t.tabId === tabId), "the closed tab gone");
    assert.equal(snapshot.tabs.length, tabsBefore - 1);
    assert.ok(tabAt(snapshot, "one") && tabAt(snapshot, "two"), "the other tabs stay");
  });

  it("covers what changed while it was offline with a full sync when it is back", { timeout: 60_000 }, async () => {
    // A credential the server refuses keeps the extension offline while the browser changes.
    const credential = (await extensionCredential(options))!;
    await setExtensionCredential(options, { ...credential, token: "mimo_ext_unknown" });
    await presence(false);
    const from = web.received.length;
    const five = await openPage("five");
    await sleep(500);
    assert.equal(web.received.slice(from).filter((e) => e.type === "snapshotSync").length, 0, "nothing reaches the task while offline");

    await setExtensionCredential(options, credential);
    await presence(true);
    const snapshot = await snapshotWhere(web, from, (s) => tabAt(s, "five")?.title === "Page five", "the tab opened while offline");
    assert.ok(tabAt(snapshot, "one"));
    await five.close();
  });

  it("keeps an idle connection alive with a heartbeat", { timeout: 60_000 }, async () => {
    await sleep(500);
    const connectedSince = (await connectionState()).since;
    const seen = (await presence(true)).lastSeenAt;
    // Nothing happens in the browser; the heartbeat (every 20 s) still reaches the server.
    const deadline = Date.now() + 25_000;
    while ((await presence(true)).lastSeenAt === seen) {
      assert.ok(Date.now() < deadline, "no heartbeat within 25 s");
      await sleep(500);
    }
    const state = await connectionState();
    assert.equal(state.state, "online");
    assert.equal(state.since, connectedSince, "the same connection");
  });

  it("reconnects when Chrome stops its service worker and a tab event starts it again", { timeout: 60_000 }, async () => {
    const onlineBefore = (await connectionState()).since;
    await stopServiceWorker();
    await presence(false);

    // Closing a tab wakes the worker. The removal happens before it is connected again, so
    // only the full sync of the new connection can tell the task the tab is gone.
    const from = web.received.length;
    const two = context.pages().find((p) => p.url() === `${pages.url}/two`);
    assert.ok(two);
    await two.close();
    await presence(true);
    const snapshot = await snapshotWhere(web, from, (s) => tabAt(s, "two") === undefined, "the full sync without the closed tab");
    assert.ok(tabAt(snapshot, "one"));
    const state = await onlineState();
    assert.equal(state.state, "online");
    assert.ok(state.since > onlineBefore, "a new connection");
  });

  it("reconnects when its options page opens after the worker was stopped", { timeout: 60_000 }, async () => {
    await stopServiceWorker();
    await presence(false);
    const from = web.received.length;
    await options.reload();
    await options.locator('#status[data-state="online"]').waitFor({ timeout: 15_000 });
    await presence(true);
    await snapshotWhere(web, from, (s) => tabAt(s, "one") !== undefined, "a full sync");
  });

  it("reconnects at the next alarm when nothing else wakes the stopped worker", { timeout: 90_000 }, async () => {
    await stopServiceWorker();
    await presence(false);
    const stoppedAt = Date.now();
    const from = web.received.length;
    // The alarm fires every 30 s.
    await presence(true, 40_000);
    await snapshotWhere(web, from, (s) => tabAt(s, "one") !== undefined, "a full sync");
    assert.ok(Date.now() - stoppedAt < 35_000);
  });

  it("reconnects after the runtime restarts and drops every socket", { timeout: 90_000 }, async () => {
    const restartedAt = Date.now();
    await mimo.restart();
    await web.waitFor(() => false, "the task socket to drop", 5000).catch(() => undefined);
    assert.ok(web.closed, "the restart dropped the task's socket");
    const listed = await presence(true, 45_000);
    assert.equal(listed.clientId, clientId);
    assert.equal(listed.name, BROWSER_NAME);
    const state = await onlineState();
    assert.equal(state.state, "online");
    assert.ok(state.since > restartedAt, "online again after the restart");

    // The task, bound before the restart, gets the browser as it is now.
    web = await WebClient.connect(mimo, taskId);
    const snapshot = await snapshotWhere(web, 0, (s) => tabAt(s, "one") !== undefined, "the snapshot after the restart");
    assert.equal(tabAt(snapshot, "two"), undefined);
    // And changes flow again.
    const from = web.received.length;
    const six = await openPage("six");
    await snapshotWhere(web, from, (s) => tabAt(s, "six")?.title === "Page six", "a change after the restart");
    await six.close();
    await web.close();
  });

  it("logged no errors or warnings on the way", () => {
    // Chrome logs every refused request itself; the tests above provoke those on purpose (a
    // wrong pairing code, an unknown credential). Anything else is the extension's own.
    const provoked = /^Failed to load resource: the server responded with a status of 401 \(Unauthorized\)$/;
    assert.deepEqual(extensionLogs.filter((line) => !provoked.test(line)), []);
  });

  it("is cut off at once when the web app revokes it, and says so until it is paired again", { timeout: 60_000 }, async () => {
    const res = await fetch(`${mimo.url}/api/extension/${clientId}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } });
    assert.equal(res.status, 200);
    await presence(false);
    await options.locator('#status[data-state="offline"]').waitFor({ timeout: 10_000 });
    await options.locator("#status-detail").filter({ hasText: /revoked/ }).waitFor({ timeout: 10_000 });
    // A new code pairs it again.
    const issued = await fetch(`${mimo.url}/api/extension/pairing-code`, { method: "POST", headers: { authorization: `Bearer ${mimo.token}` } });
    await options.locator("#pairing-code").fill(((await issued.json()) as { code: string }).code);
    await options.locator("#save").click();
    await options.locator('#status[data-state="online"]').waitFor({ timeout: 15_000 });
    assert.equal((await presence(true)).clientId, clientId);
  });
});
