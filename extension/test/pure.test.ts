import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import type { DomIndexResult, ObserveResult } from "../../protocol/ts/protocol.ts";
import { checkDomains, checkUrl, domainRefusal, siteNotAllowed, siteOf, sitePattern, taskTabFor } from "../src/guard.ts";
import { handBack, joinTab, leaveTab, tabsOf } from "../src/tasks.ts";
import type { TaskRecord } from "../src/tasks.ts";
import { imageSize } from "../src/image.ts";
import { coveredLine, elementLine, fitIndex, moreCoveredLine, pageLine, scrollableLine, utf8Length } from "../src/index-text.ts";
import { parseKey } from "../src/keys.ts";
import { fitReadable } from "../src/observation.ts";
import { effectBetween } from "../src/effects.ts";
import type { TabLook } from "../src/effects.ts";
import type { FrameState } from "../src/frame-protocol.ts";
import { fromExtensionPage } from "../src/messages.ts";
import { actionLabel, overlayFor } from "../src/overlay-state.ts";
import { ActionError, errorOutcome } from "../src/results.ts";
import { isSensitiveField, SECRET_PLACEHOLDER, shownValue } from "../src/secrets.ts";
import { tabInfo } from "../src/snapshot.ts";
import { NewTabs } from "../src/task-tabs.ts";

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ActionError);
    return error.code;
  }
  return "none";
}

describe("the tab guard", () => {
  const server = "http://127.0.0.1:8787";
  it("allows web pages and about:blank", () => {
    assert.equal(code(() => checkUrl("https://shop.example/cart", server)), "none");
    assert.equal(code(() => checkUrl("about:blank", server)), "none");
  });
  it("refuses the server's origin, other origins of the web app, browser pages and non-URLs", () => {
    assert.equal(code(() => checkUrl("http://127.0.0.1:8787/task/x", server)), "PERMISSION_DENIED");
    assert.equal(code(() => checkUrl("https://app.mimo.example/", server, ["https://app.mimo.example"])), "PERMISSION_DENIED");
    assert.equal(code(() => checkUrl("http://127.0.0.1:9999/", server)), "none", "another port is another origin");
    for (const url of ["chrome://settings", "chrome-extension://abc/options.html", "file:///etc/passwd", "javascript:alert(1)"]) {
      assert.equal(code(() => checkUrl(url, server)), "PERMISSION_DENIED", url);
    }
    assert.equal(code(() => checkUrl("not a url", server)), "SCHEMA_VALIDATION_FAILED");
  });
  it("names a page's site (its origin, port included) for the site access", () => {
    assert.equal(siteOf("https://shop.example/cart?x=1#top"), "https://shop.example");
    assert.equal(siteOf("http://127.0.0.1:9999/a"), "http://127.0.0.1:9999");
    for (const url of ["about:blank", "chrome://settings", "file:///etc/passwd", "not a url", ""]) assert.equal(siteOf(url), null, url);
    assert.equal(sitePattern("http://127.0.0.1:9999"), "http://127.0.0.1:9999/*");
    const refusal = siteNotAllowed("https://shop.example");
    assert.equal(refusal.code, "PERMISSION_DENIED");
    assert.equal(refusal.retryable, false);
    assert.match(refusal.message, /side panel.*"Allow Mimo on https:\/\/shop\.example"/);
    // The site goes to the server with the refusal (a run waits for it), also once the message
    // is rewritten (secrets taken out) and as an outcome.
    const rewritten = refusal.withMessage("redacted");
    assert.equal(rewritten.waitsForSite, "https://shop.example");
    assert.equal(rewritten.message, "redacted");
    const outcome = errorOutcome({ actionId: "a", attempt: 1, taskId: "t" }, rewritten);
    assert.equal(outcome.waitsForSite, "https://shop.example");
    assert.equal(errorOutcome({ actionId: "a", attempt: 1, taskId: "t" }, new ActionError("PERMISSION_DENIED", "blocked")).waitsForSite, undefined);
    assert.equal(overlayFor("waiting_permission"), "hidden");
  });
  it("judges a domain policy by the server's rules", () => {
    const policy = { allowed: ["shop.example", "127.0.0.1:8080"], blocked: ["pay.shop.example"] };
    assert.equal(domainRefusal(policy, "https://shop.example/cart"), null);
    assert.equal(domainRefusal(policy, "https://www.shop.example:8443/a?b#c"), null);
    assert.equal(domainRefusal(policy, "http://127.0.0.1:8080/x"), null);
    assert.match(domainRefusal(policy, "https://pay.shop.example/checkout")!, /"pay\.shop\.example" of MIMO_BLOCKED_DOMAINS/);
    for (const url of ["https://evil.example/", "https://notshop.example/", "http://127.0.0.1:9090/", "https://shop.example.evil.test/"]) {
      assert.match(domainRefusal(policy, url) ?? "", /not on an allowed domain/, url);
    }
    assert.equal(domainRefusal(policy, "about:blank"), null);
    assert.equal(domainRefusal(undefined, "https://any.test/"), null);
    assert.match(domainRefusal({ allowed: [], blocked: ["*.ads.test"] }, "https://x.ads.test/") ?? "", /blocked/);
    assert.equal(code(() => checkDomains({ domains: { allowed: [], blocked: ["evil.test"] } }, "https://evil.test/")), "PERMISSION_DENIED");
    // A task's own rules are kept as well as the deployment's, and named as the task's.
    const both = { domains: { allowed: [], blocked: ["evil.test"] }, taskDomains: { allowed: ["shop.example"], blocked: [] } };
    assert.equal(code(() => checkDomains(both, "https://evil.test/")), "PERMISSION_DENIED");
    assert.throws(() => checkDomains(both, "https://other.example/"), /this task's allowed sites: shop\.example/);
    checkDomains(both, "https://www.shop.example/");
  });

  it("reads every spelling of a host as the server does (the shared table)", () => {
    const table = JSON.parse(readFileSync(new URL("../../protocol/tests/fixtures/domain-rules.json", import.meta.url), "utf8")) as {
      cases: Array<{ allowed?: string[]; blocked?: string[]; url: string; refused: boolean }>;
    };
    assert.ok(table.cases.length >= 30);
    for (const c of table.cases) {
      const policy = { allowed: c.allowed ?? [], blocked: c.blocked ?? [] };
      assert.equal(domainRefusal(policy, c.url) !== null, c.refused, `${JSON.stringify(c.url)} under ${JSON.stringify(policy)}`);
    }
  });

  it("only lets an action run in its task's tab", () => {
    assert.equal(taskTabFor({ tabId: 7 }, undefined, "t"), 7);
    assert.equal(taskTabFor({ tabId: 7 }, 7, "t"), 7);
    assert.equal(code(() => taskTabFor({ tabId: 7 }, 8, "t")), "INVALID_TASK_TAB");
    assert.equal(code(() => taskTabFor(undefined, 7, "t")), "INVALID_TASK_TAB");
    // A task with several tabs: any of them when asked for, else the current one.
    assert.equal(taskTabFor({ tabId: 9, tabs: [7, 9] }, 7, "t"), 7);
    assert.equal(taskTabFor({ tabId: 9, tabs: [7, 9] }, undefined, "t"), 9);
    assert.equal(code(() => taskTabFor({ tabId: 9, tabs: [7, 9] }, 8, "t")), "INVALID_TASK_TAB");
  });

  it("lets a tab the task's page opened join it, and goes on in the newest other when one closes", () => {
    const task: TaskRecord = { taskId: "t", tabId: 7, windowId: 1, startedAt: 0, overlay: "ongoing" };
    joinTab(task, 9, 1);
    assert.deepEqual([task.tabId, tabsOf(task)], [9, [7, 9]]);
    joinTab(task, 11, 2);
    assert.deepEqual([task.tabId, task.windowId, tabsOf(task)], [11, 2, [7, 9, 11]]);
    leaveTab(task, 9);
    assert.deepEqual([task.tabId, tabsOf(task)], [11, [7, 11]], "another tab closing changes nothing else");
    leaveTab(task, 11);
    assert.deepEqual([task.tabId, tabsOf(task)], [7, [7]]);
    assert.equal(task.tabClosed, undefined);
    leaveTab(task, 7);
    assert.equal(task.tabClosed, true);
  });

  it("hands the person's tabs back when the task ends, keeping its own", () => {
    const task: TaskRecord = { taskId: "t", tabId: 50, windowId: 1, startedAt: 0, overlay: "ongoing", tabs: [7, 50], adopted: [50] };
    assert.deepEqual(handBack(task), [50]);
    assert.deepEqual([task.tabId, tabsOf(task), task.adopted], [7, [7], undefined]);
    const only: TaskRecord = { taskId: "u", tabId: 50, windowId: 1, startedAt: 0, overlay: "ongoing", adopted: [50] };
    assert.deepEqual(handBack(only), [50]);
    assert.equal(only.tabClosed, true, "the task has no tab of its own left");
    assert.deepEqual(handBack(only), [], "once");
  });
});

describe("keys", () => {
  it("reads names, characters and combinations", () => {
    assert.deepEqual(parseKey("Enter"), { key: "Enter", code: "Enter", keyCode: 13, modifiers: 0, text: "\r" });
    assert.deepEqual(parseKey("escape"), { key: "Escape", code: "Escape", keyCode: 27, modifiers: 0 });
    assert.deepEqual(parseKey("a"), { key: "a", code: "KeyA", keyCode: 65, modifiers: 0, text: "a" });
    assert.deepEqual(parseKey("ctrl+a"), { key: "a", code: "KeyA", keyCode: 65, modifiers: 2 });
    assert.deepEqual(parseKey("Shift+b"), { key: "B", code: "KeyB", keyCode: 66, modifiers: 8, text: "B" });
    assert.deepEqual(parseKey("F5"), { key: "F5", code: "F5", keyCode: 116, modifiers: 0 });
    assert.equal(parseKey("+").key, "+");
    assert.equal(code(() => parseKey("hyper+q")), "SCHEMA_VALIDATION_FAILED");
    assert.equal(code(() => parseKey("NotAKey")), "SCHEMA_VALIDATION_FAILED");
  });
});

describe("secrets", () => {
  const field = (tag: string, attrs: Record<string, string>) => ({ tagName: tag.toUpperCase(), getAttribute: (n: string) => attrs[n] ?? null });
  it("knows password fields, card and password autocomplete, and data-sensitive", () => {
    assert.ok(isSensitiveField(field("input", { type: "password" })));
    assert.ok(isSensitiveField(field("input", { type: "PASSWORD" })));
    assert.ok(isSensitiveField(field("input", { autocomplete: "cc-number" })));
    assert.ok(isSensitiveField(field("input", { autocomplete: "section-pay billing cc-csc" })));
    assert.ok(isSensitiveField(field("input", { autocomplete: "new-password" })));
    assert.ok(isSensitiveField(field("input", { autocomplete: "one-time-code" })));
    assert.ok(isSensitiveField(field("div", { "data-sensitive": "" })));
    assert.ok(!isSensitiveField(field("input", { "data-sensitive": "false" })));
    assert.ok(!isSensitiveField(field("input", { type: "email", autocomplete: "email" })));
    assert.equal(shownValue(field("input", { type: "password" }), "hunter2"), SECRET_PLACEHOLDER);
    assert.equal(shownValue(field("input", { type: "password" }), ""), "");
    assert.equal(shownValue(field("input", { type: "text" }), "hello"), "hello");
  });
});

describe("the index text", () => {
  it("writes one line per element", () => {
    assert.equal(elementLine({ clickId: 12, tag: "button", text: "Add to cart" }), "[12]<button>Add to cart</button>");
    assert.equal(elementLine({ clickId: 3, tag: "input", type: "email", placeholder: "Your email", value: "a@b.c" }), '[3]<input type=email placeholder="Your email" value="a@b.c">');
    assert.equal(elementLine({ clickId: 4, tag: "div", role: "checkbox", text: "Agree", checked: true, disabled: true }), "[4]<div role=checkbox checked disabled>Agree</div>");
    assert.equal(elementLine({ clickId: 8, tag: "button", role: "switch", text: "Dark mode", checked: false }), "[8]<button role=switch unchecked>Dark mode</button>");
    assert.equal(elementLine({ clickId: 5, tag: "a", href: "/cart", text: "Cart", expanded: false }), "[5]<a href=/cart expanded=false>Cart</a>");
    assert.equal(elementLine({ clickId: 9, tag: "div", text: "Write the report", draggable: true }), "[9]<div draggable>Write the report</div>");
    assert.equal(elementLine({ clickId: 10, tag: "div", text: "Done", dropzone: true }), "[10]<div dropzone>Done</div>");
    assert.equal(
      elementLine({ clickId: 6, tag: "select", label: "Shipping country", name: "ship", value: "France", text: "France | Spain" }),
      '[6]<select label="Shipping country" name=ship value=France>France | Spain</select>',
    );
    assert.equal(
      coveredLine('<div id=cookies role=dialog> "We use cookies"', { clickId: 7, tag: "button", text: "Pay" }),
      '(covered by <div id=cookies role=dialog> "We use cookies") <button>Pay</button>',
      "no index: it cannot be used until the cover is gone",
    );
    assert.equal(moreCoveredLine(12, "<div class=backdrop>"), "(… 12 more elements covered by <div class=backdrop>)");
    assert.equal(scrollableLine("div", 0, 900, 0, 0), "<div scrollable: 0px above, 900px below>");
    assert.equal(
      pageLine({ url: "https://x/", title: "X", scrollX: 0, scrollY: 100, width: 1280, height: 3000, vw: 1280, vh: 700 }),
      'page https://x/ "X": scrolled to 0,100 of 1280x3000, viewport 1280x700, 2200px below',
    );
    assert.equal(
      pageLine({ url: "https://x/", title: "X", scrollX: 0, scrollY: 2300, width: 1280, height: 3000, vw: 1280, vh: 700 }),
      'page https://x/ "X": scrolled to 0,2300 of 1280x3000, viewport 1280x700, 0px below; at its end (a feed loads more when scrolled down)',
    );
    assert.doesNotMatch(pageLine({ url: "https://x/", title: "X", scrollX: 0, scrollY: 0, width: 1280, height: 700, vw: 1280, vh: 700 }), /at its end/, "a page that does not scroll");
  });

  function big(n: number): DomIndexResult {
    const elements = Array.from({ length: n }, (_, i) => ({ clickId: i + 1, tag: "button", text: `Buy ${i}`, xpath: `/html[1]/body[1]/div[${i + 1}]/button[1]`, frameId: 0, bbox: { x: 1, y: i * 20, w: 50, h: 18 } }));
    const text = ["page …", ...elements.map((e) => `  [${e.clickId}]<button>${e.text}</button>`)].join("\n");
    return { elements, text, url: "https://x/", title: "X", scrollX: 0, scrollY: 0, tabs: [] };
  }

  it("counts UTF-8 bytes as an encoder writes them", () => {
    // ASCII, two-byte, three-byte, a surrogate pair (four bytes), lone surrogates (U+FFFD, three).
    for (const s of ["", "Buy 1", "café", "€ 5", "日本語", "a😀b", "\ud83d", "x\ude00y", "\ud83d\ud83d\ude00", "😀\ud83d"]) {
      assert.equal(utf8Length(s), new TextEncoder().encode(s).length, JSON.stringify(s));
    }
  });

  it("keeps an index that fits as it is", () => {
    const r = big(10);
    assert.deepEqual(fitIndex(r, 100_000, false), { result: r });
  });

  it("drops xpaths first, then cuts elements and their lines to fit", () => {
    const r = big(2000);
    const size = JSON.stringify(r).length;
    const noXpath = fitIndex(r, size - 10, false);
    assert.equal(noXpath.result.elements.length, 2000);
    assert.equal(noXpath.result.elements[0]!.xpath, undefined);
    assert.match(noXpath.warning!, /xpaths/);
    // Measured without encoding it again: exactly the size of the index without its xpaths.
    const slim = JSON.stringify(noXpath.result).length;
    assert.equal(fitIndex(r, slim, false, size).result.elements.length, 2000);
    assert.ok(fitIndex(r, slim - 1, false, size).result.elements.length < 2000);

    const cut = fitIndex(r, 50_000, false);
    assert.ok(JSON.stringify(cut.result).length <= 50_000);
    const n = cut.result.elements.length;
    assert.ok(n > 100 && n < 2000);
    assert.match(cut.result.text, new RegExp(`\\[${n}\\]<button>Buy ${n - 1}</button>\\n… ${2000 - n} more elements left out`));
    assert.ok(!cut.result.text.includes(`[${n + 1}]`));
    assert.match(cut.warning!, new RegExp(`first ${n} of 2000`));

    const scan = fitIndex(r, 50_000, true);
    assert.ok(scan.result.elements.every((e) => e.xpath !== undefined), "an xpath scan keeps its xpaths");
  });
});

describe("an observation in one message", () => {
  const observation = (kb: number, indexKb: number): ObserveResult => ({
    screenshot: { result: { artifactId: "art_shot", url: "https://r2/x", width: 1280, height: 720 }, partial: false, warnings: [] },
    readability: { result: { artifactId: "art_text", text: "t".repeat(kb * 1024), markdown: "m".repeat(kb * 1024), contentLengthBytes: kb * 1024, truncated: false }, partial: false, warnings: [] },
    domIndex: { result: { elements: [], text: "i".repeat(indexKb * 1024), url: "https://x/", title: "X", scrollX: 0, scrollY: 0, tabs: [] }, partial: false, warnings: [] },
  });
  const size = (r: ObserveResult) => Buffer.byteLength(JSON.stringify(r));

  it("keeps all of it when it fits", () => {
    const r = observation(100, 100);
    fitReadable(r, 512 * 1024);
    assert.equal(r.readability.result?.markdown?.length, 100 * 1024);
    assert.deepEqual(r.readability.warnings, []);
  });

  it("leaves the markdown in its artifact first, then the text, saying so, until it fits", () => {
    const r = observation(200, 150);
    fitReadable(r, 512 * 1024);
    assert.equal(r.readability.result?.markdown, undefined);
    assert.equal(r.readability.result?.text?.length, 200 * 1024, "the text stays");
    assert.match(r.readability.warnings.join(), /markdown is only in the artifact/);
    assert.ok(size(r) <= 512 * 1024);

    const tight = observation(200, 400);
    fitReadable(tight, 512 * 1024);
    assert.equal(tight.readability.result?.text, undefined);
    assert.equal(tight.readability.result?.truncated, true);
    assert.equal(tight.readability.result?.artifactId, "art_text", "the whole text is still in its artifact");
    assert.equal(tight.readability.warnings.length, 2);
    assert.ok(size(tight) <= 512 * 1024);
    assert.equal(tight.domIndex.result?.text.length, 400 * 1024, "the element list is not cut here");
  });
});

describe("images", () => {
  it("reads the size of a PNG and a JPEG", () => {
    const png = Buffer.alloc(24);
    png.writeUInt32BE(0x89504e47, 0);
    png.writeUInt32BE(0x49484452, 12);
    png.writeUInt32BE(1280, 16);
    png.writeUInt32BE(720, 20);
    assert.deepEqual(imageSize(png), { width: 1280, height: 720 });
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0, 0, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x02, 0xd0, 0x05, 0x00, 0x03, 0, 0, 0, 0]);
    assert.deepEqual(imageSize(jpeg), { width: 1280, height: 720 });
    assert.equal(imageSize(Buffer.from("GIF89a")), undefined);
  });
});

describe("the overlay", () => {
  it("follows the task's status", () => {
    assert.equal(overlayFor("running"), "ongoing");
    assert.equal(overlayFor("takeover"), "takeover");
    assert.equal(overlayFor("ongoing"), "hidden");
    assert.equal(overlayFor("waiting_confirmation"), "waiting");
    assert.equal(overlayFor("paused"), "paused");
    assert.equal(overlayFor("created"), "hidden");
    for (const s of ["completed", "error", "canceled"] as const) assert.equal(overlayFor(s), "idle");
  });
  it("says what Mimo does", () => {
    const base = { actionId: "a", attempt: 1, taskId: "t", clientId: "c" };
    assert.equal(actionLabel({ ...base, name: "browser_click", params: { clickId: 12 } }), "clicking [12]");
    assert.equal(actionLabel({ ...base, name: "browser_wait_for", params: { text: "Done" } }), "waiting for Done");
    assert.equal(actionLabel({ ...base, name: "browser_dom_index", params: {} }), "reading the page");
  });
  it("fills every kind of label slot as the labels written per action did", () => {
    const base = { actionId: "a", attempt: 1, taskId: "t", clientId: "c" };
    const long = "x".repeat(60);
    assert.equal(actionLabel({ ...base, name: "task_start", params: {} }), "starting");
    assert.equal(actionLabel({ ...base, name: "browser_type", params: { xpath: "//input[1]", text: "mug" } }), "typing into //input[1]");
    assert.equal(actionLabel({ ...base, name: "browser_hover", params: {} }), "pointing at the page");
    assert.equal(actionLabel({ ...base, name: "browser_click", params: { selector: "#save" } }), "clicking #save");
    assert.equal(actionLabel({ ...base, name: "browser_click", params: { label: "Save" } }), 'clicking "Save"');
    assert.equal(actionLabel({ ...base, name: "browser_type", params: { role: "textbox", label: "Email", text: "a" } }), 'typing into textbox "Email"');
    assert.equal(actionLabel({ ...base, name: "browser_hover", params: { role: "menuitem" } }), "pointing at a menuitem");
    assert.equal(actionLabel({ ...base, name: "browser_scroll", params: { direction: "down" } }), "scrolling down");
    assert.equal(actionLabel({ ...base, name: "browser_navigate", params: { url: `http://a/${long}` } }), `opening http://a/${"x".repeat(30)}…`);
    assert.equal(actionLabel({ ...base, name: "browser_select_option", params: { clickId: 3, option: "Blue" } }), 'choosing "Blue"');
    assert.equal(actionLabel({ ...base, name: "browser_select_option", params: { clickId: 3, option: long } }), `choosing "${"x".repeat(38)}…`);
    assert.equal(actionLabel({ ...base, name: "browser_press_key", params: { key: "Control+a" } }), "pressing Control+a");
    assert.equal(actionLabel({ ...base, name: "browser_wait_for", params: { url: "/cart", selector: "#done" } }), "waiting for #done");
    assert.equal(actionLabel({ ...base, name: "browser_wait_for", params: {} }), "waiting for the page");
  });
});

describe("the snapshot", () => {
  it("leaves out a tab without an index (between windows, or closing)", () => {
    const tab = { id: 4, windowId: 1, index: -1, url: "https://x/", title: "X", status: "complete" as const, active: false, groupId: -1 };
    assert.equal(tabInfo(tab), null);
    assert.equal(tabInfo({ ...tab, index: 0 })?.index, 0);
  });
});

describe("who may speak for the person", () => {
  const id = "abcdefghijklmnopabcdefghijklmnop";
  it("is the extension's own pages: the side panel, the options page (even in a tab)", () => {
    assert.ok(fromExtensionPage({ id, url: `chrome-extension://${id}/side_panel.html` }, id));
    assert.ok(fromExtensionPage({ id, url: `chrome-extension://${id}/options.html#x` }, id));
  });
  it("is never a content script (its url is the page's), another extension, or no url", () => {
    assert.ok(!fromExtensionPage({ id, url: "https://shop.example/cart" }, id));
    assert.ok(!fromExtensionPage({ id, url: `https://shop.example/chrome-extension://${id}/` }, id));
    assert.ok(!fromExtensionPage({ id: "other", url: `chrome-extension://other/side_panel.html` }, id));
    assert.ok(!fromExtensionPage({ id, url: `chrome-extension://other/side_panel.html` }, id));
    assert.ok(!fromExtensionPage({ id }, id));
    assert.ok(!fromExtensionPage({ id, url: "not a url" }, id));
  });
});

describe("a step's effect between two looks at its tab", () => {
  type Look = Exclude<TabLook, "closed">;
  const frame = (parent: number, effects: string[] = [], expects?: FrameState["expects"], doc = "d"): { parent: number; state: FrameState } => ({
    parent,
    state: { doc, url: "http://a/", title: "A", effects, ...(expects !== undefined ? { expects } : {}) },
  });
  const look = (frames: Array<[number, ReturnType<typeof frame>]>): Look => ({ url: "http://a/|", status: "complete", title: "A", frames: new Map(frames) });
  // The top frame (0) holds a widget's frame (1) and an ad's frame (2); the widget holds 3.
  const before = look([[0, frame(-1)], [1, frame(0)], [2, frame(0)], [3, frame(1)]]);

  it("counts what changed anywhere while nothing is known of what the step acts on", () => {
    assert.equal(effectBetween(before, look([[0, frame(-1)], [1, frame(0)], [2, frame(0, ["content"])], [3, frame(1)]])), true);
    assert.equal(effectBetween(before, before), false);
  });

  it("once a frame knows, counts it and the frames around it, not the frames beside it", () => {
    const inWidget = (ad: string[], top: string[], own: string[]) => look([[0, frame(-1, top)], [1, frame(0)], [2, frame(0, ad)], [3, frame(1, own, "button")]]);
    assert.equal(effectBetween(before, inWidget(["content"], [], [])), false, "the ad's frame changed: not the step's doing");
    assert.equal(effectBetween(before, inWidget([], ["content"], [])), true, "the page around the widget showed its effect");
    assert.equal(effectBetween(before, inWidget([], [], ["state"])), true);
    const reloaded = look([[0, frame(-1)], [1, frame(0)], [2, frame(0)], [3, { ...frame(1, [], "button"), state: { ...frame(1).state, expects: "button", doc: "new" } }]]);
    assert.equal(effectBetween(before, reloaded), true, "a new document in the widget's frame");
    const adAdded = look([[0, frame(-1)], [1, frame(0)], [2, frame(0)], [3, frame(1, [], "toggle")], [4, frame(0, ["content"])]]);
    assert.equal(effectBetween(before, adAdded), false, "a frame added beside it is not its effect");
  });

  it("counts a navigation, a load or a new title of the tab whatever the step acts on", () => {
    const known = look([[0, frame(-1, [], "toggle")], [1, frame(0)], [2, frame(0)], [3, frame(1)]]);
    assert.equal(effectBetween(before, known), false);
    assert.equal(effectBetween(before, { ...known, status: "loading" }), true);
    assert.equal(effectBetween(before, { ...known, url: "http://a/#x|" }), true);
    assert.equal(effectBetween(before, "closed"), true);
  });
});

describe("tabs a step opens", () => {
  it("a tab opened from a task's tab is the step's only while a step acts there, or just after", () => {
    const tabs = new NewTabs();
    let now = 1_000;
    assert.equal(tabs.openedByStep(7, now), false, "no step has acted in tab 7");
    const ended = tabs.acting(7, () => now);
    const other = tabs.acting(7, () => now);
    assert.equal(tabs.openedByStep(7, now), true);
    assert.equal(tabs.openedByStep(8, now), false, "another tab");
    now += 60_000;
    ended();
    assert.equal(tabs.openedByStep(7, now + 10_000), true, "a step still acts there");
    other();
    assert.equal(tabs.openedByStep(7, now + 2_000), true, "Chrome tells of a step's tab a moment late");
    assert.equal(tabs.openedByStep(7, now + 2_001), false, "the person's, after the steps ended");
    assert.equal(tabs.openedByStep(7, now + 2_000), false, "forgotten once over");
  });
});
