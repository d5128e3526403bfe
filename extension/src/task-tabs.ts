// A task's tabs. Tabs a task's pages open (a `target=_blank` link, `window.open`) join it: the
// service worker's `tabs.onCreated` adds them (tasks.ts `joinTab`) and tells whoever waits for
// one here — the executor, so that the click that opened a tab reports it and the page
// preparation that follows looks at the new tab, not the old one.
import type { TaskTab } from "../../protocol/ts/protocol.ts";
import type { Debugger } from "./cdp.ts";
import { DEFAULT_LOAD_TIMEOUT_MS, navigateTab, tabComplete } from "./loading.ts";
import { joinTab, tabsOf } from "./tasks.ts";
import type { TaskRecord, TaskRegistry } from "./tasks.ts";
import { Waiters } from "./waiters.ts";

export class NewTabs {
  readonly #waiters = new Waiters<string, number>();

  /** A tab joined the task. */
  joined(taskId: string, tabId: number): void {
    this.#waiters.tell(taskId, tabId);
  }

  /** The next tab to join the task from now on; `cancel` stops watching. */
  watch(taskId: string): { opened: Promise<number>; cancel(): void } {
    const { next, cancel } = this.#waiters.watch(taskId);
    return { opened: next, cancel };
  }
}

/** The task's tabs as the model and the web app see them, `current` the one given. */
export async function tabList(task: TaskRecord, current: number): Promise<TaskTab[]> {
  const out: TaskTab[] = [];
  for (const tabId of tabsOf(task)) {
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (tab !== null) out.push({ tabId, url: tab.url || tab.pendingUrl || "", title: tab.title ?? "", current: tabId === current });
  }
  return out;
}

/** Shows the tab in its window (the window keeps its focus state): CDP input to a tab in the background is slow. */
export async function bringForward(tabId: number): Promise<void> {
  await chrome.tabs.update(tabId, { active: true }).catch(() => undefined);
}

/**
 * A tab joins the task and becomes its current one: in the task's tab group (where its window
 * allows), with the debugger attached (trusted input, dialogs).
 */
export async function addTab(deps: { tasks: TaskRegistry; cdp: Debugger }, taskId: string, tabId: number, windowId: number): Promise<TaskRecord | undefined> {
  const task = await deps.tasks.update(taskId, (t) => joinTab(t, tabId, windowId));
  if (task?.groupId !== undefined) await chrome.tabs.group({ groupId: task.groupId, tabIds: tabId }).catch(() => undefined);
  await deps.cdp.attach(tabId).catch(() => undefined);
  return task;
}

/**
 * Takes a tab the task has just opened on about:blank to its first page. It opens there because
 * the network rules name tabs: once it has joined the task they hold it, before the page's first
 * request goes out (and a redirect of it). About:blank then leaves the tab's history: it is no
 * page to go back to.
 */
export async function openFirstPage(cdp: Debugger, tabId: number, url: string, warnings: string[]): Promise<void> {
  // Until about:blank has loaded, its own load would be taken for the page's.
  await tabComplete(tabId, DEFAULT_LOAD_TIMEOUT_MS);
  await navigateTab(tabId, url, DEFAULT_LOAD_TIMEOUT_MS, warnings);
  // Without CDP (turned off) about:blank stays in the history: going back there is harmless.
  await cdp.send(tabId, "Page.resetNavigationHistory").catch(() => undefined);
}
