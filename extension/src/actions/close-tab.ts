// browser_close_tab: closes one of the task's tabs (its current one by default); the task goes
// on in the newest other one. Its last tab stays: a task ends with done, not by closing it.
import { ActionError } from "../results.ts";
import { bringForward, tabList } from "../task-tabs.ts";
import { leaveTab, tabsOf } from "../tasks.ts";
import type { Handler } from "./handler.ts";

export const browserCloseTab: Handler<"browser_close_tab"> = {
  // Closing a tab does not act on its page (a page the task may not use is closed this way).
  leavesPage: true,
  async run(ctx, p) {
    const tabId = p.tabId ?? ctx.tabId;
    const tabs = tabsOf(ctx.task);
    if (!tabs.includes(tabId)) throw new ActionError("INVALID_TASK_TAB", `tab ${tabId} is not one of the task's tabs (${tabs.join(", ")})`, false);
    if (tabs.length === 1) throw new ActionError("INVALID_TASK_TAB", `tab ${tabId} is the task's last tab: it stays open`, false);
    await ctx.deps.cdp.detach(tabId);
    await chrome.tabs.remove(tabId).catch(() => undefined);
    const task = await ctx.deps.tasks.update(ctx.task.taskId, (t) => leaveTab(t, tabId));
    await bringForward(task!.tabId);
    return { result: { closed: tabId, tabId: task!.tabId, tabs: await tabList(task!, task!.tabId) }, tabId: task!.tabId };
  },
};
