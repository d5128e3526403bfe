// Waiting on the task's tab: for a page to finish loading, for a navigation to end, and the
// pause between two looks at a page that is not ready yet.
import { ActionError, errorText } from "./results.ts";

export const DEFAULT_LOAD_TIMEOUT_MS = 15_000;
/** How often a wait looks at the page again. */
export const POLL_MS = 50;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The page a tab landed on once `loaded` settles (its address and title), for an action that
 * loaded one: a load that did not finish is a warning, not the action's failure.
 */
export async function landedOn(tabId: number, loaded: Promise<chrome.tabs.Tab>) {
  const warnings: string[] = [];
  const tab = await loaded.catch((error: unknown) => {
    warnings.push(errorText(error));
    return chrome.tabs.get(tabId);
  });
  return { result: { url: tab.url ?? "", title: tab.title ?? "" }, warnings };
}

/** Resolves when the tab's status is `complete` (now, or at the next update). */
export function tabComplete(tabId: number, timeoutMs: number, afterNavigation = false): Promise<chrome.tabs.Tab> {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (error: ActionError | null, tab?: chrome.tabs.Tab) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      chrome.tabs.onUpdated.removeListener(listener);
      chrome.tabs.onRemoved.removeListener(removed);
      if (error !== null) reject(error);
      else resolve(tab!);
    };
    const listener = (id: number, change: { status?: string }, tab: chrome.tabs.Tab) => {
      if (id === tabId && change.status === "complete") finish(null, tab);
    };
    const removed = (id: number) => {
      if (id === tabId) finish(new ActionError("TASK_TAB_CLOSED", "the task's tab was closed", false));
    };
    const timer = setTimeout(() => finish(new ActionError("TIMEOUT", `the page did not finish loading within ${timeoutMs} ms`, true)), timeoutMs);
    chrome.tabs.onUpdated.addListener(listener);
    chrome.tabs.onRemoved.addListener(removed);
    if (!afterNavigation) {
      void chrome.tabs.get(tabId).then(
        (tab) => {
          if (tab.status === "complete") finish(null, tab);
        },
        () => finish(new ActionError("TASK_TAB_CLOSED", "the task's tab was closed", false)),
      );
    }
  });
}

/**
 * Opens a URL in the tab and waits for it to load. A page still loading at the timeout is a
 * warning, not a failure: the navigation happened.
 */
export async function navigateTab(tabId: number, url: string, timeoutMs: number, warnings: string[]): Promise<chrome.tabs.Tab | undefined> {
  const now = await chrome.tabs.get(tabId);
  const loaded = tabComplete(tabId, timeoutMs, true);
  // Already on its way there (a retry of a navigation cut short): wait for it instead.
  const underway = now.status === "loading" && (now.pendingUrl === url || now.url === url);
  if (!underway) {
    try {
      await chrome.tabs.update(tabId, { url });
    } catch (error) {
      loaded.catch(() => undefined);
      throw new ActionError("TIMEOUT", `Chrome did not start the navigation: ${errorText(error)}`, true);
    }
  }
  try {
    return await loaded;
  } catch (error) {
    if (error instanceof ActionError && error.code === "TIMEOUT") {
      warnings.push(error.message);
      return undefined;
    }
    throw error;
  }
}
