// task_stop: detaches the debugger, clears the overlay, closes the task's tabs if asked (a
// window with its tab when the tab is all it holds) and forgets the task.
import { showOverlay } from "../frames.ts";
import { tabsOf } from "../tasks.ts";
import type { Handler } from "./handler.ts";

export const taskStop: Handler<"task_stop"> = {
  async run({ action, deps }, params) {
    const task = await deps.tasks.get(action.taskId);
    if (task === undefined) return { result: { stopped: true } };
    for (const tabId of tabsOf(task)) {
      await deps.cdp.detach(tabId);
      await showOverlay(tabId, "idle").catch(() => undefined);
      // A tab of the person's is handed back, never closed.
      if (params.closeTab !== true || task.adopted?.includes(tabId)) continue;
      const tab = await chrome.tabs.get(tabId).catch(() => null);
      if (tab === null) continue;
      const inWindow = await chrome.tabs.query({ windowId: tab.windowId }).catch(() => []);
      if (inWindow.length === 1 && inWindow[0]!.id === tabId) await chrome.windows.remove(tab.windowId).catch(() => undefined);
      else await chrome.tabs.remove(tabId).catch(() => undefined);
    }
    await deps.tasks.remove(action.taskId);
    return { result: { stopped: true } };
  },
};
