// browser_switch_tab: the task acts in another of its tabs from now on.
import { showOverlay } from "../frames.ts";
import { ActionError } from "../results.ts";
import { bringForward, tabList } from "../task-tabs.ts";
import { tabsOf } from "../tasks.ts";
import type { Handler } from "./handler.ts";

export const browserSwitchTab: Handler<"browser_switch_tab"> = {
  // It does not act on the page it leaves (a page the task may not use is left this way).
  leavesPage: true,
  async run(ctx, p) {
    if (!tabsOf(ctx.task).includes(p.tabId)) {
      throw new ActionError("INVALID_TASK_TAB", `tab ${p.tabId} is not one of the task's tabs (${tabsOf(ctx.task).join(", ")})`, false);
    }
    const tab = await chrome.tabs.get(p.tabId).catch(() => null);
    if (tab === null) throw new ActionError("TASK_TAB_CLOSED", `the task's tab ${p.tabId} was closed`, false);
    const task = await ctx.deps.tasks.update(ctx.task.taskId, (t) => {
      t.tabId = p.tabId;
      t.windowId = tab.windowId;
    });
    await bringForward(p.tabId);
    await ctx.deps.cdp.attach(p.tabId).catch(() => undefined);
    await showOverlay(p.tabId, task!.overlay, task!.label);
    return { result: { tabId: p.tabId, url: tab.url ?? "", title: tab.title ?? "", tabs: await tabList(task!, p.tabId) }, tabId: p.tabId };
  },
};
