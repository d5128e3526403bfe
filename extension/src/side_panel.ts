// The side panel: the connection, which sites Mimo may act on (with "Allow Mimo on <site>" for
// the current tab's site and for sites a task asked for), the tasks running in this browser
// with their state, and the last actions, all read from what the service worker keeps in
// storage (live).
import { INDEX_KEY } from "./action-log.ts";
import type { FinishedEntry } from "./action-log.ts";
import { mountSiteAccess } from "./site-access-view.ts";
import { STATUS_KEY } from "./storage.ts";
import type { ConnectionStatus } from "./storage.ts";
import { TASK_STATUS_KEY, TASKS_KEY } from "./tasks.ts";
import type { TaskRecord } from "./tasks.ts";

const LAST_ACTIONS = 12;

function $(id: string): HTMLElement {
  return document.getElementById(id)!;
}

function item(text: string, cls = ""): HTMLLIElement {
  const li = document.createElement("li");
  li.textContent = text;
  if (cls) li.className = cls;
  return li;
}

function time(ms: number): string {
  return new Date(ms).toLocaleTimeString();
}

function render(stored: Record<string, unknown>): void {
  const status = stored[STATUS_KEY] as ConnectionStatus | undefined;
  const connection = $("connection");
  connection.dataset.state = status?.state ?? "offline";
  connection.textContent = { online: "Online", connecting: "Connecting…", offline: "Offline" }[status?.state ?? "offline"] + (status?.lastError && status.state !== "online" ? ` — ${status.lastError}` : "");

  const tasks = Object.values((stored[TASKS_KEY] as Record<string, TaskRecord> | undefined) ?? {});
  const statuses = (stored[TASK_STATUS_KEY] as Record<string, { status: string }> | undefined) ?? {};
  const taskList = $("tasks");
  taskList.replaceChildren(
    ...(tasks.length === 0
      ? [item("No task", "muted")]
      : tasks.map((t) => {
          const status = statuses[t.taskId]?.status ?? "running";
          const state = t.tabClosed ? `${status}, tab closed` : `${status} (overlay ${t.overlay})`;
          const doing = t.lastAction ? ` · last ${t.lastAction.name} at ${time(t.lastAction.at)}` : "";
          return item(`${t.taskId.slice(0, 8)} — ${state}${t.label ? ` · ${t.label}` : ""} · tab ${t.tabId}${doing}`, t.takeover ? "partial" : "");
        })),
  );

  const index = ((stored[INDEX_KEY] as FinishedEntry[] | undefined) ?? []).slice(-LAST_ACTIONS).reverse();
  $("actions").replaceChildren(
    ...(index.length === 0
      ? [item("None yet", "muted")]
      : index.map((e) => item(`${time(e.finishedAt)} ${e.name} — ${e.status}${e.code ? ` ${e.code}` : ""} (${e.finishedAt - e.startedAt} ms)`, e.status === "ok" ? "" : e.status))),
  );
}

async function refresh(): Promise<void> {
  render(await chrome.storage.local.get([STATUS_KEY, TASKS_KEY, TASK_STATUS_KEY, INDEX_KEY]));
}

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && [STATUS_KEY, TASKS_KEY, TASK_STATUS_KEY, INDEX_KEY].some((k) => k in changes)) void refresh();
mountSiteAccess($("site-access"), { currentTab: true });
});
void refresh();
mountSiteAccess($("site-access"), { currentTab: true });
