// task_stop: detaches the debugger, clears the overlay, closes the task's tab if asked (its
// window with it when the tab is all it holds) and forgets the task.
import { showOverlay } from "../frames.ts";
import type { Handler } from "./handler.ts";

export const taskStop: Handler<"task_stop"> = {
  async run({ action, deps }, params) {
    const task = await deps.tasks.get(action.taskId);
    if (task === undefined) return { result: { stopped: true } };
    await deps.cdp.detach(task.tabId);
    await showOverlay(task.tabId, "idle");
    if (params.closeTab === true) {
      const tabs = await chrome.tabs.query({ windowId: task.windowId }).catch(() => []);
      if (tabs.length === 1 && tabs[0]!.id === task.tabId) await chrome.windows.remove(task.windowId).catch(() => undefined);
      else await chrome.tabs.remove(task.tabId).catch(() => undefined);
    }
    await deps.tasks.remove(action.taskId);
    return { result: { stopped: true } };
  },
};
