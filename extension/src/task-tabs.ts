// A task's tabs. Tabs a task's step makes its page open (a `target=_blank` link, `window.open`
// on a click) join it: the service worker's `tabs.onCreated` adds them (tasks.ts `joinTab`) and
// tells whoever waits for one here — the executor, so that the click that opened a tab reports
// it and the page preparation that follows looks at the new tab, not the old one. A tab opened
// from a task's tab while no step acts there is the person's (a middle-click, a link opened in
// a new tab during a takeover) or the page's own: it never joins, so the agent cannot act in it.
import type { TaskTab } from "../../protocol/ts/protocol.ts";
import type { Debugger } from "./cdp.ts";
import { DEFAULT_LOAD_TIMEOUT_MS, navigateTab, tabComplete } from "./loading.ts";
import { joinTab, tabsOf } from "./tasks.ts";
import type { TaskRecord, TaskRegistry } from "./tasks.ts";
import { Waiters } from "./waiters.ts";

/**
 * How long after a step in a tab ends a tab opened from it is still the step's doing: Chrome
 * tells the service worker of a new tab a moment after it opens it, later on a busy machine.
 */
const STEP_TAB_GRACE_MS = 2_000;

export class NewTabs {
  readonly #waiters = new Waiters<string, number>();
  /** For each tab a step acts in: how many steps act there now, and when the last one ended. */
  readonly #acting = new Map<number, { steps: number; endedAt: number }>();

  /** A step acts in `tabId` until the function returned is called at its end. */
  acting(tabId: number, now: () => number): () => void {
    const entry = this.#acting.get(tabId) ?? { steps: 0, endedAt: 0 };
    entry.steps += 1;
    this.#acting.set(tabId, entry);
    return () => {
      entry.steps -= 1;
      entry.endedAt = now();
    };
  }

  /** Whether a tab opened from `openerTabId` at `now` is a step's doing (and may join its task). */
  openedByStep(openerTabId: number, now: number): boolean {
    const entry = this.#acting.get(openerTabId);
    if (entry === undefined) return false;
    if (entry.steps > 0 || now - entry.endedAt <= STEP_TAB_GRACE_MS) return true;
    this.#acting.delete(openerTabId);
    return false;
  }

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

/** The open tabs opened from `tabId` (by its page, or by the person from it). */
export async function openedFrom(tabId: number): Promise<chrome.tabs.Tab[]> {
  return (await chrome.tabs.query({})).filter((t) => t.openerTabId === tabId && t.id !== undefined);
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
