// The current task lives in the URL hash (`#/task/<taskId>`), so a reload or a second tab opens
// the same task; `#/task/<taskId>/replay/<n>` is its replay at the n-th step, a link to share
// with whoever holds the token. The list of tasks is the server's (`GET /api/tasks`).

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
