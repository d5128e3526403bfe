import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { ExtensionMessage, TabEvent } from "../../protocol/ts/protocol.ts";
import { BrowserSync } from "../src/sync.ts";
import { chromeTab, FakeBrowser } from "./fake-browser.ts";

let browser: FakeBrowser;
let frames: ExtensionMessage[];
let failures: string[];
let sync: BrowserSync;

beforeEach(() => {
  browser = new FakeBrowser();
  browser.windows = [{ id: 1, focused: true, type: "normal" }];
  browser.tabs = [chromeTab(10, 1, 0, { active: true }), chromeTab(11, 1, 1), chromeTab(12, 1, 2)];
  frames = [];
  failures = [];
  sync = new BrowserSync(browser, {
    send: (frame) => frames.push(JSON.parse(frame) as ExtensionMessage),
    failed: (message) => failures.push(message),
  });
});

/** The tab events sent since the full sync, in order. */
function events(): TabEvent[] {
  return frames.flatMap((f) => (f.type === "tab_event" ? [f.event] : []));
}

/** Tab events as compact strings: `+12@1` (upserted at index 1), `-12`, `*12` (activated)… */
function summary(): string[] {
  return events().map((e) => {
    switch (e.kind) {
      case "tab_upserted":
        return `+${e.tab.tabId}@${e.tab.index}`;
      case "tab_removed":
        return `-${e.tabId}`;
      case "tab_activated":
        return `*${e.tabId}`;
      default:
        return e.kind;
    }
  });
}

async function started(): Promise<void> {
  sync.start();
  await sync.settled();
  frames = frames.filter((f) => f.type !== "full_state_sync");
}

describe("browser sync", () => {
  it("sends nothing before a connection is welcomed, then the full browser first", async () => {
    sync.tabUpdated(browser.update(11, { title: "Early" }));
    await sync.settled();
    assert.equal(frames.length, 0);

    sync.start();
    sync.tabUpdated(browser.update(12, { title: "Right after" }));
    await sync.settled();
    assert.equal(frames[0]?.type, "full_state_sync");
    const first = frames[0];
    assert.ok(first.type === "full_state_sync");
    assert.deepEqual(
      first.snapshot.tabs.map((t) => [t.tabId, t.title]),
      [
        [10, "Tab 10"],
        [11, "Early"],
        [12, "Right after"],
      ],
    );
    assert.equal(first.snapshot.activeTabId, 10);
    // The later event carried nothing the full sync had not already said.
    assert.equal(frames.length, 1);
  });

  it("sends a tab when something the snapshot holds changed, and only then", async () => {
    await started();
    sync.tabUpdated(browser.update(11, { title: "Renamed", status: "loading" }));
    sync.tabUpdated(browser.update(11, {})); // a favicon change: nothing the server keeps
    sync.tabUpdated(browser.update(11, { status: "complete" }));
    await sync.settled();
    assert.deepEqual(
      events().map((e) => (e.kind === "tab_upserted" ? [e.tab.title, e.tab.status] : e.kind)),
      [
        ["Renamed", "loading"],
        ["Renamed", "complete"],
      ],
    );
  });

  it("a new tab comes with its shifted neighbours", async () => {
    await started();
    sync.tabCreated(browser.insert(chromeTab(13, 1, 1)));
    await sync.settled();
    assert.deepEqual(summary(), ["+13@1", "+11@2", "+12@3"]);
    const created = events()[0];
    assert.ok(created?.kind === "tab_upserted");
    assert.deepEqual(created.tab, { tabId: 13, windowId: 1, index: 1, url: "http://127.0.0.1/13", title: "Tab 13", status: "complete", active: false });
  });

  it("a new active tab is sent first, and the tab it deactivates is not sent at all", async () => {
    await started();
    browser.update(10, { active: false });
    sync.tabCreated(browser.insert(chromeTab(13, 1, 3, { active: true })));
    await sync.settled();
    // The server deactivates tab 10 when it learns tab 13 is active; nothing else changed.
    assert.deepEqual(summary(), ["+13@3"]);
  });

  it("a closed tab is removed and its neighbours shift back; a closing window sends only removals", async () => {
    await started();
    browser.remove(10);
    sync.tabRemoved(10, 1, false);
    await sync.settled();
    assert.deepEqual(summary(), ["-10", "+11@0", "+12@1"]);

    frames = [];
    browser.tabs = [];
    sync.tabRemoved(11, 1, true);
    sync.tabRemoved(12, 1, true);
    sync.windowRemoved(1);
    await sync.settled();
    assert.deepEqual(summary(), ["-11", "-12", "window_removed"]);
    assert.equal(browser.reads, 2, "no window reads for a closing window");
  });

  it("a moved, detached or attached tab updates the positions in its windows", async () => {
    browser.windows.push({ id: 2, focused: false, type: "normal" });
    browser.tabs.push(chromeTab(20, 2, 0, { active: true }));
    await started();
    // Tab 12 moves to the front of window 1.
    browser.update(12, { index: 0 });
    browser.update(10, { index: 1 });
    browser.update(11, { index: 2 });
    sync.tabMoved(1);
    await sync.settled();
    // Window order, except that the active tab (10) goes first.
    assert.deepEqual(summary(), ["+10@1", "+12@0", "+11@2"]);

    // Tab 10 goes to window 2, after tab 20.
    frames = [];
    browser.update(10, { windowId: 2, index: 1 });
    browser.update(12, { index: 0 });
    browser.update(11, { index: 1 });
    sync.tabMoved(1); // onDetached: old window
    sync.tabMoved(2); // onAttached: new window
    await sync.settled();
    assert.deepEqual(summary(), ["+11@1", "+10@1"]);
    const attached = events()[1];
    assert.ok(attached?.kind === "tab_upserted" && attached.tab.windowId === 2);
  });

  it("activation is one event, and the tab it deactivates is not resent", async () => {
    await started();
    browser.update(10, { active: false });
    browser.update(12, { active: true });
    sync.tabActivated(12, 1);
    sync.tabMoved(1);
    await sync.settled();
    assert.deepEqual(events(), [{ kind: "tab_activated", tabId: 12, windowId: 1 }]);
  });

  it("a replaced tab is removed and its replacement sent", async () => {
    await started();
    browser.remove(11);
    browser.insert(chromeTab(99, 1, 1, { title: "Prerendered" }));
    sync.tabReplaced(99, 11);
    await sync.settled();
    assert.deepEqual(summary(), ["-11", "+99@1"]);
  });

  it("windows and groups: created, focused, changed, removed", async () => {
    await started();
    sync.windowCreated({ id: 2, focused: true, type: "popup" });
    sync.windowFocused(-1);
    sync.windowFocused(1);
    sync.groupChanged({ id: 5, windowId: 1, title: "Task", color: "blue", collapsed: false });
    browser.update(11, { groupId: 5 });
    sync.tabUpdated(browser.update(12, { groupId: 5 }));
    sync.tabUpdated({ ...browser.tabs.find((t) => t.id === 11)! });
    sync.groupRemoved(5);
    // Chrome then reports the tabs ungrouped, which the server already concluded.
    sync.tabUpdated(browser.update(11, { groupId: -1 }));
    sync.tabUpdated(browser.update(12, { groupId: -1 }));
    await sync.settled();
    assert.deepEqual(events(), [
      { kind: "window_upserted", window: { windowId: 2, focused: true, kind: "popup" } },
      { kind: "window_focused", windowId: null },
      { kind: "window_focused", windowId: 1 },
      { kind: "group_upserted", group: { groupId: 5, windowId: 1, title: "Task", color: "blue", collapsed: false } },
      { kind: "tab_upserted", tab: { tabId: 12, windowId: 1, index: 2, url: "http://127.0.0.1/12", title: "Tab 12", status: "complete", active: false, groupId: 5 } },
      { kind: "tab_upserted", tab: { tabId: 11, windowId: 1, index: 1, url: "http://127.0.0.1/11", title: "Tab 11", status: "complete", active: false, groupId: 5 } },
      { kind: "group_removed", groupId: 5 },
    ]);
  });

  it("keeps Chrome's order even when reads are slow", async () => {
    await started();
    browser.readDelayMs = 20;
    sync.tabCreated(browser.insert(chromeTab(13, 1, 3)));
    await new Promise((resolve) => setTimeout(resolve, 5)); // the window read is under way
    browser.remove(13);
    sync.tabRemoved(13, 1, false);
    sync.tabUpdated(browser.update(10, { title: "After" }));
    await sync.settled();
    // The window read for the creation answers after the removal happened, with the tab still
    // in it: handled in Chrome's order, the removal still comes after it.
    assert.deepEqual(summary(), ["+13@3", "-13", "+10@0"]);
  });

  it("drops work for a connection that is gone; the next one starts with a full sync", async () => {
    await started();
    browser.readDelayMs = 20;
    sync.tabCreated(browser.insert(chromeTab(13, 1, 3)));
    sync.stop();
    sync.tabUpdated(browser.update(10, { title: "While offline" }));
    await sync.settled();
    assert.equal(frames.length, 0);

    sync.start();
    await sync.settled();
    assert.equal(frames.length, 1);
    const full = frames[0];
    assert.ok(full?.type === "full_state_sync");
    assert.deepEqual(
      full.snapshot.tabs.map((t) => [t.tabId, t.title]),
      [
        [10, "While offline"],
        [11, "Tab 11"],
        [12, "Tab 12"],
        [13, "Tab 13"],
      ],
    );
  });

  it("reports a browser it cannot read, and sends no events on top of a stale snapshot", async () => {
    browser.state = async () => {
      throw new Error("no windows API");
    };
    sync.start();
    sync.tabUpdated(browser.update(10, { title: "x" }));
    await sync.settled();
    assert.equal(frames.length, 0);
    assert.equal(failures.length, 1);
    assert.match(failures[0] ?? "", /no windows API/);
  });
});
