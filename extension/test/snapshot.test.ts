import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_EXTENSION_FRAME_BYTES } from "../../protocol/ts/protocol.ts";
import type { ExtensionMessage } from "../../protocol/ts/protocol.ts";
import { buildSnapshot, COMPACT_TEXT_LIMITS, focusedWindowId, frameBytes, fullSyncFrame, groupInfo, tabInfo, TEXT_LIMITS, windowInfo } from "../src/snapshot.ts";
import { chromeTab } from "./fake-browser.ts";

describe("tab, window and group info", () => {
  it("maps a Chrome tab to the protocol's tab", () => {
    assert.deepEqual(tabInfo(chromeTab(7, 1, 2, { active: true, status: "loading" })), {
      tabId: 7,
      windowId: 1,
      index: 2,
      url: "http://127.0.0.1/7",
      title: "Tab 7",
      status: "loading",
      active: true,
    });
  });

  it("keeps a real group id and drops TAB_GROUP_ID_NONE", () => {
    assert.equal(tabInfo(chromeTab(7, 1, 0, { groupId: 12 }))?.groupId, 12);
    assert.equal("groupId" in (tabInfo(chromeTab(7, 1, 0, { groupId: -1 })) ?? {}), false);
  });

  it("skips tabs without an id and falls back to the pending URL and empty texts", () => {
    assert.equal(tabInfo(chromeTab(7, 1, 0, { id: undefined })), null);
    assert.equal(tabInfo(chromeTab(-1, 1, 0)), null);
    const fresh = tabInfo({ id: 8, windowId: 1, index: 0, active: false, groupId: -1, pendingUrl: "http://127.0.0.1/next" });
    assert.deepEqual(fresh, { tabId: 8, windowId: 1, index: 0, url: "http://127.0.0.1/next", title: "", status: "complete", active: false });
  });

  it("clamps huge URLs and titles", () => {
    const huge = tabInfo(chromeTab(7, 1, 0, { url: `data:text/plain,${"x".repeat(5_000_000)}`, title: "t".repeat(10_000) }));
    assert.ok(huge !== null);
    assert.equal(huge.url.length, TEXT_LIMITS.url);
    assert.ok(huge.url.startsWith("data:text/plain,xxx") && huge.url.endsWith("…"));
    assert.equal(huge.title.length, TEXT_LIMITS.title);
    const compact = tabInfo(chromeTab(7, 1, 0, { url: `http://x/${"y".repeat(1000)}` }), COMPACT_TEXT_LIMITS);
    assert.equal(compact?.url.length, COMPACT_TEXT_LIMITS.url);
  });

  it("maps windows and groups; WINDOW_ID_NONE means no focused window", () => {
    assert.deepEqual(windowInfo({ id: 3, focused: true, type: "normal" }), { windowId: 3, focused: true, kind: "normal" });
    assert.deepEqual(windowInfo({ id: 3, focused: false }), { windowId: 3, focused: false });
    assert.equal(windowInfo({ id: undefined, focused: false }), null);
    assert.deepEqual(groupInfo({ id: 5, windowId: 3, title: "Work", color: "blue", collapsed: false }), {
      groupId: 5,
      windowId: 3,
      title: "Work",
      color: "blue",
      collapsed: false,
    });
    assert.equal(groupInfo({ id: 5, windowId: 3, color: "red", collapsed: true }).title, "");
    assert.equal(focusedWindowId(-1), null);
    assert.equal(focusedWindowId(3), 3);
  });
});

describe("full snapshot", () => {
  const windows = [
    { id: 2, focused: false, type: "normal" as const, tabs: [chromeTab(21, 2, 1, { active: true }), chromeTab(20, 2, 0)] },
    { id: 1, focused: true, type: "normal" as const, tabs: [chromeTab(10, 1, 0), chromeTab(11, 1, 1, { active: true, groupId: 5 })] },
  ];
  const groups = [{ id: 5, windowId: 1, title: "Task", color: "green" as const, collapsed: false }];

  it("lists windows, tabs in window order, groups, and the focused window's active tab", () => {
    const snapshot = buildSnapshot({ windows, groups });
    assert.deepEqual(snapshot.windows, [
      { windowId: 2, focused: false, kind: "normal" },
      { windowId: 1, focused: true, kind: "normal" },
    ]);
    assert.deepEqual(
      snapshot.tabs.map((t) => [t.windowId, t.index, t.tabId]),
      [
        [1, 0, 10],
        [1, 1, 11],
        [2, 0, 20],
        [2, 1, 21],
      ],
    );
    assert.equal(snapshot.tabs[1]?.groupId, 5);
    assert.deepEqual(snapshot.groups, [{ groupId: 5, windowId: 1, title: "Task", color: "green", collapsed: false }]);
    assert.equal(snapshot.activeTabId, 11);
  });

  it("with no window focused, takes the window focused last; with none known, no active tab", () => {
    const unfocused = windows.map((w) => ({ ...w, focused: false }));
    assert.equal(buildSnapshot({ windows: unfocused, groups, lastFocusedWindowId: 2 }).activeTabId, 21);
    assert.equal("activeTabId" in buildSnapshot({ windows: unfocused, groups }), false);
    assert.deepEqual(buildSnapshot({ windows: [], groups: [] }), { windows: [], tabs: [], groups: [] });
  });

  it("builds the full_state_sync frame, compacting it when the usual limits do not fit", () => {
    const small = fullSyncFrame({ windows, groups });
    assert.ok(small !== null);
    assert.deepEqual(JSON.parse(small.frame) as ExtensionMessage, { type: "full_state_sync", snapshot: small.snapshot });

    // 600 tabs with URLs at the usual limit: ~1.2 MB, too much; compacted they fit.
    const many = Array.from({ length: 600 }, (_, i) => chromeTab(i + 1, 1, i, { url: `http://127.0.0.1/${"p".repeat(3000)}` }));
    const big = fullSyncFrame({ windows: [{ id: 1, focused: true, tabs: many }], groups: [] });
    assert.ok(big !== null);
    assert.ok(frameBytes(big.frame) <= MAX_EXTENSION_FRAME_BYTES);
    assert.equal(big.snapshot.tabs.length, 600);
    assert.equal(big.snapshot.tabs[0]?.url.length, COMPACT_TEXT_LIMITS.url);

    const absurd = Array.from({ length: 5000 }, (_, i) => chromeTab(i + 1, 1, i, { url: `http://127.0.0.1/${"p".repeat(3000)}` }));
    assert.equal(fullSyncFrame({ windows: [{ id: 1, focused: true, tabs: absurd }], groups: [] }), null);
  });

  it("measures frames in UTF-8 bytes, as the server does", () => {
    assert.equal(frameBytes("abc"), 3);
    assert.equal(frameBytes("é"), 2);
    assert.equal(frameBytes("标签"), 6);
  });
});
