// Turns Chrome's windows, tabs and tab groups into the protocol's snapshot types. Pure: it takes
// plain objects shaped like Chrome's, so it is tested without a browser.
import { MAX_EXTENSION_FRAME_BYTES } from "../../protocol/ts/protocol.ts";
import type { BridgeInfo, BrowserSnapshot, ExtensionMessage, TabGroupInfo, TabInfo, WindowInfo } from "../../protocol/ts/protocol.ts";

export type ChromeTab = Pick<chrome.tabs.Tab, "id" | "windowId" | "index" | "url" | "pendingUrl" | "title" | "status" | "active" | "groupId">;
export type ChromeWindow = Pick<chrome.windows.Window, "id" | "focused" | "type"> & { tabs?: ChromeTab[] };
export type ChromeGroup = Pick<chrome.tabGroups.TabGroup, "id" | "windowId" | "title" | "color" | "collapsed">;

/** Chrome's "none" for window ids (`WINDOW_ID_NONE`), group ids (`TAB_GROUP_ID_NONE`) and tab ids (`TAB_ID_NONE`). */
const CHROME_ID_NONE = -1;

/** How long URLs and titles may get in a frame (a `data:` URL can be megabytes). */
export type TextLimits = { url: number; title: number };
export const TEXT_LIMITS: TextLimits = { url: 2048, title: 512 };
/** Tighter limits for a browser with so many tabs that the full sync would not fit in a frame. */
export const COMPACT_TEXT_LIMITS: TextLimits = { url: 256, title: 128 };

function clamp(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function isId(id: number | undefined): id is number {
  return id !== undefined && id !== CHROME_ID_NONE;
}

/** A tab as the protocol describes it, or null for tabs Chrome gives no id (devtools, apps). */
export function tabInfo(tab: ChromeTab, limits: TextLimits = TEXT_LIMITS): TabInfo | null {
  // A tab on its way between windows, or closing, has no index (-1): a later event covers it.
  if (!isId(tab.id) || tab.index < 0) return null;
  const info: TabInfo = {
    tabId: tab.id,
    windowId: tab.windowId,
    index: tab.index,
    // A tab that has not committed its first navigation has only a pending URL.
    url: clamp(tab.url || tab.pendingUrl || "", limits.url),
    title: clamp(tab.title ?? "", limits.title),
    status: tab.status ?? "complete",
    active: tab.active,
  };
  if (isId(tab.groupId)) info.groupId = tab.groupId;
  return info;
}

export function windowInfo(window: ChromeWindow): WindowInfo | null {
  if (!isId(window.id)) return null;
  const info: WindowInfo = { windowId: window.id, focused: window.focused };
  if (window.type !== undefined) info.kind = window.type;
  return info;
}

export function groupInfo(group: ChromeGroup): TabGroupInfo {
  return { groupId: group.id, windowId: group.windowId, title: group.title ?? "", color: group.color, collapsed: group.collapsed };
}

/** `windows.onFocusChanged` reports `WINDOW_ID_NONE` when no Chrome window has the focus. */
export function focusedWindowId(windowId: number): number | null {
  return isId(windowId) ? windowId : null;
}

/** What `buildSnapshot` reads from Chrome. */
export type ChromeState = {
  /** `chrome.windows.getAll({ populate: true })` */
  windows: ChromeWindow[];
  /** `chrome.tabGroups.query({})` */
  groups: ChromeGroup[];
  /** `chrome.windows.getLastFocused()`, for when no window has the focus right now. */
  lastFocusedWindowId?: number;
  /** The local bridge the extension is connected to, if any. */
  bridge?: BridgeInfo;
};

/**
 * The whole browser: windows, their tabs in window order, groups, and the active tab of the
 * focused window (or, with no window focused, of the window focused last).
 */
export function buildSnapshot(state: ChromeState, limits: TextLimits = TEXT_LIMITS): BrowserSnapshot {
  const windows = state.windows.flatMap((w) => windowInfo(w) ?? []);
  const tabs = state.windows
    .flatMap((w) => w.tabs ?? [])
    .flatMap((t) => tabInfo(t, limits) ?? [])
    .sort((a, b) => a.windowId - b.windowId || a.index - b.index);
  const groups = state.groups.map(groupInfo);
  const snapshot: BrowserSnapshot = { windows, tabs, groups };
  const focused = windows.find((w) => w.focused)?.windowId ?? state.lastFocusedWindowId;
  const active = tabs.find((t) => t.active && t.windowId === focused);
  if (active !== undefined) snapshot.activeTabId = active.tabId;
  if (state.bridge !== undefined) snapshot.bridge = state.bridge;
  return snapshot;
}

/** UTF-8 length of a frame, the measure the server's frame limit uses. */
export function frameBytes(frame: string): number {
  return new TextEncoder().encode(frame).length;
}

/**
 * The `full_state_sync` frame for `state`, with tighter text limits if the usual ones make it
 * too large for the server, or null when even the compact one does not fit.
 */
export function fullSyncFrame(state: ChromeState): { frame: string; snapshot: BrowserSnapshot } | null {
  for (const limits of [TEXT_LIMITS, COMPACT_TEXT_LIMITS]) {
    const snapshot = buildSnapshot(state, limits);
    const message: ExtensionMessage = { type: "full_state_sync", snapshot };
    const frame = JSON.stringify(message);
    if (frameBytes(frame) <= MAX_EXTENSION_FRAME_BYTES) return { frame, snapshot };
  }
  return null;
}
