// The browser action tests' setup: the built worker in Miniflare, the fixture pages of
// tests/fixtures on two origins (for cross-origin iframes), Debian's Chromium with the real
// extension configured for the worker, and helpers to run actions through the server's
// developer API (`POST /api/task/{taskId}/actions`) and to read the fixture pages' logs.
// The extension is built first, unless MIMO_TEST_PREBUILT=1 says extension/dist is ready.
// Its test hooks (`globalThis.__mimoTest` in the service worker) are turned on.
//
// Mimo acts only on sites the person allowed. By default the harness allows all sites the way
// a person does: in the extension's options, "Allow Mimo on all sites", confirmed in Chrome's
// dialog. That dialog needs a headed browser (see ../support/chrome-dialog.ts), so the grant is
// made in a headed Chromium on Xvfb and the tests then run headless on the same profile, where
// the grant stays, as it does across a person's browser restarts. `{ headed: true }` runs the
// whole browser on Xvfb instead, for tests that answer Chrome's dialog themselves.
/// <reference types="chrome" />
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import type { BrowserContext, CDPSession, Page, Worker } from "playwright-core";
import type { ActionCommand, ActionOutcome, DownloadResponse, PairResponse } from "../../protocol/ts/protocol.ts";
import { api, newTask, sleep } from "../support/clients.ts";
import { allowInChromeDialog, startXvfb } from "../support/chrome-dialog.ts";
import type { Display } from "../support/chrome-dialog.ts";
import { CHROMIUM, chromiumArgs } from "../support/chromium.ts";
import { ROOT, startMimo } from "../support/mimo.ts";
import type { Endpoint, Mimo, MimoOptions } from "../support/mimo.ts";

export const EXTENSION = path.join(ROOT, "extension/dist");
const FIXTURES = path.join(ROOT, "tests/fixtures");

export type ActionRecord = {
  actionId: string;
  attempt: number;
  state: string;
  tabId?: number;
  command: ActionCommand;
  outcome?: ActionOutcome;
};

export type Harness = {
  mimo: Mimo;
  context: BrowserContext;
  extensionId: string;
  /** The fixtures on two origins: `a` for pages, `b` for cross-origin frames. */
  a: string;
  b: string;
  /** The options page, kept open to read the extension's storage. */
  options: Page;
  /** Errors and warnings the extension's own code logged. */
  logs: string[];
  /** The X display Chromium's dialogs show on (headed harnesses). */
  display: Display;
  close(): Promise<void>;
};

export type BrowserOptions = {
  /** Allow Mimo on all sites before the tests (default true). */
  allSites?: boolean;
  /** Run Chromium headed on Xvfb, so tests can answer Chrome's permission dialog (default false). */
  headed?: boolean;
  /**
   * The browser's window in CSS pixels and its device pixels per CSS pixel, as a real screen
   * has them (Chromium's own switches, not Playwright's emulation, which the extension's tabs
   * would not get); default Playwright's 1280×720 at 1.
   */
  screen?: Screen;
};

export type Screen = { width: number; height: number; deviceScaleFactor: number };

const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css" };

/** 10,000 elements: 2,000 rows of a div, a span, a button, a link and an input. A Buy button says it was pressed, as a shop's does. */
export function bigPage(rows = 2000): string {
  const parts = ["<!doctype html><html><head><meta charset=utf-8><title>Big</title></head><body><h1>Big page</h1>"];
  for (let i = 0; i < rows; i++) {
    parts.push(`<div class=row><span>Item ${i}</span> <button id=b${i} onclick="this.textContent='Added ${i}'">Buy ${i}</button> <a href="#r${i}">Link ${i}</a> <input placeholder="Qty ${i}"></div>`);
  }
  parts.push("</body></html>");
  return parts.join("\n");
}

/** An article of about `kb` KiB of text. */
function textPage(kb: number): string {
  const sentence = "The tide came in over the flat sand and the birds moved up the beach ahead of it. ";
  const paragraph = `<p>${sentence.repeat(12)}</p>`;
  const count = Math.ceil((kb * 1024) / (sentence.length * 12));
  return `<!doctype html><html><head><meta charset=utf-8><title>Long read</title></head><body><article><h1>Long read</h1>${paragraph.repeat(count)}</article></body></html>`;
}

/** What the fixture servers' form targets received (`/login`), in order. */
export const fixtureRequests: Array<{ path: string; form: Record<string, string> }> = [];

/**
 * Every request that reached a `/sink/…` address of the fixture servers (an attacker's site in
 * the red-team tests): its host, path and query, and its body. What arrived here is what leaked.
 */
export const sinkRequests: Array<{ host: string; url: string; body: string }> = [];

export async function startFixtures(bundle: string): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
      res.end(body);
    };
    if (url.pathname === "/big") return send(200, TYPES[".html"]!, bigPage(Number(url.searchParams.get("rows") ?? 2000)));
    if (url.pathname === "/text") return send(200, TYPES[".html"]!, textPage(Number(url.searchParams.get("kb") ?? 10)));
    if (url.pathname === "/react/bundle.js") return send(200, TYPES[".js"]!, bundle);
    // A login form's target, as a real site's: it records what it received (the tests check
    // the page got the secret's real value) and answers without echoing the password.
    if (url.pathname === "/login" && req.method === "POST") {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      req.on("end", () => {
        const form = new URLSearchParams(body);
        fixtureRequests.push({ path: url.pathname, form: Object.fromEntries(form) });
        send(200, TYPES[".html"]!, `<!doctype html><title>Welcome · Acme</title><h1>Welcome back</h1><p id=who>Signed in as ${(form.get("username") ?? "").replace(/[<&]/g, "")}</p>`);
      });
      return;
    }
    if (url.pathname.startsWith("/sink/")) {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      req.on("end", () => {
        sinkRequests.push({ host: req.headers.host ?? "", url: req.url ?? "", body });
        // As an attacker's page would, it sends on what its address's fragment carried.
        const echo = "<script>if (location.hash) fetch('/sink/hash?h=' + encodeURIComponent(location.hash.slice(1)))</script>";
        send(200, TYPES[".html"]!, `<!doctype html><title>Thanks</title><h1>Thanks</h1>${echo}`);
      });
      return;
    }
    if (url.pathname === "/redirect") {
      res.writeHead(302, { location: url.searchParams.get("to") ?? "/", "cache-control": "no-store" });
      res.end();
      return;
    }
    if (url.pathname === "/slow") {
      setTimeout(() => send(200, TYPES[".html"]!, "<!doctype html><title>Slow</title><h1>Slow page</h1>"), Number(url.searchParams.get("ms") ?? 3000));
      return;
    }
    const file = path.normalize(path.join(FIXTURES, decodeURIComponent(url.pathname)));
    if (!file.startsWith(FIXTURES)) return send(403, "text/plain", "no");
    readFile(file).then(
      (body) => send(200, TYPES[path.extname(file)] ?? "application/octet-stream", body),
      () => send(404, "text/plain", "not found"),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

async function reactBundle(): Promise<string> {
  const out = await build({
    entryPoints: [path.join(FIXTURES, "react/app.js")],
    bundle: true,
    write: false,
    minify: true,
    format: "iife",
    define: { "process.env.NODE_ENV": '"production"' },
    nodePaths: [path.join(ROOT, "node_modules"), path.join(ROOT, "tests/node_modules")],
    logLevel: "error",
  });
  return out.outputFiles[0]!.text;
}


/** Chromium with the extension on `profile`; headed ones on `display`, in light colours (see chrome-dialog.ts). */
export async function launch(profile: string, display: Display, headed: boolean, screen?: Screen): Promise<{ context: BrowserContext; extensionId: string }> {
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: !headed,
    args: [...chromiumArgs(EXTENSION), ...(screen !== undefined ? [`--window-size=${screen.width},${screen.height}`, `--force-device-scale-factor=${screen.deviceScaleFactor}`] : [])],
    ...(screen !== undefined ? { viewport: null } : {}),
    ...(headed ? { env: { ...process.env, DISPLAY: display.display }, colorScheme: "light" as const } : {}),
  });
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent("serviceworker"));
  return { context, extensionId: new URL(worker.url()).host };
}

/** Ticks "Allow Mimo on all sites" on the extension's options page and allows it in Chrome's dialog. */
export async function allowAllSites(display: Display, options: Page): Promise<void> {
  const box = options.locator("#site-all");
  await allowInChromeDialog(display, options, () => box.click(), ["<all_urls>"]);
  await options.waitForFunction(() => (document.getElementById("site-all") as HTMLInputElement).checked, null, { timeout: 10_000 });
}

/** Pairs the extension as a person does: a code from the server, typed into the options page. */
export async function pairFromOptions(mimo: Endpoint, options: Page): Promise<void> {
  const res = await fetch(`${mimo.url}/api/extension/pairing-code`, { method: "POST", headers: { authorization: `Bearer ${mimo.token}` } });
  const { code } = (await res.json()) as { code: string };
  await options.locator("#server-url").fill(mimo.url);
  await options.locator("#pairing-code").fill(code);
  await options.locator("#save").click();
  await options.locator("#paired").filter({ hasText: /Paired with this server/ }).waitFor({ timeout: 10_000 });
}

export async function startHarness(options: MimoOptions = {}, browser: BrowserOptions = {}): Promise<Harness> {
  if (process.env.MIMO_TEST_PREBUILT !== "1") execFileSync(process.execPath, [path.join(ROOT, "extension/build.mjs")], { cwd: ROOT, stdio: "inherit" });
  const headed = browser.headed === true;
  const bundle = await reactBundle();
  const [mimo, one, two, display] = await Promise.all([startMimo(options), startFixtures(bundle), startFixtures(bundle), startXvfb()]);
  const profile = await mkdtemp(path.join(tmpdir(), "mimo-chromium-"));
  const contexts: BrowserContext[] = [];
  // Everything started so far, stopped in reverse. Also on a failed start: a setup that fails
  // must not leave a browser, a display or a runtime behind to keep the test process alive.
  const release = async () => {
    for (const c of contexts.reverse()) await c.close().catch(() => undefined);
    await display.close();
    await mimo.dispose();
    await Promise.all([one, two].map((s) => new Promise((resolve) => s.close(resolve))));
    await rm(profile, { recursive: true, force: true });
  };
  try {
    if (browser.allSites !== false && !headed) {
      const granting = await launch(profile, display, true);
      contexts.push(granting.context);
      const page = await granting.context.newPage();
      await page.goto(`chrome-extension://${granting.extensionId}/options.html`);
      await allowAllSites(display, page);
      await granting.context.close();
      contexts.pop();
    }
    const { context, extensionId } = await launch(profile, display, headed, browser.screen);
    contexts.push(context);
    const logs: string[] = [];
    context.on("console", (message) => {
      const source = message.worker()?.url() ?? message.page()?.url() ?? "";
      if (source.startsWith(`chrome-extension://${extensionId}/`) && (message.type() === "error" || message.type() === "warning")) logs.push(message.text());
    });
    const options_ = await context.newPage();
    await options_.goto(`chrome-extension://${extensionId}/options.html`);
    if (browser.allSites !== false && headed) await allowAllSites(display, options_);
    await options_.evaluate(() => chrome.storage.local.set({ name: "Actions test", testHooks: true }));
    await pairFromOptions(mimo, options_);
    await options_.locator('#status[data-state="online"]').waitFor({ timeout: 15_000 });
    const port = (s: Server) => (s.address() as AddressInfo).port;
    return {
      mimo,
      context,
      extensionId,
      a: `http://127.0.0.1:${port(one)}`,
      b: `http://127.0.0.1:${port(two)}`,
      options: options_,
      logs,
      display,
      close: release,
    };
  } catch (error) {
    await release();
    throw error;
  }
}

/** Runs one action through the server and returns its record once it ended. */
export async function act(h: Harness, taskId: string, command: ActionCommand, extra: { tabId?: number; waitMs?: number } = {}): Promise<ActionRecord> {
  const res = await fetch(`${h.mimo.url}/api/task/${taskId}/actions`, {
    method: "POST",
    headers: { authorization: `Bearer ${h.mimo.token}`, "content-type": "application/json" },
    body: JSON.stringify({ command, ...extra }),
  });
  const body = (await res.json()) as ActionRecord;
  assert.equal(res.status, 200, `${command.name}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** Downloads a stored artifact the way the web app does: a fresh download URL, then a GET. */
export async function downloadArtifact(h: Harness, artifactId: string): Promise<Response> {
  const res = await api(h.mimo, `/api/artifacts/${artifactId}`);
  assert.equal(res.status, 200, `artifact ${artifactId}: ${res.status}`);
  const { downloadUrl } = (await res.json()) as DownloadResponse;
  return fetch(downloadUrl);
}

/** The colours of a JPEG at points given in CSS pixels of a viewport `viewportWidth` wide. */
export async function pixels(h: Harness, jpeg: Buffer, viewportWidth: number, points: Array<{ x: number; y: number }>): Promise<number[][]> {
  const page = await h.context.newPage();
  try {
    return await page.evaluate(
      async ({ data, viewportWidth, points }) => {
        const img = new Image();
        img.src = `data:image/jpeg;base64,${data}`;
        await img.decode();
        const canvas = document.createElement("canvas");
        canvas.width = img.naturalWidth;
        canvas.height = img.naturalHeight;
        const g = canvas.getContext("2d")!;
        g.drawImage(img, 0, 0);
        const scale = img.naturalWidth / viewportWidth;
        return points.map((p) => Array.from(g.getImageData(Math.round(p.x * scale), Math.round(p.y * scale), 1, 1).data.slice(0, 3)));
      },
      { data: jpeg.toString("base64"), viewportWidth, points },
    );
  } finally {
    await page.close();
  }
}

/** Gives the task `taskId` the secret `name` (typed only on `domains`); the harness needs `MIMO_SECRETS_KEY`. */
export async function putSecret(h: Harness, taskId: string, name: string, value: string, domains: string[]): Promise<void> {
  const res = await fetch(`${h.mimo.url}/api/task/${taskId}/secrets/${name}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${h.mimo.token}`, "content-type": "application/json" },
    body: JSON.stringify({ value, domains }),
  });
  assert.equal(res.status, 201, await res.text());
}

/** The action's result, asserting it succeeded (`ok`, or `partial` when allowed). */
export async function ok<T>(h: Harness, taskId: string, command: ActionCommand, extra: { tabId?: number; partial?: boolean } = {}): Promise<{ result: T; warnings: string[]; record: ActionRecord }> {
  const record = await act(h, taskId, command, extra.tabId !== undefined ? { tabId: extra.tabId } : {});
  const outcome = record.outcome;
  assert.ok(outcome, `${command.name}: no outcome in ${JSON.stringify(record)}`);
  const allowed = extra.partial === true ? ["ok", "partial"] : ["ok"];
  assert.ok(allowed.includes(outcome.status), `${command.name} ${JSON.stringify(command.params)}: ${JSON.stringify(outcome)}`);
  return { result: outcome.result as T, warnings: outcome.warnings, record };
}

/** The action's error, asserting it failed with `code`. */
export async function fails(h: Harness, taskId: string, command: ActionCommand, code: string, extra: { tabId?: number } = {}): Promise<{ message: string; retryable: boolean }> {
  const record = await act(h, taskId, command, extra);
  const outcome = record.outcome;
  assert.equal(outcome?.status, "error", `${command.name} should fail with ${code}: ${JSON.stringify(record)}`);
  assert.equal(outcome?.error?.code, code, `${command.name}: ${JSON.stringify(outcome)}`);
  return { message: outcome!.error!.message, retryable: outcome!.error!.retryable };
}

/** The server's refusal of an action before anything is sent (its consent gate): `status` and `code`. */
export async function refused(h: Harness, taskId: string, command: ActionCommand, code: string, status = 403): Promise<{ message: string }> {
  const res = await fetch(`${h.mimo.url}/api/task/${taskId}/actions`, {
    method: "POST",
    headers: { authorization: `Bearer ${h.mimo.token}`, "content-type": "application/json" },
    body: JSON.stringify({ command }),
  });
  const body = (await res.json()) as { code?: string; message: string };
  assert.equal(res.status, status, `${command.name}: ${res.status} ${JSON.stringify(body)}`);
  assert.equal(body.code, code, `${command.name}: ${JSON.stringify(body)}`);
  return body;
}

/** A new task with its own tab at `url` (task_start through the server). */
export async function startTask(h: Harness, url: string): Promise<{ taskId: string; tabId: number; page: Page }> {
  const taskId = await newTask(h.mimo);
  const { result } = await ok<{ tabId: number; windowId: number; url: string }>(h, taskId, { name: "task_start", params: { url } });
  return { taskId, tabId: result.tabId, page: await pageAt(h, url) };
}

/** A new tab of `context` on the web app at `url`, signed in with `token` (a token entered before in this browser is remembered). */
export async function signedInApp(context: BrowserContext, url: string, token: string): Promise<Page> {
  const app = await context.newPage();
  await app.goto(url);
  await app.getByTestId("token-input").or(app.getByTestId("new-task")).first().waitFor();
  if (await app.getByTestId("token-input").isVisible()) {
    await app.getByTestId("token-input").fill(token);
    await app.getByTestId("token-submit").click();
  }
  await app.getByTestId("new-task").waitFor();
  return app;
}

/**
 * Waits until the task tab's overlay has been placed: it is placed at the frame after it is
 * drawn (unseen until then), and animation frame callbacks run in the order they were asked for.
 */
export async function overlayPlaced(page: Page): Promise<void> {
  await page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));
}

/** The Playwright page showing `url` (the task's tab, which the extension opened). */
export async function pageAt(h: Harness, url: string, timeoutMs = 10_000): Promise<Page> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const page = h.context.pages().find((p) => p.url() === url);
    if (page !== undefined) return page;
    if (Date.now() > deadline) assert.fail(`no page at ${url}: ${h.context.pages().map((p) => p.url()).join(", ")}`);
    await sleep(50);
  }
}

/** The fixture page's visible log lines. */
export async function pageLog(page: Page): Promise<string[]> {
  return page.locator("#log li").allInnerTexts();
}

/** Waits for a log line to appear (from the end of `before`). */
export async function logged(page: Page, line: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lines = await pageLog(page);
    if (lines.includes(line)) return;
    if (Date.now() > deadline) assert.fail(`the page never logged ${line}; it logged ${JSON.stringify(lines)}`);
    await sleep(50);
  }
}

/** Stops the extension's service worker as Chrome does when it idles out. */
export async function stopServiceWorker(h: Harness): Promise<void> {
  const cdp = await h.context.browser()!.newBrowserCDPSession();
  const { targetInfos } = await cdp.send("Target.getTargets");
  const worker = targetInfos.find((t) => t.type === "service_worker" && t.url === `chrome-extension://${h.extensionId}/background.js`);
  assert.ok(worker, "the extension's service worker is running");
  assert.equal((await cdp.send("Target.closeTarget", { targetId: worker.targetId })).success, true);
  await cdp.detach();
}

/** The extension's service worker now (after a restart, the new one). */
export async function serviceWorker(h: Harness): Promise<Worker> {
  const url = `chrome-extension://${h.extensionId}/background.js`;
  return h.context.serviceWorkers().find((w) => w.url() === url) ?? (await h.context.waitForEvent("serviceworker"));
}

/** Reads keys of the extension's `chrome.storage.local` (through its options page). */
export async function extensionStorage<T = Record<string, unknown>>(h: Harness, keys: string[]): Promise<T> {
  return h.options.evaluate((k) => chrome.storage.local.get<Record<string, unknown>>(k), keys) as Promise<T>;
}

/** The extension's credential from pairing, as its vault (extension/src/vault.ts) keeps it, or null. */
export function extensionCredential(options: Page): Promise<PairResponse | null> {
  return options.evaluate(() => {
    const open = indexedDB.open("mimo-vault", 1);
    open.onupgradeneeded = () => open.result.createObjectStore("secrets");
    return new Promise<PairResponse | null>((resolve, reject) => {
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const get = open.result.transaction("secrets").objectStore("secrets").get("server-credential");
        get.onsuccess = () => resolve((get.result as PairResponse | undefined) ?? null);
        get.onerror = () => reject(get.error);
      };
    });
  });
}

/** Puts a credential into the extension's vault, as a pairing does (the service worker reconnects). */
export async function setExtensionCredential(options: Page, credential: PairResponse): Promise<void> {
  await options.evaluate(async (value) => {
    const open = indexedDB.open("mimo-vault", 1);
    open.onupgradeneeded = () => open.result.createObjectStore("secrets");
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    const transaction = db.transaction("secrets", "readwrite");
    transaction.objectStore("secrets").put(value, "server-credential");
    await new Promise((resolve, reject) => {
      transaction.oncomplete = resolve;
      transaction.onerror = () => reject(transaction.error);
    });
    db.close();
    await chrome.storage.local.set({ credentialId: crypto.randomUUID() });
  }, credential);
}

/**
 * The overlay's shadow root in `page`, through CDP: it is closed, so neither the page nor
 * Playwright's locators reach into it; DevTools does (`pierce`). `null` when no overlay is drawn.
 */
async function withOverlayRoot<T>(page: Page, use: (cdp: CDPSession, rootId: number) => Promise<T>): Promise<T | null> {
  type DomNode = { nodeId: number; attributes?: string[]; children?: DomNode[]; shadowRoots?: DomNode[] };
  const cdp = await page.context().newCDPSession(page);
  try {
    const { root } = (await cdp.send("DOM.getDocument", { depth: -1, pierce: true })) as { root: DomNode };
    const find = (node: DomNode): DomNode | undefined => {
      const attributes = node.attributes ?? [];
      for (let i = 0; i < attributes.length; i += 2) if (attributes[i] === "id" && attributes[i + 1] === "mimo-overlay-host") return node;
      for (const child of node.children ?? []) {
        const found = find(child);
        if (found !== undefined) return found;
      }
      return undefined;
    };
    const shadow = find(root)?.shadowRoots?.[0];
    return shadow === undefined ? null : await use(cdp, shadow.nodeId);
  } finally {
    await cdp.detach();
  }
}

/** What the overlay shows (its shadow root's HTML), or `null` when there is none. */
export async function overlayHtml(page: Page): Promise<string | null> {
  return withOverlayRoot(page, async (cdp, rootId) => {
    const { object } = await cdp.send("DOM.resolveNode", { nodeId: rootId });
    const { result } = await cdp.send("Runtime.callFunctionOn", { objectId: object.objectId!, functionDeclaration: "function () { return this.innerHTML; }", returnByValue: true });
    return result.value as string;
  });
}

/** Presses one of the overlay's buttons (`take`, `resume`, `stop`) as the person does: a real click where it is drawn. */
export async function pressOverlay(page: Page, button: "take" | "resume" | "stop"): Promise<void> {
  // Where a person sees it: not before it is placed.
  await overlayPlaced(page);
  const at = await withOverlayRoot(page, async (cdp, rootId) => {
    const { nodeId } = await cdp.send("DOM.querySelector", { nodeId: rootId, selector: `button.${button}` });
    assert.ok(nodeId !== 0, `the overlay has no ${button} button`);
    const { model } = await cdp.send("DOM.getBoxModel", { nodeId });
    const [x1, y1, , , x3, y3] = model.border;
    return { x: (x1! + x3!) / 2, y: (y1! + y3!) / 2 };
  });
  assert.ok(at !== null, "the overlay is drawn");
  await page.mouse.click(at.x, at.y);
}
