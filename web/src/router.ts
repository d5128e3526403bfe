// The current task lives in the URL hash (`#/task/<taskId>`), so a reload or a second tab opens
// the same task; `#/task/<taskId>/replay/<n>` is its replay at the n-th step, a link to share
// with whoever holds the token. Recent tasks (id + title) are remembered in localStorage.

const RECENT_KEY = "mimo.recentTasks";
const RECENT_MAX = 12;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type RecentTask = { taskId: string; title?: string; visitedAt: number };

export function isTaskId(id: string): boolean {
  return UUID.test(id);
}

/** A task's page: the live task, or its replay (`at`: the 1-based step of the audit log shown). */
export type Route = { taskId: string; replay?: { at: number } };

/** The route in `hash`; `undefined` for no task, `null` for a malformed task id. */
export function parseRoute(hash: string): Route | null | undefined {
  const match = /^#\/task\/([^/?#]+)(\/replay(?:\/(\d+))?)?\/?$/.exec(hash);
  if (!match) return undefined;
  const id = decodeURIComponent(match[1]!);
  if (!isTaskId(id)) return null;
  const taskId = id.toLowerCase();
  return match[2] === undefined ? { taskId } : { taskId, replay: { at: Math.max(1, Number(match[3] ?? 1)) } };
}

export function currentRoute(): Route | null | undefined {
  return parseRoute(location.hash);
}

export function taskHash(taskId: string): string {
  return `#/task/${encodeURIComponent(taskId)}`;
}

export function replayHash(taskId: string, at = 1): string {
  return `${taskHash(taskId)}/replay/${at}`;
}

/** Shows step `at` of the replay in the address (to share), without a new history entry. */
export function replaceReplayStep(taskId: string, at: number): void {
  const hash = replayHash(taskId, at);
  if (location.hash !== hash) history.replaceState(null, "", hash);
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
