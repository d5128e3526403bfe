// Keeps the server's snapshot of this browser current: a `full_state_sync` when a connection is
// welcomed, then a `tab_event` for every change Chrome reports. Chrome's listeners call the
// methods below; the work is done one event at a time, in order, so that a slow read (a tab's
// window, say) never lets a later event overtake an earlier one. Events while no connection is
// live are dropped: the full sync of the next connection covers them.
//
// Chrome is reached only through `BrowserReader`, so this runs under node:test with a fake.
import type { ExtensionMessage, TabEvent } from "../../protocol/ts/protocol.ts";
import { SentTabs } from "./sent-tabs.ts";
import { focusedWindowId, fullSyncFrame, groupInfo, tabInfo, windowInfo } from "./snapshot.ts";
import type { ChromeGroup, ChromeState, ChromeTab, ChromeWindow } from "./snapshot.ts";

export type BrowserReader = {
  /** Everything a full sync needs. */
  state(): Promise<ChromeState>;
  /** The tabs of one window now; none when the window is gone. */
  tabsOf(windowId: number): Promise<ChromeTab[]>;
  /** One tab now, or null when it is gone. */
  tab(tabId: number): Promise<ChromeTab | null>;
};

export type SyncHooks = {
  /** Sends one frame on the live connection (if it just closed, the next full sync covers it). */
  send(frame: string): void;
  /** A sync could not be done; the message is for the person (options page). */
  failed(message: string): void;
};

export class BrowserSync {
  readonly #reader: BrowserReader;
  readonly #hooks: SyncHooks;
  readonly #sent = new SentTabs();
  /** Incremented by every start and stop, so work queued for an older connection is dropped. */
  #session = 0;
  #live = false;
  #queue: Promise<void> = Promise.resolve();

  constructor(reader: BrowserReader, hooks: SyncHooks) {
    this.#reader = reader;
    this.#hooks = hooks;
  }

  /** A connection was welcomed: send the whole browser, then every change. */
  start(): void {
    const session = ++this.#session;
    this.#live = true;
    this.#enqueue(async () => {
      let state: ChromeState;
      try {
        state = await this.#reader.state();
      } catch (error) {
        return this.#fail(session, `could not read the browser's windows and tabs: ${String(error)}`);
      }
      if (session !== this.#session) return;
      const full = fullSyncFrame(state);
      if (full === null) return this.#fail(session, "the browser has too many tabs to describe in one message");
      this.#sent.reset(full.snapshot);
      this.#hooks.send(full.frame);
    });
  }

  /** Something the full sync holds but no tab event says changed (the local bridge): sent again. */
  resync(): void {
    if (this.#live) this.start();
  }

  /** The connection is gone. */
  stop(): void {
    this.#session++;
    this.#live = false;
  }

  /** Resolves once every event received so far has been handled. */
  settled(): Promise<void> {
    return this.#queue;
  }

  tabCreated(tab: ChromeTab): void {
    // The new tab shifts the ones after it.
    this.#whenLive(() => this.#refreshWindow(tab.windowId));
  }

  tabUpdated(tab: ChromeTab): void {
    this.#whenLive(async () => this.#upsert(tab));
  }

  /** `onMoved` (`windowId` is the tab's window), `onDetached` (its old one), `onAttached` (its new one). */
  tabMoved(windowId: number): void {
    this.#whenLive(() => this.#refreshWindow(windowId));
  }

  tabRemoved(tabId: number, windowId: number, windowClosing: boolean): void {
    this.#whenLive(async () => {
      this.#sent.remove(tabId);
      this.#event({ kind: "tab_removed", tabId });
      if (!windowClosing) await this.#refreshWindow(windowId);
    });
  }

  tabActivated(tabId: number, windowId: number): void {
    this.#whenLive(async () => {
      this.#sent.activate(tabId, windowId);
      this.#event({ kind: "tab_activated", tabId, windowId });
    });
  }

  /** Chrome swapped a tab for another (a prerendered page), under a new id. */
  tabReplaced(addedTabId: number, removedTabId: number): void {
    this.#whenLive(async () => {
      this.#sent.remove(removedTabId);
      this.#event({ kind: "tab_removed", tabId: removedTabId });
      const added = await this.#reader.tab(addedTabId);
      if (added !== null) this.#upsert(added);
    });
  }

  windowCreated(window: ChromeWindow): void {
    this.#whenLive(async () => {
      const info = windowInfo(window);
      if (info !== null) this.#event({ kind: "window_upserted", window: info });
    });
  }

  windowRemoved(windowId: number): void {
    this.#whenLive(async () => {
      this.#sent.removeWindow(windowId);
      this.#event({ kind: "window_removed", windowId });
    });
  }

  windowFocused(windowId: number): void {
    this.#whenLive(async () => this.#event({ kind: "window_focused", windowId: focusedWindowId(windowId) }));
  }

  groupChanged(group: ChromeGroup): void {
    this.#whenLive(async () => this.#event({ kind: "group_upserted", group: groupInfo(group) }));
  }

  groupRemoved(groupId: number): void {
    this.#whenLive(async () => {
      this.#sent.removeGroup(groupId);
      this.#event({ kind: "group_removed", groupId });
    });
  }

  #whenLive(work: () => Promise<void>): void {
    if (!this.#live) return;
    const session = this.#session;
    this.#enqueue(async () => {
      if (session === this.#session) await work();
    });
  }

  #enqueue(work: () => Promise<void>): void {
    this.#queue = this.#queue.then(work).catch((error: unknown) => console.error("mimo: browser sync", error));
  }

  #fail(session: number, message: string): void {
    if (session !== this.#session) return;
    this.stop();
    this.#hooks.failed(message);
  }

  async #refreshWindow(windowId: number): Promise<void> {
    const tabs = await this.#reader.tabsOf(windowId);
    // The active tab first: the server then deactivates the one it replaces by itself, and
    // never sees a window without an active tab in between.
    for (const tab of tabs.sort((a, b) => Number(b.active) - Number(a.active))) this.#upsert(tab);
  }

  #upsert(tab: ChromeTab): void {
    const info = tabInfo(tab);
    if (info !== null && this.#sent.upsert(info)) this.#event({ kind: "tab_upserted", tab: info });
  }

  #event(event: TabEvent): void {
    const message: ExtensionMessage = { type: "tab_event", event };
    this.#hooks.send(JSON.stringify(message));
  }
}
