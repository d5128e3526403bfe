// A task's domain policy held by Chrome itself (extension/src/net-rules.ts): what its tabs ask
// of a blocked site is cancelled before it is sent, whoever asks — a link or a form Mimo clicks,
// a redirect, the page's own scripts, a frame — not only the navigations Mimo is told to make.
// Judged, as the red team's attacks are, by what reached the fixture servers' sink, and by what
// the tab shows. The sites are names under .localhost (Chromium resolves them to this machine):
// shop where the task works, evil the site blocked for it, news an allowed one beside it, ads
// one the deployment blocks (MIMO_BLOCKED_DOMAINS).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { DomIndexResult } from "../../protocol/ts/protocol.ts";
import { newTask, sleep, WebClient } from "../support/clients.ts";
import { fails, ok, serviceWorker, sinkRequests, startHarness, stopServiceWorker } from "./harness.ts";
import type { Harness } from "./harness.ts";

let h: Harness;
before(async () => (h = await startHarness({ bindings: { MIMO_BLOCKED_DOMAINS: "ads.localhost" } })));
after(async () => {
  await h?.close();
});

/** A site of the fixture servers by its name, on the first server unless `server` is the other. */
function site(name: string, server: "a" | "b" = "a"): string {
  return `http://${name}.localhost:${new URL(h[server]).port}`;
}

/** What reached the sink for `tag`, as `host what` (`evil.localhost:41234 link`). */
function arrived(tag: string): string[] {
  const prefix = `/sink/${tag}/`;
  return sinkRequests.filter((r) => r.url.startsWith(prefix)).map((r) => `${r.host} ${r.url.slice(prefix.length)}`);
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await check()); await sleep(50)) assert.ok(Date.now() < deadline, `waited for ${what}`);
}

/** The leaks.html page on shop reaching the sites `to` (see the page), marked `tag` at the sink. */
function leaks(tag: string, to: string[], frame?: string): string {
  const query = new URLSearchParams([["tag", tag], ...to.map((site) => ["to", site]), ...(frame !== undefined ? [["frame", frame]] : [])]);
  return `${site("shop")}/leaks.html?${query}`;
}

/** Sets the task's own sites, as the person does in the web app's Sites panel. */
async function setSites(taskId: string, sites: { blocked?: string[]; allowed?: string[] }): Promise<void> {
  const web = await WebClient.connect(h.mimo, taskId);
  web.send({ type: "set_domains", allowed: sites.allowed ?? [], blocked: sites.blocked ?? [] });
  await web.waitFor((e) => e.type === "taskDomains", "the task's sites stored");
  await web.close();
}

/** A task under its own `sites` (none: the deployment's only), started in its own tab on `url`. */
async function taskOn(url: string, sites?: { blocked?: string[]; allowed?: string[] }): Promise<{ taskId: string; tabId: number }> {
  const taskId = await newTask(h.mimo);
  if (sites !== undefined) await setSites(taskId, sites);
  const { result } = await ok<{ tabId: number }>(h, taskId, { name: "task_start", params: { url } });
  return { taskId, tabId: result.tabId };
}

/** How the tab shows `url` once it stopped loading there: the page, or Chrome's error page in its stead. */
async function landing(tabId: number, url: string): Promise<{ chromeError: boolean; title: string }> {
  const worker = await serviceWorker(h);
  for (const deadline = Date.now() + 10_000; ; await sleep(50)) {
    const seen = await worker.evaluate(async (id) => {
      const [tab, frame] = await Promise.all([chrome.tabs.get(id), chrome.webNavigation.getFrame({ tabId: id, frameId: 0 })]);
      return { url: tab.url ?? "", status: tab.status, chromeError: frame?.errorOccurred === true, title: tab.title ?? "" };
    }, tabId);
    if (seen.url === url && seen.status === "complete") return { chromeError: seen.chromeError, title: seen.title };
    assert.ok(Date.now() < deadline, `the tab is at ${seen.url} (${seen.status}), not done loading ${url}`);
  }
}

/** The session rules Chrome holds for the extension now. */
async function sessionRules(): Promise<chrome.declarativeNetRequest.Rule[]> {
  return h.options.evaluate(() => chrome.declarativeNetRequest.getSessionRules());
}

describe("the task's blocked sites, held by the browser", () => {
  it("control: with no rule against it, the same link click reaches the site", { timeout: 30_000 }, async () => {
    const tag = "control";
    const { taskId, tabId } = await taskOn(leaks(tag, [site("evil")]));
    await ok(h, taskId, { name: "browser_click", params: { selector: "#link" } });
    const landed = await landing(tabId, `${site("evil")}/sink/${tag}/link`);
    assert.equal(landed.chromeError, false);
    assert.equal(landed.title, "Thanks");
    assert.ok(arrived(tag).includes(`evil.localhost:${new URL(h.a).port} link`), JSON.stringify(arrived(tag)));
  });

  it("a link to a blocked site, clicked: nothing reaches it, and the tab shows Chrome's error page", { timeout: 30_000 }, async () => {
    const tag = "link";
    const { taskId, tabId } = await taskOn(leaks(tag, [site("evil")]), { blocked: ["evil.localhost"] });
    await ok(h, taskId, { name: "browser_click", params: { selector: "#link" } });
    const landed = await landing(tabId, `${site("evil")}/sink/${tag}/link`);
    assert.equal(landed.chromeError, true);
    assert.notEqual(landed.title, "Thanks");
    assert.deepEqual(arrived(tag), []);
    // Nothing runs on the page the tab is refused.
    await fails(h, taskId, { name: "browser_dom_index", params: {} }, "PERMISSION_DENIED");
  });

  it("a form to a blocked site, posted by a click: nothing reaches it", { timeout: 30_000 }, async () => {
    const tag = "form";
    const { taskId, tabId } = await taskOn(leaks(tag, [site("evil")]), { blocked: ["evil.localhost"] });
    await ok(h, taskId, { name: "browser_click", params: { selector: "#send" } });
    assert.equal((await landing(tabId, `${site("evil")}/sink/${tag}/form`)).chromeError, true);
    assert.deepEqual(arrived(tag), []);
  });

  it("a redirect from the allowed site to a blocked one: nothing reaches it", { timeout: 30_000 }, async () => {
    const tag = "redirect";
    const { taskId, tabId } = await taskOn(leaks(tag, [site("evil")]), { blocked: ["evil.localhost"] });
    await ok(h, taskId, { name: "browser_click", params: { selector: "#redirect" } });
    assert.equal((await landing(tabId, `${site("evil")}/sink/${tag}/redirect`)).chromeError, true);
    assert.deepEqual(arrived(tag), []);
  });

  it("the page's own fetch, image beacon and frame to a site the task or the deployment blocks: none arrives, and the frame is not in the index", { timeout: 30_000 }, async () => {
    const tag = "scripts";
    const { taskId } = await taskOn(leaks(tag, [site("news"), site("evil"), site("ads")]), { blocked: ["evil.localhost"] });
    const news = `news.localhost:${new URL(h.a).port}`;
    // The allowed site got all three: the page's requests went out, the blocked ones with them.
    await until("the page's requests to news", () => ["fetch", "image", "frame"].every((what) => arrived(tag).includes(`${news} ${what}`)));
    const { result, warnings } = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: {} });
    assert.deepEqual(arrived(tag).sort(), [`${news} fetch`, `${news} frame`, `${news} image`]);
    const frames = result.text.split("\n").filter((line) => line.includes("<iframe"));
    assert.equal(frames.length, 1, result.text);
    assert.match(frames[0]!, /src="http:\/\/news\.localhost/);
    for (const blocked of ["evil.localhost", "ads.localhost"]) {
      assert.ok(
        warnings.some((w) => w.includes(`/sink/${tag}/frame is on a blocked domain`) && w.includes(blocked)),
        `the index says why the frame of ${blocked} is left out: ${JSON.stringify(warnings)}`,
      );
    }
  });

  it("a host:port rule blocks that port only", { timeout: 30_000 }, async () => {
    const tag = "port";
    const blockedPort = site("evil", "a");
    const otherPort = site("evil", "b");
    await taskOn(leaks(tag, [otherPort, blockedPort]), { blocked: [new URL(blockedPort).host] });
    const other = new URL(otherPort).host;
    await until("the page's requests to the other port", () => ["fetch", "image", "frame"].every((what) => arrived(tag).includes(`${other} ${what}`)));
    assert.deepEqual(arrived(tag).sort(), [`${other} fetch`, `${other} frame`, `${other} image`]);
  });

  it("after task_stop the tab is the person's again: the same link now reaches the site", { timeout: 30_000 }, async () => {
    const tag = "stopped";
    const { taskId, tabId } = await taskOn(leaks(tag, [site("evil")]), { blocked: ["evil.localhost"] });
    const page = h.context.pages().find((p) => p.url().includes(`tag=${tag}`));
    assert.ok(page, "the task's page");
    assert.ok((await sessionRules()).some((r) => r.condition.tabIds?.includes(tabId)), "the task's tab has rules");
    await ok(h, taskId, { name: "task_stop", params: {} });
    assert.deepEqual((await sessionRules()).filter((r) => r.condition.tabIds?.includes(tabId)), []);
    await page.click("#link");
    assert.equal((await landing(tabId, `${site("evil")}/sink/${tag}/link`)).title, "Thanks");
    assert.ok(arrived(tag).includes(`evil.localhost:${new URL(h.a).port} link`), JSON.stringify(arrived(tag)));
  });
});

describe("frames of blocked sites", () => {
  it("are left out of the index and refused to act in, when they loaded before the task's rules held the tab", { timeout: 60_000 }, async () => {
    // The person's own tab, with a frame of evil loaded long before any task.
    const tag = "adopted";
    const mine = await h.context.newPage();
    await mine.goto(leaks(tag, [site("evil")], "/inner.html?name=evil"));
    const tabs = await h.options.evaluate(() => chrome.tabs.query({}).then((all) => all.map((t) => ({ id: t.id!, url: t.url ?? "" }))));
    const tabId = tabs.find((t) => t.url.includes(`tag=${tag}`))!.id;
    const taskId = await newTask(h.mimo);
    const web = await WebClient.connect(h.mimo, taskId);
    web.send({ type: "start_on_tab", tabId });
    await web.close();
    await ok(h, taskId, { name: "task_start", params: { adoptTabId: tabId } });
    const unguarded = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: {} });
    const button = unguarded.result.elements.find((e) => e.text === "Button in evil");
    assert.ok(button !== undefined && button.frameId !== 0, unguarded.result.text);

    // Now the person blocks evil for the task, which starts again on their tab.
    await setSites(taskId, { blocked: ["evil.localhost"] });
    await ok(h, taskId, { name: "task_start", params: { adoptTabId: tabId } });
    const refused = await fails(h, taskId, { name: "browser_click", params: { clickId: button.clickId } }, "PERMISSION_DENIED");
    assert.match(refused.message, /inner\.html\?name=evil is on a blocked domain \(rule "evil\.localhost" of this task's blocked sites\)/);
    await fails(h, taskId, { name: "browser_click", params: { label: "Button in evil" } }, "TARGET_NOT_FOUND");
    const blocked = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: {} });
    assert.equal(blocked.result.elements.find((e) => e.text === "Button in evil"), undefined, blocked.result.text);
    assert.ok(blocked.warnings.some((w) => /frame \d+ was not indexed: .*inner\.html\?name=evil is on a blocked domain/.test(w)), JSON.stringify(blocked.warnings));
    await ok(h, taskId, { name: "task_stop", params: {} });
    await mine.close();
  });
});

describe("the rules when the service worker starts again", () => {
  it("are those of the tasks it knows, and no other", { timeout: 60_000 }, async () => {
    const tag = "restart";
    const { tabId } = await taskOn(leaks(tag, [site("evil")]), { blocked: ["evil.localhost"] });
    const ours = (await sessionRules()).filter((r) => r.condition.tabIds?.includes(tabId));
    assert.ok(ours.length > 0);
    // A rule no task of the extension's accounts for (as one of a task forgotten while the
    // worker was stopped): it stays while the worker runs on, as nothing changes.
    const stray: chrome.declarativeNetRequest.Rule = { id: 9999, action: { type: "block" }, condition: { tabIds: [tabId], requestDomains: ["news.localhost"] } };
    await h.options.evaluate((rule) => chrome.declarativeNetRequest.updateSessionRules({ addRules: [rule] }), stray);
    await sleep(500);
    assert.ok((await sessionRules()).some((r) => r.id === stray.id));
    await stopServiceWorker(h);
    await sleep(200);
    // The options page wakes the worker, which sets the rules of what it knows.
    await h.options.reload();
    await until("the stray rule is gone", async () => !(await sessionRules()).some((r) => r.id === stray.id));
    const now = (await sessionRules()).filter((r) => r.condition.tabIds?.includes(tabId));
    assert.deepEqual(
      now.map(({ id: _, ...rule }) => rule),
      ours.map(({ id: _, ...rule }) => rule),
      "the task's own rules stay",
    );
  });
});
