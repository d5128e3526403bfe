// Every step is verified: a click, a key, a choice or a drag that changed nothing a person
// would notice is reported as such (a warning, and partial), never as a plain success. What
// changed is judged from every frame of the tab (content/changes.ts) and the tab itself; what
// the page changes by itself (a clock, a ticker) is no effect of the step.
import type { ActionName } from "../../protocol/ts/protocol.ts";
import type { FrameRequest, FrameState } from "./frame-protocol.ts";
import { allFrames } from "./frames.ts";
import { sleep } from "./loading.ts";

/**
 * The actions a person does to make something happen. Hover is not among them: a CSS `:hover`
 * menu opens without any change the page's scripts could see. Typing reads its value back.
 */
export const EXPECTS_EFFECT: ReadonlySet<ActionName> = new Set<ActionName>(["browser_click", "browser_click_at", "browser_press_key", "browser_select_option", "browser_drag"]);
/** How long a step that changed nothing yet is watched for a late change (a fetch, an animation frame). */
const SETTLE_MS = 600;
const POLL_MS = 50;

/**
 * The tab as a person sees it, as one comparable string. `step`: a step begins with this look
 * (each frame counts the page's changes from now on, but not at places that change by
 * themselves: content/changes.ts).
 */
export async function tabState(tabId: number, step?: true): Promise<string> {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (tab === null) return "closed";
  const frames = await allFrames(tabId);
  const request: FrameRequest = step === undefined ? { op: "state" } : { op: "state", step };
  const states = await Promise.all(
    frames.map(async (f) => {
      const reply = (await chrome.tabs.sendMessage(tabId, request, { frameId: f.frameId }).catch(() => undefined)) as { ok: boolean; value?: FrameState } | undefined;
      return reply?.ok === true && reply.value !== undefined ? `${f.frameId}:${JSON.stringify(reply.value)}` : `${f.frameId}:?`;
    }),
  );
  return JSON.stringify([tab.url, tab.pendingUrl ?? "", tab.status, tab.title, states.sort()]);
}

/**
 * The step was judged: what the page changes from now on is its own doing (a ticker's tick, a
 * carousel's turn), learnt as such. Not waited for: nothing depends on it.
 */
export function stepJudged(tabId: number): void {
  void allFrames(tabId).then(
    (frames) => {
      for (const f of frames) void chrome.tabs.sendMessage(tabId, { op: "state", step: false } satisfies FrameRequest, { frameId: f.frameId }).catch(() => undefined);
    },
    () => undefined,
  );
}

/**
 * Whether the tab changed since `before` — or `elsewhere` settled first (a tab the step opened
 * joined the task) — watching up to [`SETTLE_MS`] for a change that comes late. A change seen at
 * once ends the wait: a click that did its work costs no fixed delay.
 */
export async function changedSince(tabId: number, before: string, elsewhere?: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void elsewhere?.then(() => (settled = true));
  for (const deadline = Date.now() + SETTLE_MS; ; await Promise.race([sleep(POLL_MS), elsewhere])) {
    if (settled || (await tabState(tabId)) !== before) return true;
    if (Date.now() >= deadline) return false;
  }
}

/** The warning of a step that changed nothing. */
export function noEffect(name: ActionName): string {
  const what = name.replace(/^browser_/, "").replace(/_/g, " ");
  return `no visible effect: after the ${what} the page did not change (no navigation, no new content, no dialog or tab; nothing checked, chosen or focused). The element may not do what its label says, may need something else first, or the page ignores this kind of input`;
}
