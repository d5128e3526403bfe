// browser_open_tab: opens a URL in a new tab of the task (its window, its group), where the
// task goes on.
import { showOverlay } from "../frames.ts";
import { checkDomains, checkUrl } from "../guard.ts";
import { ActionError } from "../results.ts";
import { requireSite } from "../site-access.ts";
import { addTab, openFirstPage, tabList } from "../task-tabs.ts";
import type { Handler } from "./handler.ts";

export const browserOpenTab: Handler<"browser_open_tab"> = {
  async run(ctx, p) {
    checkUrl(p.url, (await ctx.deps.server()).serverUrl);
    checkDomains(ctx.task, p.url);
    await requireSite(p.url);
    // On about:blank first: the tab joins the task, and its network rules, before the page is asked for.
    const tab = await chrome.tabs.create({ windowId: ctx.task.windowId, url: "about:blank", active: true });
    if (tab.id === undefined) throw new ActionError("INTERNAL_ERROR", "Chrome did not open the tab", true);
    const task = await addTab(ctx.deps, ctx.task.taskId, tab.id, tab.windowId);
    const warnings: string[] = [];
    await openFirstPage(ctx.deps.cdp, tab.id, p.url, warnings);
    await showOverlay(tab.id, task!.overlay, task!.label).catch(() => undefined);
    const now = await chrome.tabs.get(tab.id).catch(() => tab);
    return { result: { tabId: tab.id, url: now.url || p.url, title: now.title ?? "", tabs: await tabList(task!, tab.id) }, warnings, tabId: tab.id };
  },
};
