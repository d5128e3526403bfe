// task_start: opens the task's own tab, in its own unfocused window, grouped and titled — or
// reuses the task's tab while it is open — and attaches the debugger to it.
import type { TaskStartResult } from "../../../protocol/ts/protocol.ts";
import { showOverlay } from "../frames.ts";
import { checkDomains, checkUrl } from "../guard.ts";
import { DEFAULT_LOAD_TIMEOUT_MS, navigateTab, tabComplete } from "../loading.ts";
import { actionLabel, overlayFor } from "../overlay-state.ts";
import { ActionError, errorText } from "../results.ts";
import { requireSite } from "../site-access.ts";
import { joinTab } from "../tasks.ts";
import type { TaskRecord } from "../tasks.ts";
import type { ExecutorDeps, Handler } from "./handler.ts";

/**
 * The person's own tab joins the task ("continue on this page"): not moved, not grouped, and
 * handed back — never closed — when the task ends (see `adoptedTabs`).
 */
async function adopt(deps: ExecutorDeps, taskId: string, tabId: number, existing: TaskRecord | undefined): Promise<TaskRecord> {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (tab === null) throw new ActionError("INVALID_TASK_TAB", `tab ${tabId} is not open any more: the task cannot continue on it`, false);
  const page = tab.url || tab.pendingUrl || "";
  checkUrl(page, (await deps.server()).serverUrl);
  await requireSite(page);
  const record: TaskRecord = existing ?? { taskId, tabId, windowId: tab.windowId, startedAt: deps.now(), overlay: "hidden" };
  joinTab(record, tabId, tab.windowId);
  record.adopted = [...(record.adopted ?? []).filter((id) => id !== tabId), tabId];
  await deps.tasks.put(record);
  return record;
}

export const taskStart: Handler<"task_start"> = {
  async run({ action, deps }, params) {
    const server = await deps.server();
    const url = params.url ?? "about:blank";
    checkUrl(url, server.serverUrl);
    checkDomains(params, url);
    // Before a tab is opened: the refusal lists the site in the side panel for the person.
    await requireSite(url);
    const warnings: string[] = [];
    const existing = await deps.tasks.get(action.taskId);
    const alive = existing !== undefined && existing.tabClosed !== true && (await chrome.tabs.get(existing.tabId).catch(() => null)) !== null;
    let record: TaskRecord;
    if (params.adoptTabId !== undefined) {
      record = await adopt(deps, action.taskId, params.adoptTabId, alive ? existing : undefined);
      if (params.url !== undefined) await navigateTab(record.tabId, url, DEFAULT_LOAD_TIMEOUT_MS, warnings);
    } else if (alive && params.reuseExistingTab !== false) {
      record = existing!;
      if (params.url !== undefined) await navigateTab(record.tabId, url, DEFAULT_LOAD_TIMEOUT_MS, warnings);
    } else {
      // Its own window, not focused: the person's windows keep their focus, and a tab in a
      // window of its own is not throttled like a background tab is.
      const win = await chrome.windows.create({ focused: false, url, type: "normal" });
      const tab = win?.tabs?.[0];
      if (win?.id === undefined || tab?.id === undefined) throw new ActionError("INTERNAL_ERROR", "Chrome did not open the task's window", true);
      record = { taskId: action.taskId, tabId: tab.id, windowId: win.id, startedAt: deps.now(), overlay: "hidden" };
      try {
        const groupId = await chrome.tabs.group({ tabIds: tab.id, createProperties: { windowId: win.id } });
        await chrome.tabGroups.update(groupId, { title: params.groupTitle ?? "Mimo", color: "purple" });
        record.groupId = groupId;
      } catch (error) {
        warnings.push(`the task's tab is not in a tab group: ${errorText(error)}`);
      }
      await deps.tasks.put(record);
      await tabComplete(tab.id, DEFAULT_LOAD_TIMEOUT_MS).catch(() => warnings.push("the page was still loading when the task started"));
    }
    await deps.cdp.attach(record.tabId).catch((error: unknown) => warnings.push(`no CDP: ${errorText(error)}; clicks and typing will use DOM events`));
    // The task runs (it sent this action); the server's task_state says what comes next.
    const overlay = overlayFor((await deps.tasks.status(action.taskId)) ?? "running");
    const label = actionLabel(action);
    await deps.tasks.update(action.taskId, (t) => {
      t.overlay = overlay;
      t.label = label;
      if (params.domains !== undefined) t.domains = params.domains;
      else delete t.domains;
      if (params.taskDomains !== undefined) t.taskDomains = params.taskDomains;
      else delete t.taskDomains;
      if (params.redaction !== undefined) t.redaction = params.redaction;
      else delete t.redaction;
      delete t.takeover;
      delete t.stopRequested;
    });
    await showOverlay(record.tabId, overlay, label);
    const tab = await chrome.tabs.get(record.tabId);
    const result: TaskStartResult = { tabId: record.tabId, windowId: tab.windowId, url: tab.url || tab.pendingUrl || url };
    if (record.groupId !== undefined) result.groupId = record.groupId;
    if (tab.title) result.title = tab.title;
    return { result, warnings, tabId: record.tabId };
  },
};
