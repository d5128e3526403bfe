// task_start: opens the task's own tab, in its own unfocused window, grouped and titled — or
// reuses the task's tab while it is open — and attaches the debugger to it. The task's rules are
// in its record before its tab goes anywhere: the network rules that follow the record
// (net-guard.ts) hold the tab from its first request.
import type { TaskStartResult } from "../../../protocol/ts/protocol.ts";
import { showOverlay } from "../frames.ts";
import { checkDomains, checkUrl } from "../guard.ts";
import { DEFAULT_LOAD_TIMEOUT_MS, navigateTab } from "../loading.ts";
import { actionLabel, overlayFor } from "../overlay-state.ts";
import { ActionError, errorText } from "../results.ts";
import { requireSite } from "../site-access.ts";
import { openFirstPage } from "../task-tabs.ts";
import { joinTab } from "../tasks.ts";
import type { TaskRecord } from "../tasks.ts";
import type { ExecutorDeps, Handler, Params } from "./handler.ts";

/**
 * What a task_start sets before the task's tab goes anywhere: where the task may go and what is
 * kept out of its evidence, as it says; and the task runs again if it had ended.
 */
function startRecord(record: TaskRecord, params: Params<"task_start">): void {
  delete record.ended;
  if (params.domains !== undefined) record.domains = params.domains;
  else delete record.domains;
  if (params.taskDomains !== undefined) record.taskDomains = params.taskDomains;
  else delete record.taskDomains;
  if (params.redaction !== undefined) record.redaction = params.redaction;
  else delete record.redaction;
}

/**
 * The person's own tab joins the task ("continue on this page"): not moved, not grouped, and
 * handed back — never closed — when the task ends (see `adoptedTabs`).
 */
async function adopt(deps: ExecutorDeps, params: Params<"task_start">, taskId: string, tabId: number, existing: TaskRecord | undefined): Promise<TaskRecord> {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (tab === null) throw new ActionError("INVALID_TASK_TAB", `tab ${tabId} is not open any more: the task cannot continue on it`, false);
  const page = tab.url || tab.pendingUrl || "";
  checkUrl(page, (await deps.server()).serverUrl);
  await requireSite(page);
  const record: TaskRecord = existing ?? { taskId, tabId, windowId: tab.windowId, startedAt: deps.now(), overlay: "hidden" };
  joinTab(record, tabId, tab.windowId);
  record.adopted = [...(record.adopted ?? []).filter((id) => id !== tabId), tabId];
  startRecord(record, params);
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
      record = await adopt(deps, params, action.taskId, params.adoptTabId, alive ? existing : undefined);
      if (params.url !== undefined) await navigateTab(record.tabId, url, DEFAULT_LOAD_TIMEOUT_MS, warnings);
    } else if (alive && params.reuseExistingTab !== false) {
      record = (await deps.tasks.update(action.taskId, (t) => startRecord(t, params)))!;
      if (params.url !== undefined) await navigateTab(record.tabId, url, DEFAULT_LOAD_TIMEOUT_MS, warnings);
    } else {
      // Its own window, not focused: the person's windows keep their focus, and a tab in a
      // window of its own is not throttled like a background tab is. It opens on about:blank:
      // the network rules name the tab, which has no id before it exists.
      const win = await chrome.windows.create({ focused: false, url: "about:blank", type: "normal" });
      const tab = win?.tabs?.[0];
      if (win?.id === undefined || tab?.id === undefined) throw new ActionError("INTERNAL_ERROR", "Chrome did not open the task's window", true);
      record = { taskId: action.taskId, tabId: tab.id, windowId: win.id, startedAt: deps.now(), overlay: "hidden" };
      startRecord(record, params);
      try {
        const groupId = await chrome.tabs.group({ tabIds: tab.id, createProperties: { windowId: win.id } });
        await chrome.tabGroups.update(groupId, { title: params.groupTitle ?? "Mimo", color: "purple" });
        record.groupId = groupId;
      } catch (error) {
        warnings.push(`the task's tab is not in a tab group: ${errorText(error)}`);
      }
      await deps.tasks.put(record);
      if (url !== "about:blank") await openFirstPage(deps.cdp, tab.id, url, warnings);
    }
    await deps.cdp.attach(record.tabId).catch((error: unknown) => warnings.push(`no CDP: ${errorText(error)}; clicks and typing will use DOM events`));
    // The task runs (it sent this action); the server's task_state says what comes next.
    const overlay = overlayFor((await deps.tasks.status(action.taskId)) ?? "running");
    const label = actionLabel(action);
    await deps.tasks.update(action.taskId, (t) => {
      t.overlay = overlay;
      t.label = label;
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
