// The current task lives in the URL hash (`#/task/<taskId>`), so a reload or a second tab opens
// the same task. Recent tasks (id + title) are remembered in localStorage.

const RECENT_KEY = "mimo.recentTasks";
const RECENT_MAX = 12;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type RecentTask = { taskId: string; title?: string; visitedAt: number };

export function isTaskId(id: string): boolean {
  return UUID.test(id);
}

/** The task id in the hash; `undefined` for no task, `null` for a malformed one. */
export function currentTaskId(): string | null | undefined {
  const match = /^#\/task\/([^/?#]+)\/?$/.exec(location.hash);
  if (!match) return undefined;
  const id = decodeURIComponent(match[1]!);
  return isTaskId(id) ? id.toLowerCase() : null;
}

export function taskHash(taskId: string): string {
  return `#/task/${encodeURIComponent(taskId)}`;
}

export function openTask(taskId: string): void {
  const hash = taskHash(taskId);
  if (location.hash !== hash) location.hash = hash;
}

export function onRouteChange(fn: () => void): void {
  window.addEventListener("hashchange", fn);
}

export function recentTasks(): RecentTask[] {
  try {
    const raw = localStorage.getItem(RECENT_KEY);
    const list: unknown = raw ? JSON.parse(raw) : [];
    if (!Array.isArray(list)) return [];
    return list.filter((t): t is RecentTask => typeof t === "object" && t !== null && typeof t.taskId === "string" && isTaskId(t.taskId));
  } catch {
    return [];
  }
}

/** Moves the task to the top of the list (creating its entry), keeping a known title. */
export function rememberTask(taskId: string, title?: string): RecentTask[] {
  const list = recentTasks();
  const existing = list.find((t) => t.taskId === taskId);
  const entry: RecentTask = { taskId, title: title ?? existing?.title, visitedAt: Date.now() };
  const next = [entry, ...list.filter((t) => t.taskId !== taskId)].slice(0, RECENT_MAX);
  saveRecent(next);
  return next;
}

/** Records a title without reordering. */
export function setTaskTitle(taskId: string, title: string): RecentTask[] {
  const list = recentTasks();
  const entry = list.find((t) => t.taskId === taskId);
  if (!entry) return rememberTask(taskId, title);
  if (entry.title === title) return list;
  entry.title = title;
  saveRecent(list);
  return list;
}

function saveRecent(list: RecentTask[]): void {
  try {
    localStorage.setItem(RECENT_KEY, JSON.stringify(list));
  } catch {
    // Storage full or disabled: the list is a convenience.
  }
}
