// Browser actions end to end: the server's developer API (`POST /api/task/{id}/actions`) sends
// each action to the real extension in Debian's Chromium, which runs it in the task's own tab on
// the fixture pages of tests/fixtures. Clicks and typing must arrive as trusted (CDP) events,
// and each error code comes from a case made for it.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import type { DomElement, DomIndexResult, TaskStartResult } from "../../protocol/ts/protocol.ts";
import { newTask, sleep, WebClient } from "../support/clients.ts";
import { act, downloadArtifact, extensionStorage, fails, fixtureRequests, logged, ok, pageAt, pageLog, refused, serviceWorker, startHarness, startTask } from "./harness.ts";
import type { Harness } from "./harness.ts";

let h: Harness;
before(async () => (h = await startHarness()));
after(async () => {
  await h?.close();
});

/** The element whose text (or value) contains `text`. */
function el(index: DomIndexResult, text: string): DomElement {
  const found = index.elements.find((e) => e.text?.includes(text));
  assert.ok(found, `no element "${text}" in:\n${index.text}`);
  return found;
}

async function index(taskId: string, params: { scope?: "viewport" | "document"; assignAttr?: string } = {}): Promise<DomIndexResult> {
  return (await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params })).result;
}

async function goto(taskId: string, url: string): Promise<void> {
  await ok(h, taskId, { name: "browser_navigate", params: { url } });
}

describe("the task tab", () => {
  it("task_start opens it in a window of its own, unfocused, in a tab group", { timeout: 30_000 }, async () => {
    const taskId = await newTask(h.mimo);
    const url = `${h.a}/buttons.html?start`;
    const { result } = await ok<TaskStartResult>(h, taskId, { name: "task_start", params: { url, groupTitle: "Shopping" } });
    assert.equal(result.url, url);
    assert.equal(result.title, "Buttons");
    assert.ok(result.groupId !== undefined && result.groupId >= 0);
    const facts = await h.options.evaluate(async (r) => {
      const tab = await chrome.tabs.get(r.tabId);
      const win = await chrome.windows.get(r.windowId, { populate: true });
      const group = await chrome.tabGroups.get(r.groupId!);
      const optionsTab = await chrome.tabs.getCurrent();
      return { windowId: tab.windowId, tabs: win.tabs!.length, focused: win.focused, group: group.title, optionsWindow: optionsTab!.windowId };
    }, result);
    assert.equal(facts.windowId, result.windowId);
    assert.equal(facts.tabs, 1, "the task tab is alone in its window");
    assert.notEqual(facts.windowId, facts.optionsWindow, "not in the person's window");
    assert.equal(facts.focused, false);
    assert.equal(facts.group, "Shopping");
    const stored = await extensionStorage<{ tasks: Record<string, { tabId: number }> }>(h, ["tasks"]);
    assert.equal(stored.tasks[taskId]?.tabId, result.tabId, "taskId → tabId is stored");

    // The default group title.
    const other = await newTask(h.mimo);
    const second = await ok<TaskStartResult>(h, other, { name: "task_start", params: { url: `${h.a}/page2.html?start` } });
    const title = await h.options.evaluate((g) => chrome.tabGroups.get(g).then((x) => x.title), second.result.groupId!);
    assert.equal(title, "Mimo");

    // task_stop with closeTab closes it.
    await ok(h, other, { name: "task_stop", params: { closeTab: true } });
    const gone = await h.options.evaluate((id) => chrome.tabs.get(id).then(() => false, () => true), second.result.tabId);
    assert.ok(gone);
    await fails(h, other, { name: "browser_dom_index", params: {} }, "INVALID_TASK_TAB");
  });

  it("refuses other tabs, tasks without a tab, and Mimo's own origin", { timeout: 30_000 }, async () => {
    const { taskId } = await startTask(h, `${h.a}/buttons.html?guard`);
    const optionsTab = await h.options.evaluate(() => chrome.tabs.getCurrent().then((t) => t!.id!));
    const wrong = await fails(h, taskId, { name: "browser_click", params: { clickId: 1 } }, "INVALID_TASK_TAB", { tabId: optionsTab });
    assert.match(wrong.message, /not one of the task's tabs/);
    assert.equal(wrong.retryable, false);

    const fresh = await newTask(h.mimo);
    const none = await fails(h, fresh, { name: "browser_dom_index", params: {} }, "INVALID_TASK_TAB");
    assert.match(none.message, /task_start/);

    await fails(h, taskId, { name: "browser_navigate", params: { url: `${h.mimo.url}/` } }, "PERMISSION_DENIED");
    await fails(h, taskId, { name: "browser_navigate", params: { url: "chrome://settings" } }, "PERMISSION_DENIED");
    await fails(h, taskId, { name: "browser_navigate", params: { url: "not a url" } }, "SCHEMA_VALIDATION_FAILED");
    await fails(h, fresh, { name: "task_start", params: { url: `${h.mimo.url}/api/health` } }, "PERMISSION_DENIED");
  });
});

describe("DOM index, click and type", () => {
  let taskId: string;
  let page: import("playwright-core").Page;

  before(async () => {
    ({ taskId, page } = await startTask(h, `${h.a}/buttons.html`));
  });

  it("indexes what a person could click, and nothing hidden, covered or inert", async () => {
    const result = await index(taskId);
    const texts = result.elements.map((e) => e.text);
    for (const t of ["Go to page two", "Add to cart", "Sold out", "Div with onclick", "Pointer span bold", "ARIA button", "ARIA checkbox", "Menu", "More"]) {
      assert.ok(texts.includes(t), `${t} is indexed:\n${result.text}`);
    }
    for (const t of ["Display none", "Visibility hidden", "Opacity zero", "Covered button", "Not a link", "Far below", "Details body"]) {
      assert.ok(!texts.includes(t), `${t} is not indexed`);
    }
    // What a person sees under something else is said, with what covers it, but given no index.
    assert.match(result.text, /^\s*\(covered by <div id=modal> "A modal covers this"\) <button>Covered button<\/button>$/m);
    assert.equal(el(result, "Sold out").disabled, true);
    assert.equal(el(result, "Menu").expanded, false);
    assert.equal(el(result, "ARIA checkbox").role, "checkbox");
    assert.equal(el(result, "Add to cart").frameId, 0);
    assert.equal(el(result, "Add to cart").xpath, "/html[1]/body[1]/p[2]/button[1]");
    assert.match(result.text, /^page http:\/\/127\.0\.0\.1:\d+\/buttons\.html "Buttons": scrolled to 0,0 of \d+x\d+, viewport \d+x\d+/);
    assert.match(result.text, /\n\[\d+\]<button>Add to cart<\/button>\n/);
    assert.equal(result.title, "Buttons");
    assert.equal(result.scrollY, 0);

    // Click ids are unique, in the attribute, and the boxes are where the page has them.
    assert.equal(new Set(result.elements.map((e) => e.clickId)).size, result.elements.length);
    const buy = el(result, "Add to cart");
    assert.equal(await page.locator("#buy").getAttribute("data-mimo_click_id"), String(buy.clickId));
    const box = (await page.locator("#buy").boundingBox())!;
    assert.deepEqual(buy.bbox, { x: Math.round(box.x), y: Math.round(box.y), w: Math.round(box.width), h: Math.round(box.height) });
    assert.equal(await page.locator("[data-mimo_click_id]").count(), result.elements.length);

    // The whole document reaches the button far below; a custom attribute replaces the default.
    const whole = await index(taskId, { scope: "document", assignAttr: "data-agent-id" });
    assert.ok(whole.elements.some((e) => e.text === "Far below"));
    assert.equal(await page.locator("[data-mimo_click_id]").count(), 0, "the old attribute is gone");
    assert.equal(await page.locator("[data-agent-id]").count(), whole.elements.length);
  });

  it("keeps each click id in its element's attribute when the page changes between two indexes", { timeout: 30_000 }, async () => {
    const fresh = await startTask(h, `${h.a}/buttons.html?changed`);
    const first = await index(fresh.taskId, { scope: "document" });
    // A button comes before the others (their ids move on by one) and one goes out of sight.
    await fresh.page.evaluate(() => {
      const button = document.createElement("button");
      button.textContent = "New first";
      document.body.prepend(button);
      document.getElementById("buy")!.style.display = "none";
    });
    const second = await index(fresh.taskId, { scope: "document" });
    assert.equal(el(second, "New first").clickId, 1);
    assert.ok(!second.elements.some((e) => e.text === "Add to cart"), second.text);
    assert.notEqual(el(second, "Go to page two").clickId, el(first, "Go to page two").clickId);
    assert.equal(await fresh.page.locator("#buy").getAttribute("data-mimo_click_id"), null, "what is no longer indexed loses its id");
    const written = await fresh.page.locator("[data-mimo_click_id]").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-mimo_click_id"))));
    assert.deepEqual(written.sort((a, b) => a - b), second.elements.map((e) => e.clickId).sort((a, b) => a - b));
    for (const text of ["New first", "Go to page two", "Sold out"]) {
      assert.equal(await fresh.page.getByText(text, { exact: true }).getAttribute("data-mimo_click_id"), String(el(second, text).clickId), text);
    }
    // Indexed again unchanged, every element keeps its id.
    const third = await index(fresh.taskId, { scope: "document" });
    assert.deepEqual(third.elements.map((e) => [e.clickId, e.text]), second.elements.map((e) => [e.clickId, e.text]));
    assert.equal(await fresh.page.locator("[data-mimo_click_id]").count(), third.elements.length);
  });

  it("says which links lead to another site, however their href is written, and by the page's base", { timeout: 30_000 }, async () => {
    const fresh = await startTask(h, `${h.a}/buttons.html?links`);
    const other = new URL(h.b).host;
    await fresh.page.evaluate((host) => {
      const links: Array<[string, string]> = [
        ["#top", "Fragment"], ["?q=1", "Query"], ["/page2.html", "Path"],
        // What a URL parser reads as another host: `//`, a backslash for a slash, a space it strips, a tab it drops.
        [`//${host}/x`, "Scheme-relative"], [`/\\${host}/x`, "Backslash"], [` //${host}/y`, "Space first"], [`/\t/${host}/z`, "Tab inside"],
      ];
      for (const [href, text] of links) {
        const a = document.createElement("a");
        a.setAttribute("href", href);
        a.textContent = text;
        document.body.prepend(a, " ");
      }
    }, other);
    const here = ["Fragment", "Query", "Path"];
    const away = ["Scheme-relative", "Backslash", "Space first", "Tab inside"];
    let list = await index(fresh.taskId);
    for (const text of here) assert.equal(el(list, text).facts?.leavesTo, undefined, text);
    for (const text of away) assert.ok(el(list, text).facts?.leavesTo?.startsWith(h.b), `${text}: ${JSON.stringify(el(list, text).facts)}`);
    // A base on another site takes every relative link there.
    await fresh.page.evaluate((origin) => {
      const base = document.createElement("base");
      base.href = `${origin}/`;
      document.head.prepend(base);
    }, h.b);
    list = await index(fresh.taskId);
    for (const text of [...here, ...away]) assert.ok(el(list, text).facts?.leavesTo?.startsWith(h.b), `${text}: ${JSON.stringify(el(list, text).facts)}`);
  });

  it("clicks with trusted CDP mouse events, scrolling the target into view", async () => {
    let result = await index(taskId, { scope: "document" });
    const { result: clicked } = await ok<{ strategy: string }>(h, taskId, { name: "browser_click", params: { clickId: el(result, "Add to cart").clickId } });
    assert.equal(clicked.strategy, "cdp_mouse");
    await logged(page, "click:buy:trusted=true");

    await ok(h, taskId, { name: "browser_click", params: { clickId: el(result, "Far below").clickId } });
    await logged(page, "click:below:trusted=true");
    assert.ok((await page.evaluate(() => window.scrollY)) > 1000, "scrolled to the button");

    await ok(h, taskId, { name: "browser_click", params: { xpath: "//div[@id='aria']" } });
    await logged(page, "click:aria:trusted=true");
    await ok(h, taskId, { name: "browser_click", params: { clickId: el(result, "ARIA checkbox").clickId } });
    await logged(page, "click:check:trusted=true");
    result = await index(taskId, { scope: "document" });
    assert.equal(el(result, "ARIA checkbox").checked, true);
    await ok(h, taskId, { name: "browser_click", params: { clickId: el(result, "Div with onclick").clickId } });
    await logged(page, "click:onclick:trusted=true");

    // A DOM click when asked for: untrusted, but it works.
    await ok(h, taskId, { name: "browser_click", params: { clickId: el(result, "Pointer span").clickId, strategy: "dom_click" } });
    await logged(page, "click:pointer:trusted=false");
  });

  it("hovers and presses keys with trusted events", async () => {
    const result = await index(taskId, { scope: "document" });
    await ok(h, taskId, { name: "browser_hover", params: { clickId: el(result, "Add to cart").clickId } });
    await logged(page, "hover:buy:trusted=true");
    await ok(h, taskId, { name: "browser_press_key", params: { key: "Escape" } });
    await logged(page, "key:Escape:trusted=true");
    await ok(h, taskId, { name: "browser_press_key", params: { key: "ctrl+a" } });
    await logged(page, "key:a:trusted=true");
    await fails(h, taskId, { name: "browser_press_key", params: { key: "hyper+q" } }, "SCHEMA_VALIDATION_FAILED");
  });

  it("names each reason a target cannot be clicked", async () => {
    const result = await index(taskId, { scope: "document" });
    const notFound = await fails(h, taskId, { name: "browser_click", params: { clickId: 9999 } }, "TARGET_NOT_FOUND");
    assert.match(notFound.message, /9999/);
    await fails(h, taskId, { name: "browser_click", params: { clickId: el(result, "Sold out").clickId } }, "TARGET_NOT_INTERACTABLE");
    const hidden = await fails(h, taskId, { name: "browser_click", params: { xpath: "//*[@id='gone']" } }, "TARGET_NOT_INTERACTABLE");
    assert.match(hidden.message, /hidden/);
    await fails(h, taskId, { name: "browser_click", params: { xpath: "//*[@id='invisible']" } }, "TARGET_NOT_INTERACTABLE");
    const covered = await fails(h, taskId, { name: "browser_click", params: { xpath: "//*[@id='covered']" } }, "TARGET_NOT_INTERACTABLE");
    assert.match(covered.message, /covered by <div id=modal>/);
    await fails(h, taskId, { name: "browser_click", params: { xpath: "//button[" } }, "INVALID_TARGET");
    await fails(h, taskId, { name: "browser_click", params: {} }, "INVALID_TARGET");
    await fails(h, taskId, { name: "browser_click", params: { xpath: "//*[@id='nothing-here']" } }, "TARGET_NOT_FOUND");
    // An indexed element that left the page.
    const buy = el(result, "Add to cart").clickId;
    await page.evaluate(() => document.getElementById("buy")!.remove());
    const detached = await fails(h, taskId, { name: "browser_click", params: { clickId: buy } }, "TARGET_NOT_FOUND");
    assert.match(detached.message, /no longer in the page|no element/);
    assert.equal((await pageLog(page)).filter((l) => l.startsWith("click:covered")).length, 0, "nothing was clicked");
  });

  it("types into inputs, textareas and secrets with trusted input, and submits", { timeout: 30_000 }, async () => {
    await goto(taskId, `${h.a}/form.html`);
    page = await pageAt(h, `${h.a}/form.html`);
    const result = await index(taskId);
    const field = (id: string) => `//*[@id='${id}']`;

    const { result: typed, warnings } = await ok<{ strategy: string; value: string }>(h, taskId, { name: "browser_type", params: { xpath: field("name"), text: "Ada Lovelace" } });
    assert.deepEqual([typed.strategy, typed.value, warnings], ["cdp_key", "Ada Lovelace", []]);
    assert.equal(await page.locator("#name").inputValue(), "Ada Lovelace");
    await logged(page, "input:name:trusted=true");

    // Existing content is replaced.
    await ok(h, taskId, { name: "browser_type", params: { xpath: field("email"), text: "ada@example.com" } });
    assert.equal(await page.locator("#email").inputValue(), "ada@example.com");
    await ok(h, taskId, { name: "browser_type", params: { xpath: field("comment"), text: "line one\nline two" } });
    assert.equal(await page.locator("#comment").inputValue(), "line one\nline two");
    await ok(h, taskId, { name: "browser_type", params: { xpath: field("age"), text: "36" } });
    assert.equal(await page.locator("#age").inputValue(), "36");
    await ok(h, taskId, { name: "browser_type", params: { xpath: field("comment"), text: "" } });
    assert.equal(await page.locator("#comment").inputValue(), "", "empty text clears the field");

    // A password is typed, but its value never comes back.
    const secret = await ok<{ value: string }>(h, taskId, { name: "browser_type", params: { clickId: el(result, "Password").clickId, text: "s3cret-typed" } });
    assert.equal(secret.result.value, "••••");
    assert.equal(await page.locator("#password").inputValue(), "s3cret-typed");

    for (const [id, code] of [["readonly", "TARGET_NOT_INTERACTABLE"], ["disabled-input", "TARGET_NOT_INTERACTABLE"], ["agree", "TARGET_NOT_INTERACTABLE"], ["submit", "TARGET_NOT_INTERACTABLE"], ["file", "TARGET_NOT_INTERACTABLE"]] as const) {
      await fails(h, taskId, { name: "browser_type", params: { xpath: field(id), text: "x" } }, code);
    }

    // A date, a colour and a slider take their value whole, in its fixed format, with the
    // events a picker fires; a value they do not take is refused, the field unchanged.
    const date = await ok<{ strategy: string }>(h, taskId, { name: "browser_type", params: { clickId: el(result, "Date").clickId, text: "2026-12-24" } });
    assert.equal(date.result.strategy, "set_value");
    assert.equal(await page.locator("#date").inputValue(), "2026-12-24");
    await logged(page, "change:date:2026-12-24");
    const wrong = await fails(h, taskId, { name: "browser_type", params: { xpath: field("date"), text: "24/12/2026" } }, "SCHEMA_VALIDATION_FAILED");
    assert.match(wrong.message, /takes a value like 2026-12-24/);
    assert.equal(await page.locator("#date").inputValue(), "2026-12-24");
    await ok(h, taskId, { name: "browser_type", params: { xpath: field("color"), text: "#3366FF" } });
    assert.equal(await page.locator("#color").inputValue(), "#3366ff");
    await ok(h, taskId, { name: "browser_type", params: { xpath: field("range"), text: "80" } });
    assert.equal(await page.locator("#range").inputValue(), "80");

    await ok(h, taskId, { name: "browser_type", params: { xpath: field("name"), text: "Grace", submit: true } });
    await logged(page, "submitted:name=Grace:trusted=true");

    // DOM input when asked for.
    await ok(h, taskId, { name: "browser_type", params: { xpath: field("name"), text: "Dom typed", strategy: "dom_input" } });
    assert.equal(await page.locator("#name").inputValue(), "Dom typed");
    await logged(page, "input:name:trusted=false");

    // Checkbox and radio by click.
    const fresh = await index(taskId);
    await ok(h, taskId, { name: "browser_click", params: { clickId: el(fresh, "I agree").clickId } });
    assert.equal(await page.locator("#agree").isChecked(), true);
  });

  it("never sends a secret in the index", async () => {
    const result = await index(taskId);
    const json = JSON.stringify(result);
    for (const secret of ["hunter2-initial", "s3cret-typed", "4111111111111111", "my-secret-note"]) assert.ok(!json.includes(secret), `${secret} leaked`);
    assert.equal(el(result, "Password").value, "••••");
    assert.equal(el(result, "Card").value, "••••");
    assert.equal(el(result, "Secret note").value, "••••");
    // Personal data is kept (and so answered to the developer API) filtered, as evidence is;
    // the model reads it as the page shows it (agent.test.ts, "personal data on a page").
    assert.equal(el(result, "Email").value, "[email redacted]");
  });

  it("types into React's controlled inputs (production build)", async () => {
    await goto(taskId, `${h.a}/react.html`);
    page = await pageAt(h, `${h.a}/react.html`);
    await page.locator("#react-name").waitFor();
    const { result, warnings, record } = await ok<{ value: string }>(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='react-name']", text: "ada" } }, { partial: true });
    // The component upper-cases what it is given: React saw the input, and the step says the
    // field holds something else than what was typed.
    assert.equal(result.value, "ADA");
    assert.equal(record.outcome?.status, "partial");
    assert.match(warnings.join(), /ADA/);
    assert.equal(await page.locator("#greeting").innerText(), "Hello, ADA");
    await ok(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='react-bio']", text: "Mathematician" } });
    assert.equal(await page.locator("#bio-echo").innerText(), "Mathematician");
    await ok(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='react-name']", text: "grace", submit: true } });
    assert.equal(await page.locator("#sent").innerText(), "sent=GRACE");
    // And the DOM fallback works with React too.
    await ok(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='react-name']", text: "dom", strategy: "dom_input" } }, { partial: true });
    assert.equal(await page.locator("#greeting").innerText(), "Hello, DOM");
  });

  it("types into contenteditable", async () => {
    await goto(taskId, `${h.a}/editable.html`);
    page = await pageAt(h, `${h.a}/editable.html`);
    const result = await index(taskId);
    const editor = el(result, "Old text");
    assert.equal(editor.tag, "div");
    await ok(h, taskId, { name: "browser_type", params: { clickId: editor.clickId, text: "New notes" } });
    assert.equal(await page.locator("#editor").innerText(), "New notes");
    await logged(page, "input:editor:trusted=true");
  });

  it("verifies each step: a click that changes nothing and a value the field did not keep are partial, with why", { timeout: 30_000 }, async () => {
    await goto(taskId, `${h.a}/effects.html`);
    page = await pageAt(h, `${h.a}/effects.html`);
    const result = await index(taskId);
    const click = (label: string) => act(h, taskId, { name: "browser_click", params: { clickId: el(result, label).clickId } });

    const dead = await click("Subscribe");
    assert.equal(dead.outcome?.status, "partial", JSON.stringify(dead.outcome));
    assert.match(dead.outcome?.warnings.join() ?? "", /no visible effect: after the click nothing changed in its form or part of the page/);
    // A change that comes a moment later counts; so does a checkbox's state, which no attribute shows.
    const later = await click("More stories");
    assert.equal(later.outcome?.status, "ok", JSON.stringify(later.outcome));
    await page.getByText("Three more stories").waitFor();
    const terms = await click("I accept the terms");
    assert.equal(terms.outcome?.status, "ok", JSON.stringify(terms.outcome));
    assert.equal(await page.locator("#terms").isChecked(), true);

    const postcode = await act(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='postcode']", text: "SW1A 1AA" } });
    assert.equal(postcode.outcome?.status, "partial");
    assert.match(postcode.outcome?.warnings.join() ?? "", /the field holds "SW1A " after typing, not what was typed/);
    const nick = await act(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='nick']", text: "Ada99" } });
    assert.equal(nick.outcome?.status, "partial");
    assert.match(nick.outcome?.warnings.join() ?? "", /holds "da"|holds "a"|holds ""/);
    const fine = await act(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='nick']", text: "ada" } });
    assert.equal(fine.outcome?.status, "ok");
  });

  it("does not take what a page changes by itself (a clock, a ticker, a carousel) for a step's effect", { timeout: 30_000 }, async () => {
    await goto(taskId, `${h.a}/ticker.html`);
    page = await pageAt(h, `${h.a}/ticker.html`);
    const result = await index(taskId);
    // The page ticks on its own meanwhile, as it would while the model thinks: each place that
    // changes by itself is seen to, twice (the carousel's slides each turn every 1.05 s).
    await sleep(2_000);
    const click = (label: string) => act(h, taskId, { name: "browser_click", params: { clickId: el(result, label).clickId } });
    const dead = await click("Notify me");
    assert.equal(dead.outcome?.status, "partial", JSON.stringify(dead.outcome));
    assert.match(dead.outcome?.warnings.join() ?? "", /no visible effect/);
    // A change at a place that was still until now counts, as does each one after.
    for (const count of [1, 2]) {
      const add = await click("Add to cart");
      assert.equal(add.outcome?.status, "ok", JSON.stringify(add.outcome));
      assert.equal(await page.locator("#cart").innerText(), `Cart (${count})`);
    }
    const again = await click("Notify me");
    assert.equal(again.outcome?.status, "partial", "still nothing, while the clock ticks on");
  });

  it("expects of each step what its kind of element does: a change elsewhere (an ad slot, an analytics badge) is not its effect", { timeout: 60_000 }, async () => {
    await goto(taskId, `${h.a}/expected.html`);
    page = await pageAt(h, `${h.a}/expected.html`);
    const result = await index(taskId);
    // Every click and choice on this page changes the ad slot in its sidebar a moment later.
    const click = (label: string) => act(h, taskId, { name: "browser_click", params: { clickId: el(result, label).clickId } });
    const expectPartial = async (outcome: Promise<Awaited<ReturnType<typeof click>>>, why: RegExp) => {
      const { outcome: o } = await outcome;
      assert.equal(o?.status, "partial", JSON.stringify(o));
      assert.match(o?.warnings.join() ?? "", why);
    };
    const expectOk = async (outcome: Promise<Awaited<ReturnType<typeof click>>>) => {
      const { outcome: o } = await outcome;
      assert.equal(o?.status, "ok", JSON.stringify(o));
    };
    const ads = () => page.locator("#ad").innerText();
    const adBefore = await ads();

    // A link that goes nowhere, a form that does not send, a checkbox that will not check, a
    // menu button that opens nothing, a button that does nothing.
    await expectPartial(click("Read reviews"), /after the click no navigation, and nothing changed in its form or part of the page/);
    await expectPartial(click("Sign up"), /no visible effect/);
    await expectPartial(click("Gift wrap"), /the element's own state \(checked, pressed, selected, open\) did not change/);
    assert.equal(await page.locator("#wrap").isChecked(), false);
    await expectPartial(click("More actions"), /it did not expand, and no menu or new items appeared/);
    await expectPartial(click("Notify me"), /no visible effect/);
    assert.notEqual(await ads(), adBefore, "the ad slot did change during those steps");

    // What each kind does, done: a dialog opened by a link, a form saved, a box checked, a menu
    // opened, a count in the page's header.
    await expectOk(click("Size guide"));
    await page.getByRole("dialog", { name: "Size guide" }).waitFor();
    await expectOk(click("Save profile"));
    assert.equal(await page.locator("#saved").innerText(), "Saved");
    await expectOk(click("Add a card"));
    assert.equal(await page.locator("#card").isChecked(), true);
    await expectOk(click("Sort reviews"));
    assert.equal(await page.locator("#sort").getAttribute("aria-expanded"), "true");
    await expectOk(click("Add to cart"));
    assert.equal(await page.locator("#cart").innerText(), "Cart (1)");

    // A choice the page takes back is not made; one it keeps is.
    const select = (id: string, option: string) => act(h, taskId, { name: "browser_select_option", params: { xpath: `//*[@id='${id}']`, option } });
    await expectPartial(select("size", "L"), /the chosen option is not the selected one/);
    assert.equal(await page.locator("#size").inputValue(), "M");
    await expectOk(select("colour", "Red"));

    // A drag that drops where nothing takes it leaves the note where it was.
    const box = (await page.locator("#nowhere").boundingBox())!;
    const note = (await page.locator("#stuck").boundingBox())!;
    const drag = act(h, taskId, { name: "browser_drag", params: { from: { x: note.x + 20, y: note.y + 10 }, to: { x: box.x + 20, y: box.y + 10 } } });
    await expectPartial(drag, /the dragged element did not move, and nothing changed where it was dropped/);
  });
});

describe("what covers an element", () => {
  it("lists the elements under a cookie banner with the banner, and then by index once it is gone", async () => {
    const { taskId, page } = await startTask(h, `${h.a}/covered.html`);
    let result = await index(taskId);
    const banner = '<div id=cookies role=dialog> "We use cookies to remember your cart and measure …"';
    assert.ok(result.text.includes(`(covered by ${banner}) <button>Go to checkout</button>`), result.text);
    assert.ok(result.text.includes(`(covered by ${banner}) <a href="#coupon">Add a coupon</a>`), result.text);
    assert.ok(!result.elements.some((e) => e.text === "Go to checkout"), "no index for what cannot be clicked");
    assert.ok(result.elements.some((e) => e.text === "Help"), "what is not covered is listed as ever");

    await ok(h, taskId, { name: "browser_click", params: { clickId: el(result, "Accept cookies").clickId } });
    await logged(page, "cookies:accepted");
    result = await index(taskId);
    assert.doesNotMatch(result.text, /covered by/);
    await ok(h, taskId, { name: "browser_click", params: { clickId: el(result, "Go to checkout").clickId } });
    await logged(page, "checkout");
  });
});

describe("shadow DOM, iframes, selects, scrolling", () => {
  let taskId: string;
  let page: import("playwright-core").Page;
  before(async () => {
    ({ taskId, page } = await startTask(h, `${h.a}/shadow.html`));
  });

  it("reaches into open shadow roots", async () => {
    const result = await index(taskId);
    const button = el(result, "Shadow button");
    assert.equal(button.xpath, "/html[1]/body[1]/mimo-card[1]/#shadow-root/button[1]");
    const deep = el(result, "Deep link");
    await ok(h, taskId, { name: "browser_click", params: { clickId: button.clickId } });
    await logged(page, "click:shadow-btn:trusted=true");
    await ok(h, taskId, { name: "browser_click", params: { clickId: deep.clickId } });
    await logged(page, "click:deep-link:trusted=true");
    await ok(h, taskId, { name: "browser_type", params: { xpath: button.xpath!.replace("button[1]", "input[1]"), text: "in shadow" } });
    await logged(page, "input:shadow-input=in shadow:trusted=true");
  });

  it("reaches into closed shadow roots too", async () => {
    const result = await index(taskId);
    const pay = el(result, "Pay securely");
    assert.equal(pay.xpath, "/html[1]/body[1]/mimo-vault[1]/#shadow-root/button[1]");
    await ok(h, taskId, { name: "browser_click", params: { clickId: pay.clickId } });
    await logged(page, "click:pay:trusted=true");
  });

  it("indexes same- and cross-origin iframes, nested, with boxes in the page's coordinates, and acts in them", { timeout: 30_000 }, async () => {
    const url = `${h.a}/frames.html?other=${new URL(h.b).port}`;
    await goto(taskId, url);
    page = await pageAt(h, url);
    await page.frameLocator("#cross").frameLocator("iframe").locator("#frame-btn").waitFor();
    const result = await index(taskId);
    const top = el(result, "Top button");
    const same = el(result, "Button in same");
    const cross = el(result, "Button in cross");
    const nested = el(result, "Button in cross-nested");
    assert.equal(top.frameId, 0);
    assert.ok(same.frameId > 0 && cross.frameId > 0 && nested.frameId > 0);
    assert.equal(new Set([same.frameId, cross.frameId, nested.frameId]).size, 3);
    assert.equal(new Set(result.elements.map((e) => e.clickId)).size, result.elements.length, "click ids are unique across frames");
    assert.match(result.text, /<iframe frame=\d+ src="http:\/\/127\.0\.0\.1:\d+\/inner\.html\?name=cross&nest=1">\n\s+\[\d+\]<button>Button in cross<\/button>/);
    // Boxes: where Playwright sees the buttons in the page.
    for (const [e, locator] of [
      [same, page.frameLocator("#same").locator("#frame-btn")],
      [cross, page.frameLocator("#cross").locator("#frame-btn")],
      [nested, page.frameLocator("#cross").frameLocator("iframe").locator("#frame-btn")],
    ] as const) {
      const box = (await locator.boundingBox())!;
      assert.ok(Math.abs(e.bbox!.x - box.x) <= 1 && Math.abs(e.bbox!.y - box.y) <= 1, `${e.text}: ${JSON.stringify(e.bbox)} vs ${JSON.stringify(box)}`);
    }
    await ok(h, taskId, { name: "browser_click", params: { clickId: same.clickId } });
    await logged(page, "click:same:trusted=true");
    await ok(h, taskId, { name: "browser_click", params: { clickId: cross.clickId } });
    await logged(page, "click:cross:trusted=true");
    await ok(h, taskId, { name: "browser_click", params: { clickId: nested.clickId } });
    await logged(page, "click:cross-nested:trusted=true");
    await ok(h, taskId, { name: "browser_type", params: { clickId: el(result, "Frame field").clickId, text: "typed in a frame" } });
    await logged(page, "input:same=typed in a frame:trusted=true");
  });

  it("selects native options by value or label, and custom dropdowns by clicks", async () => {
    await goto(taskId, `${h.a}/select.html`);
    page = await pageAt(h, `${h.a}/select.html`);
    const fruit = "//*[@id='fruit']";
    const { result } = await ok<{ value: string; label: string }>(h, taskId, { name: "browser_select_option", params: { xpath: fruit, option: "banana" } });
    assert.deepEqual(result, { selected: true, value: "banana", label: "Banana" });
    await logged(page, "input:fruit=banana");
    await logged(page, "change:fruit=banana");
    await ok(h, taskId, { name: "browser_select_option", params: { xpath: fruit, option: "Apple" } });
    assert.equal(await page.locator("#fruit").inputValue(), "apple");
    await ok(h, taskId, { name: "browser_select_option", params: { xpath: fruit, option: "  banana " } });
    const missing = await fails(h, taskId, { name: "browser_select_option", params: { xpath: fruit, option: "Durian" } }, "TARGET_NOT_FOUND");
    assert.match(missing.message, /"Apple"/);
    await fails(h, taskId, { name: "browser_select_option", params: { xpath: fruit, option: "cherry" } }, "TARGET_NOT_INTERACTABLE");
    await fails(h, taskId, { name: "browser_select_option", params: { xpath: "//*[@id='locked']", option: "Locked" } }, "TARGET_NOT_INTERACTABLE");
    await fails(h, taskId, { name: "browser_select_option", params: { xpath: "//*[@id='combo']", option: "Red" } }, "TARGET_NOT_INTERACTABLE");

    let index_ = await index(taskId);
    // Two selects with the same options are told apart by their labels, not their options.
    assert.match(index_.text, /\[\d+\]<select label=Fruit name=fruit value=Banana>Choose… \| Apple \| Banana/);
    assert.match(index_.text, /\[\d+\]<select label="Fruit for dessert" name=dessert value="Choose…">Choose… \| Apple \| Banana<\/select>/);
    // Without a <label>: the text before it, in its parent or in the table cell before its own.
    assert.match(index_.text, /\[\d+\]<select label="Delivery speed" name=speed value=Standard>Standard \| Express<\/select>/);
    assert.match(index_.text, /\[\d+\]<select label="Gift wrap" name=wrap value=No>No \| Yes<\/select>/);
    const combo = el(index_, "Pick a colour");
    assert.equal(combo.role, "combobox");
    assert.ok(!index_.elements.some((e) => e.text === "Green"), "the closed list is not indexed");
    await ok(h, taskId, { name: "browser_click", params: { clickId: combo.clickId } });
    index_ = await index(taskId);
    assert.equal(el(index_, "Pick a colour").expanded, true);
    await ok(h, taskId, { name: "browser_click", params: { clickId: el(index_, "Green").clickId } });
    await logged(page, "picked:Green:trusted=true");
  });

  it("scrolls the page and scrollable containers", async () => {
    await goto(taskId, `${h.a}/scroll.html`);
    page = await pageAt(h, `${h.a}/scroll.html`);
    let result = await index(taskId);
    assert.match(result.text, /\[\d+\]<div scrollable: 0px above, \d+px below>\n  \[\d+\]<button>Item 1<\/button>/);
    // The list has an index of its own: scrolling it by that index scrolls the list.
    const list = Number(/\[(\d+)\]<div scrollable/.exec(result.text)![1]);
    const byList = await ok<{ target: string; scrolledY: number }>(h, taskId, { name: "browser_scroll", params: { direction: "down", clickId: list, amount: 40 } });
    assert.deepEqual([byList.result.target, byList.result.scrolledY], ["element", 40]);
    await ok(h, taskId, { name: "browser_scroll", params: { direction: "up", clickId: list, amount: 40 } });
    // The rows scrolled out of the box are out of sight, not covered by what lies under them.
    assert.doesNotMatch(result.text, /covered by|Item 10/);
    const item = el(result, "Item 2");
    const inBox = await ok<{ target: string; scrolledY: number }>(h, taskId, { name: "browser_scroll", params: { direction: "down", clickId: item.clickId, amount: 200 } });
    assert.deepEqual([inBox.result.target, inBox.result.scrolledY], ["element", 200]);
    assert.equal(await page.evaluate(() => document.getElementById("box")!.scrollTop), 200);
    assert.equal(await page.evaluate(() => window.scrollY), 0, "the page stayed");

    const down = await ok<{ target: string; scrolledY: number }>(h, taskId, { name: "browser_scroll", params: { direction: "down" } });
    assert.equal(down.result.target, "page");
    assert.ok(down.result.scrolledY > 300);
    result = await index(taskId);
    assert.ok(result.scrollY > 300);
    const up = await ok(h, taskId, { name: "browser_scroll", params: { direction: "up", amount: 10_000 } });
    assert.deepEqual(up.warnings, []);
    const again = await ok(h, taskId, { name: "browser_scroll", params: { direction: "up" } });
    assert.match(again.warnings.join(), /already at the top/);
  });
});

describe("navigation and waiting", () => {
  let taskId: string;
  let page: import("playwright-core").Page;
  before(async () => {
    ({ taskId, page } = await startTask(h, `${h.a}/buttons.html?nav`));
  });

  it("navigates, goes back, and waits for loads", { timeout: 30_000 }, async () => {
    const nav = await ok<{ url: string; title: string }>(h, taskId, { name: "browser_navigate", params: { url: `${h.a}/page2.html` } });
    assert.deepEqual([nav.result.url, nav.result.title], [`${h.a}/page2.html`, "Page two"]);
    const back = await ok<{ url: string; title: string }>(h, taskId, { name: "browser_back", params: {} });
    assert.equal(back.result.url, `${h.a}/buttons.html?nav`);
    const loaded = await ok<{ status: string }>(h, taskId, { name: "browser_wait_for_loaded", params: {} });
    assert.equal(loaded.result.status, "complete");

    // A page that takes 3 s: waiting 300 ms is a TIMEOUT.
    page = await pageAt(h, `${h.a}/buttons.html?nav`);
    await page.evaluate((u) => setTimeout(() => (location.href = u), 0), `${h.a}/slow?ms=3000`);
    await new Promise((r) => setTimeout(r, 200));
    const timeout = await fails(h, taskId, { name: "browser_wait_for_loaded", params: { timeoutMs: 300 } }, "TIMEOUT");
    assert.match(timeout.message, /300 ms/);
    await ok(h, taskId, { name: "browser_wait_for_loaded", params: { timeoutMs: 10_000 } });
    const history = await act(h, taskId, { name: "browser_dom_index", params: {} });
    assert.equal((history.outcome?.result as DomIndexResult).title, "Slow");
  });

  it("goes forward again, and never sends a form again by going back or forward to its answer", { timeout: 40_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/login.html?history`);
    const posts = () => fixtureRequests.filter((r) => r.path === "/login").length;
    const before = posts();
    // The person's own sign-in: a form's POST, its answer an entry of the tab's history.
    await page.fill("#username", "ada@example.com");
    await page.fill("#password", "correct horse");
    await Promise.all([page.waitForURL(`${h.a}/login`), page.click("#signin")]);
    assert.equal(posts(), before + 1);
    await ok(h, taskId, { name: "browser_navigate", params: { url: `${h.a}/page2.html` } });
    const noFurther = await fails(h, taskId, { name: "browser_forward", params: {} }, "INVALID_TARGET");
    assert.match(noFurther.message, /no page to go forward to/);
    // Back onto the form's answer, back to the form, forward onto the answer, forward again.
    await ok(h, taskId, { name: "browser_back", params: {} });
    const form = await ok<{ url: string }>(h, taskId, { name: "browser_back", params: {} });
    assert.equal(form.result.url, `${h.a}/login.html?history`);
    await ok(h, taskId, { name: "browser_forward", params: {} });
    const last = await ok<{ url: string; title: string }>(h, taskId, { name: "browser_forward", params: {} });
    assert.deepEqual([last.result.url, last.result.title], [`${h.a}/page2.html`, "Page two"]);
    assert.equal(posts(), before + 1, "the form's POST was not sent again");
  });

  it("reloads the page, and never the answer to a form (that could send the form again)", { timeout: 40_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/login.html?reload`);
    await page.evaluate(() => Object.assign(window, { mimoMark: 1 }));
    const reloaded = await ok<{ url: string; title: string }>(h, taskId, { name: "browser_reload", params: {} });
    assert.equal(reloaded.result.url, `${h.a}/login.html?reload`);
    const how = await page.evaluate(() => [(performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming).type, "mimoMark" in window]);
    assert.deepEqual(how, ["reload", false], "a new document, loaded by a reload");
    // The person signs in: the tab's page is now the answer to the form's POST.
    const posts = () => fixtureRequests.filter((r) => r.path === "/login").length;
    await page.fill("#username", "ada@example.com");
    await page.fill("#password", "correct horse");
    await Promise.all([page.waitForURL(`${h.a}/login`), page.click("#signin")]);
    const sent = posts();
    const refusal = await fails(h, taskId, { name: "browser_reload", params: {} }, "INVALID_TARGET");
    assert.match(refusal.message, /answer to a form: reloading it could send the form again/);
    await sleep(300);
    assert.equal(posts(), sent, "the form's POST was not sent again");
    assert.equal(await page.textContent("#who"), "Signed in as ada@example.com", "the answer is still shown");
  });

  it("holds a page-changing action while a page loads, and says NAVIGATION_IN_PROGRESS when it does not finish", { timeout: 40_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/buttons.html?loading`);
    const buy = (await index(taskId)).elements.find((e) => e.text === "Add to cart")!;
    // A page that takes 1.5 s: the click waits for it, then acts on the page that is there.
    await page.evaluate((u) => setTimeout(() => (location.href = u), 0), `${h.a}/slow?ms=1500`);
    await new Promise((r) => setTimeout(r, 200));
    const afterLoad = await act(h, taskId, { name: "browser_click", params: { clickId: buy.clickId } });
    assert.equal(afterLoad.outcome?.error?.code, "TARGET_NOT_FOUND", "the old page's button is gone once the new one loaded");
    // A page that takes 12 s: refused (retryable), retried once after a second, refused again.
    await goto(taskId, `${h.a}/buttons.html?loading2`);
    const again = (await index(taskId)).elements.find((e) => e.text === "Add to cart")!;
    const slow = await pageAt(h, `${h.a}/buttons.html?loading2`);
    await slow.evaluate((u) => setTimeout(() => (location.href = u), 0), `${h.a}/slow?ms=12000`);
    await new Promise((r) => setTimeout(r, 200));
    const refused = await act(h, taskId, { name: "browser_click", params: { clickId: again.clickId } });
    assert.equal(refused.outcome?.error?.code, "NAVIGATION_IN_PROGRESS", JSON.stringify(refused));
    assert.equal(refused.outcome?.error?.retryable, true);
    assert.equal(refused.attempt, 2, "retried once by the server");
    assert.match(refused.outcome!.error!.message, /still loading .*slow\?ms=12000/);
  });

  it("waits for text, a url and a selector on a page that changes after load", { timeout: 30_000 }, async () => {
    await goto(taskId, `${h.a}/mutate.html`);
    page = await pageAt(h, `${h.a}/mutate.html`);
    const text = await ok<{ matched: string; elapsedMs: number }>(h, taskId, { name: "browser_wait_for", params: { text: "Data ready", timeoutMs: 5000 } });
    assert.equal(text.result.matched, "text");
    const selector = await ok<{ matched: string }>(h, taskId, { name: "browser_wait_for", params: { selector: "#late" } });
    assert.equal(selector.result.matched, "selector");
    const url = await ok<{ matched: string }>(h, taskId, { name: "browser_wait_for", params: { url: "mutate.html" } });
    assert.equal(url.result.matched, "url");
    const late = await index(taskId);
    await ok(h, taskId, { name: "browser_click", params: { clickId: el(late, "Late button").clickId } });
    await logged(page, "click:late:trusted=true");
    const never = await fails(h, taskId, { name: "browser_wait_for", params: { text: "never shown", timeoutMs: 400 } }, "TIMEOUT");
    assert.match(never.message, /never shown/);
    await fails(h, taskId, { name: "browser_wait_for", params: { selector: "##bad" } }, "INVALID_TARGET");
    await fails(h, taskId, { name: "browser_wait_for", params: {} }, "SCHEMA_VALIDATION_FAILED");
  });
});

describe("a 10,000-element page", () => {
  it("is indexed, viewport and whole document", { timeout: 60_000 }, async () => {
    const { taskId, tabId, page } = await startTask(h, `${h.a}/big`);
    assert.equal(await page.evaluate(() => document.querySelectorAll("body *").length), 10_001);
    const timings: Record<string, number[]> = { viewport: [], document: [] };
    let whole: DomIndexResult | undefined;
    let warnings: string[] = [];
    for (let i = 0; i < 3; i++) {
      for (const scope of ["viewport", "document"] as const) {
        const started = performance.now();
        const out = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: { scope } }, { partial: true });
        timings[scope]!.push(performance.now() - started);
        if (scope === "document") ({ result: whole, warnings } = out);
      }
    }
    // In the extension alone (no server, socket or storage): the worker and the content script.
    const worker = await serviceWorker(h);
    const inExtension: Record<string, number[]> = { viewport: [], document: [] };
    for (let i = 0; i < 3; i++) {
      for (const scope of ["viewport", "document"] as const) {
        inExtension[scope]!.push(
          await worker.evaluate(async ({ taskId, tabId, scope }) => {
            const hooks = (globalThis as unknown as { __mimoTest: { execute(a: unknown): Promise<unknown> } }).__mimoTest;
            const started = performance.now();
            await hooks.execute({ actionId: "timing", attempt: 1, taskId, clientId: "timing", tabId, name: "browser_dom_index", params: { scope } });
            return performance.now() - started;
          }, { taskId, tabId, scope }),
        );
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
    console.log(
      `DOM index of 10,000 elements: in the extension, viewport scope ${median(inExtension.viewport!).toFixed(0)} ms, document scope ${median(inExtension.document!).toFixed(0)} ms; ` +
        `through the server, viewport scope ${median(timings.viewport!).toFixed(0)} ms, document scope ${median(timings.document!).toFixed(0)} ms ` +
        `(medians of 3; ${whole!.elements.length} elements returned${warnings.length ? `; ${warnings.join("; ")}` : ""})`,
    );
    // The speed itself is measured by `make bench` (tests/bench/extension.ts), not asserted here.
    assert.ok(whole!.elements.length >= 2000, "the document scope reaches far down the page");
  });

  it("goes out whole as an artifact when the document scope does not fit in one message", { timeout: 60_000 }, async () => {
    // Its own address: the test before left a tab open on the same page.
    const { taskId } = await startTask(h, `${h.a}/big?whole`);
    const { result, warnings } = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: { scope: "document" } });
    assert.equal(result.truncated, true);
    assert.ok(result.artifactId, `an artifact id: ${JSON.stringify(warnings)}`);
    assert.ok(result.elements.length < 6000, "the message holds only part of the index");
    assert.match(warnings.join("; "), new RegExp(`whole index is in artifact ${result.artifactId}`));
    const res = await downloadArtifact(h, result.artifactId);
    assert.equal(res.status, 200);
    // Stored gzip-compressed (a tenth of the JSON's size), and saved as such.
    assert.equal(res.headers.get("content-type"), "application/gzip");
    assert.match(res.headers.get("content-disposition") ?? "", /^attachment; filename=".*\.json\.gz"$/);
    const packed = new Uint8Array(await res.arrayBuffer());
    const stored = JSON.parse(gunzipSync(packed).toString("utf8")) as DomIndexResult;
    assert.ok(packed.byteLength * 4 < JSON.stringify(stored).length, `compressed: ${packed.byteLength} bytes`);
    // 2,000 rows of a button, a link and an input: every one, with its click id, xpath and text line.
    assert.equal(stored.elements.length, 6000);
    assert.equal(stored.artifactId, undefined, "the artifact is the whole index itself");
    assert.deepEqual(stored.elements.map((e) => e.clickId), Array.from({ length: 6000 }, (_, i) => i + 1));
    assert.ok(stored.elements.every((e) => e.xpath !== undefined));
    for (const i of [0, 1234, 1999]) {
      const button = el(stored, `Buy ${i}`);
      assert.equal(button.tag, "button");
      assert.match(stored.text, new RegExp(`\\[${button.clickId}\\]<button[^>]*>Buy ${i}</button>`));
    }
    assert.deepEqual(stored.elements.slice(0, result.elements.length).map((e) => e.clickId), result.elements.map((e) => e.clickId), "the message holds the first elements");
    // The click ids of the whole index work, including ones only the artifact lists.
    const last = el(stored, "Buy 1999");
    await ok(h, taskId, { name: "browser_click", params: { clickId: last.clickId } });
    assert.equal(await (await pageAt(h, `${h.a}/big?whole`)).locator("#b1999").innerText(), "Added 1999", "the click reached the last row");
  });
});

describe("several tabs per task", () => {
  it("a link's new tab and window.open join the task, which goes on there; switch, open and close its tabs", { timeout: 60_000 }, async () => {
    const { taskId, tabId: first } = await startTask(h, `${h.a}/shipments.html`);
    let list = await index(taskId);
    const link = el(list, "Delivery note 1057");
    const clicked = await ok(h, taskId, { name: "browser_click", params: { clickId: link.clickId } });
    const second = clicked.record.outcome!.tabId!;
    assert.ok(second !== undefined && second !== first, JSON.stringify(clicked.record.outcome));
    assert.match(clicked.warnings.join(" "), new RegExp(`opened a new tab \\(tab_id ${second}: .*note\\.html\\?order=1057\\).*switch_tab ${first} goes back`));

    // What follows acts in the new tab: the server sends it there.
    await ok(h, taskId, { name: "browser_wait_for_loaded", params: {} });
    list = await index(taskId);
    assert.match(list.url, /note\.html\?order=1057$/);
    assert.deepEqual(list.tabs.map((t) => [t.tabId, t.current]), [[first, false], [second, true]]);
    assert.equal(list.tabs[0]!.title, "Shipments");
    const group = await h.options.evaluate((ids) => Promise.all(ids.map((id) => chrome.tabs.get(id).then((t) => t.groupId))), [first, second]);
    assert.equal(group[0], group[1], "in the task's tab group");

    // A click id of another tab's list is refused, never clicked in the wrong page.
    const stale = await act(h, taskId, { name: "browser_click", params: { clickId: link.clickId } }, { tabId: first });
    assert.equal(stale.outcome?.error?.code, "TARGET_NOT_FOUND", JSON.stringify(stale));

    const back = await ok<{ tabId: number }>(h, taskId, { name: "browser_switch_tab", params: { tabId: first } });
    assert.equal(back.record.outcome!.tabId, first);
    list = await index(taskId);
    assert.match(list.url, /shipments\.html$/);
    // window.open from a button joins it too.
    await ok(h, taskId, { name: "browser_click", params: { clickId: el(list, "Track parcel 1057").clickId } });
    await ok(h, taskId, { name: "browser_wait_for_loaded", params: {} });
    list = await index(taskId);
    assert.match(list.url, /tracking$/);
    assert.equal(list.tabs.length, 3);

    // Closing the current tab goes on in the newest other; the last tab stays.
    const closed = await ok<{ tabId: number }>(h, taskId, { name: "browser_close_tab", params: {} });
    assert.equal(closed.result.tabId, second);
    const opened = await ok<{ tabId: number }>(h, taskId, { name: "browser_open_tab", params: { url: `${h.a}/page2.html?tab` } });
    assert.doesNotMatch(opened.warnings.join(" "), /the page opened a new tab/, "opened by the task, not by the page");
    list = await index(taskId);
    assert.equal(list.title, "Page two");
    assert.equal(list.tabs.find((t) => t.current)?.tabId, opened.result.tabId);
    await ok(h, taskId, { name: "browser_close_tab", params: { tabId: second } });
    await ok(h, taskId, { name: "browser_close_tab", params: {} });
    const last = await fails(h, taskId, { name: "browser_close_tab", params: {} }, "INVALID_TASK_TAB");
    assert.match(last.message, /last tab/);
    list = await index(taskId);
    assert.equal(list.tabs.length, 0, "one tab: nothing to list");
    assert.match(list.url, /shipments\.html$/);
  });
  it("a tab the person opens from the task's tab is theirs: it never joins the task, and no step acts in it", { timeout: 60_000 }, async () => {
    const start = `${h.a}/shipments.html?person`;
    const { taskId, tabId: first, page } = await startTask(h, start);
    // Between the task's steps the person opens a link in a new tab (Ctrl+click), and presses a
    // button of the page that opens one (window.open on their own click).
    await page.click("text=Delivery note 1041", { modifiers: ["Control"] });
    await page.click("#track");
    const theirs = [`${h.a}/note.html?order=1041`, `${h.a}/note.html?order=1057&tracking`];
    for (const url of theirs) await (await pageAt(h, url)).waitForLoadState("load");
    const ids = await h.options.evaluate(
      async (urls) => (await chrome.tabs.query({})).filter((t) => urls.includes(t.url ?? "")).map((t) => t.id!),
      theirs,
    );
    assert.equal(ids.length, 2, JSON.stringify(ids));

    // A step that changes nothing looks for a tab its page opened late: not one of theirs.
    await ok(h, taskId, { name: "browser_press_key", params: { key: "Escape" } }, { partial: true });
    let list = await index(taskId);
    assert.equal(list.url, start, "the task is still in its own tab");
    assert.equal(list.tabs.length, 0, `one tab of the task: ${JSON.stringify(list.tabs)}`);
    for (const tabId of ids) {
      const refusedSwitch = await fails(h, taskId, { name: "browser_switch_tab", params: { tabId } }, "INVALID_TASK_TAB");
      assert.match(refusedSwitch.message, /not one of the task's tabs/);
      await fails(h, taskId, { name: "browser_dom_index", params: {} }, "INVALID_TASK_TAB", { tabId });
    }

    // The task's own click opens a tab, which joins the task as before: its tab, hidden behind
    // the one the person opened in its window, is shown first (hidden, the click opens nothing).
    const clicked = await ok(h, taskId, { name: "browser_click", params: { clickId: el(list, "Delivery note 1041").clickId } });
    const joined = clicked.record.outcome!.tabId!;
    assert.ok(joined !== first && !ids.includes(joined), `${joined} is the step's new tab`);
    await ok(h, taskId, { name: "browser_wait_for_loaded", params: {} });
    list = await index(taskId);
    assert.deepEqual(list.tabs.map((t) => t.tabId).sort(), [first, joined].sort());
  });
});

describe("long pages", () => {
  it("scroll_to brings a row 4,000 lines down a list into view in one step", { timeout: 30_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/orders.html`);
    const found = await ok<{ matches: number; snippet: string; loads: number }>(h, taskId, { name: "browser_scroll_to", params: { text: "order 3990" } });
    assert.deepEqual([found.result.matches, found.result.loads], [1, 0]);
    assert.match(found.result.snippet, /^Order 3990 Open$/);
    const list = await index(taskId);
    const row = list.text.split("\n").find((line) => line.includes("Order 3990"));
    assert.ok(row === undefined || !row.includes("covered"), list.text);
    // The row's own button is listed, in view in its list, and clicks the right order.
    const lines = list.text.split("\n");
    assert.match(list.text, /<div scrollable: \d+px above, \d+px below>/);
    const open = list.elements.filter((e) => e.text === "Open");
    assert.ok(open.length > 0 && open.length < 20, `only the rows in view: ${lines.length} lines`);
    const scrollTop = await page.evaluate(() => document.getElementById("orders")!.scrollTop);
    assert.ok(scrollTop > 90_000, `the list scrolled: ${scrollTop}`);
    const middle = open[Math.floor(open.length / 2)]!;
    await ok(h, taskId, { name: "browser_click", params: { clickId: middle.clickId } });
    const clicked = (await pageLog(page)).at(-1) ?? "";
    assert.match(clicked, /^open:39(8\d|9\d):trusted=true$/, clicked);
  });

  it("scroll_to loads more of a feed until the text appears, and says when it is not there", { timeout: 60_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/feed.html`);
    const found = await ok<{ loads: number }>(h, taskId, { name: "browser_scroll_to", params: { text: "comment number 87" } });
    assert.ok(found.result.loads >= 3, JSON.stringify(found.result));
    assert.match(found.warnings.join(), /loaded more \d+ times/);
    const list = await index(taskId);
    await ok(h, taskId, { name: "browser_click", params: { clickId: el(list, "Reply to 87").clickId } });
    await logged(page, "Reply to 87:trusted=true");

    const missing = await fails(h, taskId, { name: "browser_scroll_to", params: { text: "comment number 187" } }, "TARGET_NOT_FOUND");
    assert.match(missing.message, /no "comment number 187" on the page, after scrolling to its end \d+ times/);
    // All loaded and scrolled to its end: the element list says that a feed may load more there.
    await ok(h, taskId, { name: "browser_scroll", params: { direction: "down", amount: 100_000 } });
    assert.match((await index(taskId)).text.split("\n")[0]!, /0px below; at its end \(a feed loads more when scrolled down\)/);
  });

  it("scroll_to scrolls back and down again when a feed's end stays in view after it loaded more", { timeout: 60_000 }, async () => {
    // Two comments a load: the feed's end is still in view after each, so its observer is only
    // told again once the end leaves the view and comes back, as when a person scrolls.
    const { taskId } = await startTask(h, `${h.a}/feed.html?batch=2&preload=400`);
    const found = await ok<{ loads: number; snippet: string }>(h, taskId, { name: "browser_scroll_to", params: { text: "comment number 30" } });
    assert.ok(found.result.loads >= 5, JSON.stringify(found.result));
    assert.match(found.result.snippet, /comment number 30\b/);
  });
});

describe("where the element list has nothing", () => {
  it("clicks and points at a control drawn on a canvas, by coordinates, and says what is there", { timeout: 30_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/board.html`);
    const hovered = await ok<{ element: string }>(h, taskId, { name: "browser_hover_at", params: { x: 170, y: 95 } });
    assert.match(hovered.result.element, /^<canvas id=game>/);
    assert.equal(await page.locator("#game").getAttribute("title"), "hovering Play");
    const clicked = await ok<{ element: string }>(h, taskId, { name: "browser_click_at", params: { x: 170, y: 95 } });
    assert.match(clicked.result.element, /^<canvas id=game>/);
    await logged(page, "canvas:play:trusted=true");
    const outside = await fails(h, taskId, { name: "browser_click_at", params: { x: 5000, y: 95 } }, "INVALID_TARGET");
    assert.match(outside.message, /outside the viewport of \d+x\d+/);
  });

  it("drags a card to another column (HTML5) and a slider's knob (pointer events) with trusted input", { timeout: 30_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/board.html?drag`);
    let list = await index(taskId);
    const card = list.elements.find((e) => e.text === "Write the report");
    assert.ok(card, list.text);
    assert.match(list.text, /\[\d+\]<div draggable>Write the report<\/div>/);
    // The columns accept drops (only their listeners say so): listed, so an index names them.
    assert.match(list.text, /\[\d+\]<div dropzone>Done<\/div>/);
    assert.match(list.text, /\[\d+\]<div dropzone>To do ?Write the report<\/div>\n  \[\d+\]<div draggable>Write the report<\/div>/);
    assert.ok(!/<canvas[^>]*dropzone|<ul[^>]*dropzone/.test(list.text), "nothing else is a drop zone");
    const done = list.elements.find((e) => e.text === "Done")!;
    const html5 = await ok<{ kind: string }>(h, taskId, { name: "browser_drag", params: { from: { clickId: card.clickId }, to: { clickId: done.clickId } } });
    assert.equal(html5.result.kind, "html5");
    await logged(page, "dropped:card-1:done");
    assert.equal(await page.locator("#done #card-1").count(), 1);
    // And back to "To do", named by a point inside it (as a vision model would).
    list = await index(taskId);
    const moved = list.elements.find((e) => e.text === "Write the report")!;
    await ok(h, taskId, { name: "browser_drag", params: { from: { clickId: moved.clickId }, to: { x: 120, y: 300 } } });
    await logged(page, "dropped:card-1:todo");

    const pointer = await ok<{ kind: string }>(h, taskId, { name: "browser_drag", params: { from: { x: 35, y: 430 }, to: { x: 235, y: 430 } } });
    assert.equal(pointer.result.kind, "pointer");
    await logged(page, "knob:200");
    await fails(h, taskId, { name: "browser_drag", params: { from: { x: 35 }, to: { x: 1, y: 1 } } }, "INVALID_TARGET");
  });

  it("looks for drop zones only while something can be dragged, and sees the page change between indexes", { timeout: 30_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/board.html?drag&again`);
    assert.match((await index(taskId)).text, /\[\d+\]<div dropzone>Done<\/div>/);
    // Nothing to drag any more: no search, and the marks of the last one are gone with it.
    await page.locator("#card-1").evaluate((card) => card.removeAttribute("draggable"));
    const without = await index(taskId);
    assert.ok(!/dropzone/.test(without.text), without.text);
    assert.equal(await page.locator("[data-mimo-dropzone]").count(), 0);
    // Draggable again: searched again, the columns are drop zones again.
    await page.locator("#card-1").evaluate((card) => card.setAttribute("draggable", "true"));
    const again = await index(taskId);
    assert.match(again.text, /\[\d+\]<div dropzone>Done<\/div>/);
    assert.match(again.text, /\[\d+\]<div draggable>Write the report<\/div>/);
  });
});

describe("a list sorted by dragging", () => {
  it("lists items that only a grab cursor and pointer listeners make draggable, and reorders them by index", { timeout: 30_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/sortable.html`);
    const list = await index(taskId);
    for (const item of ["Answer email", "Book flights", "Call the bank", "Do the taxes"]) assert.match(list.text, new RegExp(`\\[\\d+\\]<li draggable>${item}</li>`), list.text);
    const from = el(list, "Answer email");
    const to = el(list, "Do the taxes");
    const dragged = await ok<{ kind: string }>(h, taskId, { name: "browser_drag", params: { from: { clickId: from.clickId }, to: { clickId: to.clickId } } });
    assert.equal(dragged.result.kind, "pointer");
    await logged(page, "order:bcad");
  });
});

describe("a menu that opens on hover", () => {
  it("lists what reveals a CSS hover menu, hovers it by index, and then reaches the menu", { timeout: 30_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/menu.html`);
    let list = await index(taskId);
    assert.match(list.text, /\[\d+\]<li hover-menu>Account<\/li>/);
    assert.ok(!list.text.includes("Sign out"), "the menu is closed");
    assert.ok(!list.text.includes("hover-menu>Products"), "a rule that reveals nothing is not a menu");
    await ok(h, taskId, { name: "browser_hover", params: { clickId: el(list, "Account").clickId } });
    list = await index(taskId);
    await ok(h, taskId, { name: "browser_click", params: { clickId: el(list, "Sign out").clickId } });
    await logged(page, "signout:trusted=true");
  });
});

describe("the person's own tabs", () => {
  it("reads one of them without touching it, and never Mimo's own pages", { timeout: 30_000 }, async () => {
    const own = await h.context.newPage();
    await own.goto(`${h.a}/article.html?own`);
    const tabs = await h.options.evaluate(() => chrome.tabs.query({}).then((all) => all.map((t) => ({ id: t.id!, url: t.url ?? "" }))));
    const tabId = tabs.find((t) => t.url.endsWith("/article.html?own"))!.id;
    const taskId = await newTask(h.mimo);
    const read = await ok<{ title: string; text: string; url: string }>(h, taskId, { name: "browser_read_tab", params: { tabId } });
    assert.equal(read.result.url, `${h.a}/article.html?own`);
    assert.ok(read.result.text.length > 100, read.result.text);
    const stored = await extensionStorage<{ tasks?: Record<string, unknown> }>(h, ["tasks"]);
    assert.equal(stored.tasks?.[taskId], undefined, "reading opened no tab for the task");

    const optionsTab = tabs.find((t) => t.url.startsWith("chrome-extension://"))!.id;
    await fails(h, taskId, { name: "browser_read_tab", params: { tabId: optionsTab } }, "PERMISSION_DENIED");
    await fails(h, taskId, { name: "browser_read_tab", params: { tabId: 999_999 } }, "TARGET_NOT_FOUND");
    await own.close();
  });
});

describe("controls whose options come later", () => {
  it("types into a combobox, waits for its suggestions, picks one, and shows a switch's state", { timeout: 30_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/combobox.html`);
    let list = await index(taskId);
    assert.match(list.text, /<input role=switch type=checkbox unchecked> Express delivery|<input role=switch type=checkbox unchecked>/);
    const city = list.elements.find((e) => e.role === "combobox");
    assert.ok(city, list.text);
    await ok(h, taskId, { name: "browser_type", params: { clickId: city.clickId, text: "Li" } });
    await ok(h, taskId, { name: "browser_wait_for", params: { text: "Limoges", timeoutMs: 5_000 } });
    list = await index(taskId);
    assert.match(list.text, /role=combobox[^\n]*expanded=true/);
    await ok(h, taskId, { name: "browser_click", params: { clickId: el(list, "Limoges").clickId } });
    await logged(page, "city:Limoges:trusted=true");
    await ok(h, taskId, { name: "browser_click", params: { clickId: el(list, "Express delivery").clickId } });
    list = await index(taskId);
    assert.match(list.text, /role=switch type=checkbox checked/);
  });
});

describe("the domain policy", () => {
  it("refuses a blocked domain before going there, and every action once a redirect lands there, naming the rule", { timeout: 30_000 }, async () => {
    const taskId = await newTask(h.mimo);
    const blocked = new URL(h.b).host;
    // The person blocks the site for the task; a caller's own rules in its task_start count for
    // nothing (an open policy sent here does not open the site).
    const web = await WebClient.connect(h.mimo, taskId);
    web.send({ type: "set_domains", allowed: [], blocked: [blocked] });
    await web.waitFor((e) => e.type === "taskDomains", "the task's sites stored");
    await web.close();
    const open = { allowed: [], blocked: [] };
    await ok(h, taskId, { name: "task_start", params: { url: `${h.a}/buttons.html?policy`, domains: open, taskDomains: open } });
    // Refused by the server before anything is sent.
    const direct = await refused(h, taskId, { name: "browser_navigate", params: { url: `${h.b}/page2.html` } }, "PERMISSION_DENIED");
    assert.match(direct.message, new RegExp(`rule "${blocked}" of this task's blocked sites`));
    // Allowed where it starts, the redirect lands on the blocked domain: nothing runs there.
    await ok(h, taskId, { name: "browser_navigate", params: { url: `${h.a}/redirect?to=${encodeURIComponent(`${h.b}/page2.html`)}` } });
    const after = await fails(h, taskId, { name: "browser_dom_index", params: {} }, "PERMISSION_DENIED");
    assert.match(after.message, /page2\.html is on a blocked domain/);
    await fails(h, taskId, { name: "browser_screenshot", params: {} }, "PERMISSION_DENIED");
    // Leaving is allowed.
    await ok(h, taskId, { name: "browser_back", params: {} });
    await ok(h, taskId, { name: "browser_dom_index", params: {} });
  });
});


describe("targets without an index", () => {
  let taskId: string;
  let page: import("playwright-core").Page;
  before(async () => {
    ({ taskId, page } = await startTask(h, `${h.a}/targets.html`));
  });

  it("clicks by label, by role and label, and by selector, in shadow roots too", { timeout: 30_000 }, async () => {
    // An exact label wins over partial ones ("Save draft", a paragraph), a control over plain text.
    await ok(h, taskId, { name: "browser_click", params: { label: "  save " } });
    await logged(page, "click:save:trusted=true");
    await ok(h, taskId, { name: "browser_click", params: { label: "Subscribe" } });
    await logged(page, "click:subscribe:trusted=true");
    await ok(h, taskId, { name: "browser_click", params: { role: "button", label: "save draft" } });
    await logged(page, "click:save-draft:trusted=true");
    await ok(h, taskId, { name: "browser_click", params: { role: "link", label: "Delete" } });
    await logged(page, "click:delete-link:trusted=true");
    // An ARIA label, plain text, a selector, and a label inside an open shadow root.
    await ok(h, taskId, { name: "browser_click", params: { label: "continue" } });
    await logged(page, "click:go:trusted=true");
    await ok(h, taskId, { name: "browser_click", params: { label: "only plain text" } });
    await logged(page, "click:card:trusted=true");
    await ok(h, taskId, { name: "browser_click", params: { selector: "#shadow-action" } });
    await ok(h, taskId, { name: "browser_click", params: { label: "Shadow action" } });
    const shadowClicks = (await pageLog(page)).filter((l) => l === "click:shadow-action:trusted=true");
    assert.equal(shadowClicks.length, 2, "both reached the button in the shadow root");
  });

  it("types into a field found by its label or placeholder, and selects in a combobox by role", { timeout: 30_000 }, async () => {
    await ok(h, taskId, { name: "browser_type", params: { label: "Email address", text: "ada@example.com" } });
    await logged(page, "input:email=ada@example.com");
    await ok(h, taskId, { name: "browser_type", params: { role: "textbox", label: "city", text: "Lyon" } });
    await logged(page, "input:city=Lyon");
    const { result } = await ok<{ value: string }>(h, taskId, { name: "browser_select_option", params: { role: "combobox", label: "Country", option: "Germany" } });
    assert.equal(result.value, "de");
    await logged(page, "change:country=de");
  });

  it("refuses to guess between equal matches, naming them, and finds nothing hidden", { timeout: 30_000 }, async () => {
    const before = (await pageLog(page)).length;
    const both = await fails(h, taskId, { name: "browser_click", params: { label: "Delete" } }, "INVALID_TARGET");
    assert.match(both.message, /^2 elements fit label "Delete" equally well: <a> "Delete" \(link\), <button> "Delete" \(button\)\. Name one more precisely/);
    const buttons = await fails(h, taskId, { name: "browser_click", params: { role: "button" } }, "INVALID_TARGET");
    assert.match(buttons.message, /^6 elements fit role button equally well: <button> "Save" \(button\), .*, and 1 more\./);

    // Hidden (display: none, visibility: hidden) is not there for a person, so not for a label either.
    const hidden = await fails(h, taskId, { name: "browser_click", params: { label: "Delete everything" } }, "TARGET_NOT_FOUND");
    assert.equal(hidden.message, 'no visible element fits label "Delete everything"');
    await fails(h, taskId, { name: "browser_click", params: { role: "button", label: "Erase all" } }, "TARGET_NOT_FOUND");
    await fails(h, taskId, { name: "browser_click", params: { role: "slider" } }, "TARGET_NOT_FOUND");
    const missing = await fails(h, taskId, { name: "browser_click", params: { selector: "#nothing" } }, "TARGET_NOT_FOUND");
    assert.match(missing.message, /selector #nothing/);
    await fails(h, taskId, { name: "browser_click", params: { selector: "button[" } }, "INVALID_TARGET");
    // Found, but disabled: said so, not "not found".
    const disabled = await fails(h, taskId, { name: "browser_click", params: { label: "Pay now" } }, "TARGET_NOT_INTERACTABLE");
    assert.match(disabled.message, /disabled/);

    // Exactly one way.
    const two = await fails(h, taskId, { name: "browser_click", params: { selector: "#save", label: "Save" } }, "INVALID_TARGET");
    assert.match(two.message, /exactly one way: clickId, xpath, selector, label, or role .*; this target gives selector and label$/);
    await fails(h, taskId, { name: "browser_type", params: { clickId: 1, role: "textbox", text: "x" } }, "INVALID_TARGET");
    await fails(h, taskId, { name: "browser_click", params: { label: " " } }, "INVALID_TARGET");
    assert.equal((await pageLog(page)).length, before, "nothing was clicked");
  });
});
