// What the server currently believes about each tab, as far as this connection told it. It lets
// the extension send a tab only when something the server keeps actually changed (Chrome fires
// `onUpdated` for favicons and other things the snapshot does not hold), and find the tabs
// whose position shifted when a neighbour came, went or moved (Chrome sends no event for those).
// It follows the server's rules for `tab_event`s (agent/src/snapshot.rs) where they touch tabs.
import type { BrowserSnapshot, TabInfo } from "../../protocol/ts/protocol.ts";

function sameTab(a: TabInfo, b: TabInfo): boolean {
  return (
    a.tabId === b.tabId &&
    a.windowId === b.windowId &&
    a.index === b.index &&
    a.url === b.url &&
    a.title === b.title &&
    a.status === b.status &&
    a.active === b.active &&
    a.groupId === b.groupId
  );
}

export class SentTabs {
  #tabs = new Map<number, TabInfo>();

  /** After a full sync: the server holds exactly the snapshot's tabs. */
  reset(snapshot: BrowserSnapshot): void {
    this.#tabs = new Map(snapshot.tabs.map((t) => [t.tabId, { ...t }]));
  }

  /**
   * Records `tab` if it differs from what the server has; returns whether it does, that is,
   * whether a `tab_upserted` must be sent.
   */
  upsert(tab: TabInfo): boolean {
    const known = this.#tabs.get(tab.tabId);
    if (known !== undefined && sameTab(known, tab)) return false;
    if (tab.active) this.#deactivateOthers(tab.windowId, tab.tabId);
    this.#tabs.set(tab.tabId, { ...tab });
    return true;
  }

  remove(tabId: number): void {
    this.#tabs.delete(tabId);
  }

  activate(tabId: number, windowId: number): void {
    this.#deactivateOthers(windowId, tabId);
    const tab = this.#tabs.get(tabId);
    if (tab !== undefined) tab.active = true;
  }

  removeWindow(windowId: number): void {
    for (const [id, tab] of this.#tabs) if (tab.windowId === windowId) this.#tabs.delete(id);
  }

  removeGroup(groupId: number): void {
    for (const tab of this.#tabs.values()) if (tab.groupId === groupId) delete tab.groupId;
  }

  #deactivateOthers(windowId: number, tabId: number): void {
    for (const tab of this.#tabs.values()) if (tab.windowId === windowId && tab.tabId !== tabId) tab.active = false;
  }
}
