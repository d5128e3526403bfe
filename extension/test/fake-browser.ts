// A browser made of plain objects shaped like Chrome's, for the sync tests.
import type { ChromeGroup, ChromeState, ChromeTab, ChromeWindow } from "../src/snapshot.ts";
import type { BrowserReader } from "../src/sync.ts";

export function chromeTab(id: number, windowId: number, index: number, extra: Partial<ChromeTab> = {}): ChromeTab {
  return { id, windowId, index, url: `http://127.0.0.1/${id}`, title: `Tab ${id}`, status: "complete", active: false, groupId: -1, ...extra };
}

export class FakeBrowser implements BrowserReader {
  windows: ChromeWindow[] = [];
  tabs: ChromeTab[] = [];
  groups: ChromeGroup[] = [];
  /** Each read answers this much later, with the state as it was when asked (like Chrome's IPC). */
  readDelayMs = 0;
  reads = 0;

  async #answer<T>(value: T): Promise<T> {
    this.reads++;
    if (this.readDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.readDelayMs));
    return value;
  }

  state(): Promise<ChromeState> {
    return this.#answer({
      windows: this.windows.map((w) => ({ ...w, tabs: this.#tabsOf(w.id) })),
      groups: this.groups.map((g) => ({ ...g })),
    });
  }

  tabsOf(windowId: number): Promise<ChromeTab[]> {
    return this.#answer(this.#tabsOf(windowId));
  }

  tab(tabId: number): Promise<ChromeTab | null> {
    const tab = this.tabs.find((t) => t.id === tabId);
    return this.#answer(tab === undefined ? null : { ...tab });
  }

  /** A window's tabs in index order, as `chrome.tabs.query` lists them. */
  #tabsOf(windowId: number | undefined): ChromeTab[] {
    return this.tabs
      .filter((t) => t.windowId === windowId)
      .sort((a, b) => a.index - b.index)
      .map((t) => ({ ...t }));
  }

  /** Puts `tab` at its index in its window, shifting the tabs after it, as Chrome does. */
  insert(tab: ChromeTab): ChromeTab {
    for (const t of this.tabs) if (t.windowId === tab.windowId && t.index >= tab.index) t.index++;
    this.tabs.push(tab);
    return { ...tab };
  }

  remove(tabId: number): void {
    const tab = this.tabs.find((t) => t.id === tabId);
    if (tab === undefined) return;
    this.tabs = this.tabs.filter((t) => t.id !== tabId);
    for (const t of this.tabs) if (t.windowId === tab.windowId && t.index > tab.index) t.index--;
  }

  update(tabId: number, change: Partial<ChromeTab>): ChromeTab {
    const tab = this.tabs.find((t) => t.id === tabId);
    if (tab === undefined) throw new Error(`no tab ${tabId}`);
    Object.assign(tab, change);
    return { ...tab };
  }
}
