// Every step is verified: a click, a key, a choice or a drag that changed nothing a person
// would notice is reported as such (a warning, and partial), never as a plain success. What
// changed is judged from every frame of the tab (content/changes.ts) and the tab itself; what
// the page changes by itself (a clock, a ticker) is no effect of the step.
import { ACTION_TRAITS } from "../../protocol/ts/protocol.ts";
import type { ActionName } from "../../protocol/ts/protocol.ts";
import type { ExpectedKind, FrameRequest, FrameState } from "./frame-protocol.ts";
import { allFrames, everyFrame, frameLook } from "./frames.ts";
import { sleep } from "./loading.ts";

/**
 * The actions the executor watches the tab after (`verify: "watched"` in the catalog: what
 * counts follows from the element they act on, content/expectations.ts); the others check
 * themselves, or only look.
 */
export const EXPECTS_EFFECT: ReadonlySet<ActionName> = new Set((Object.keys(ACTION_TRAITS) as ActionName[]).filter((name) => ACTION_TRAITS[name].verify === "watched"));

/** What did not happen, by what the step acted on. */
const NOT_SEEN: Record<ExpectedKind, string> = {
  toggle: "the element's own state (checked, pressed, selected, open) did not change",
  menu: "it did not expand, and no menu or new items appeared",
  link: "no navigation, and nothing changed in its form or part of the page, the page's header or a dialog",
  submit: "no navigation, and nothing changed in its form or part of the page, the page's header or a dialog",
  button: "nothing changed in its form or part of the page, the page's header or a dialog, and no navigation",
  select: "the chosen option is not the selected one (the page changed it back)",
  drag: "the dragged element did not move, and nothing changed where it was dropped or where it came from",
  any: "no navigation, no new content, no dialog or tab; nothing checked, chosen or focused",
};
/** How long a step that changed nothing yet is watched for a late change (a fetch, an animation frame). */
const SETTLE_MS = 600;
const POLL_MS = 50;

/** A frame's answer during a step, and the frame it is in (-1: none, it is the top). */
type FrameLook = { parent: number; state: FrameState | null };
/** The tab as a person sees it during a step: its own address, load and title, and each frame's answer. */
export type TabLook = { url: string; status: string; title: string; frames: Map<number, FrameLook> } | "closed";

/**
 * The tab as a person sees it. `step`: a step begins with this look (each frame counts the page's
 * changes from now on, but not at places that change by themselves: content/changes.ts).
 */
export async function tabState(tabId: number, step?: true): Promise<TabLook> {
  const request: FrameRequest = step === undefined ? { op: "state" } : { op: "state", step };
  // The tab, its frames and the top frame's state asked at once: each is a round trip, and the
  // top frame is always there (most pages have no other).
  const top = frameLook<FrameState>(tabId, 0, request);
  const [tab, frames] = await Promise.all([chrome.tabs.get(tabId).catch(() => null), allFrames(tabId)]);
  if (tab === null) return "closed";
  const states = await Promise.all(frames.map(async (f) => [f.frameId, { parent: f.parentFrameId, state: await (f.frameId === 0 ? top : frameLook<FrameState>(tabId, f.frameId, request)) }] as const));
  return { url: `${tab.url}|${tab.pendingUrl ?? ""}`, status: tab.status ?? "", title: tab.title ?? "", frames: new Map(states) };
}

/**
 * The frames whose changes count: once a frame knows what the step acts on (`expects`), that
 * frame and the frames it is in (a widget's button shows its effect in the page around it), not
 * its siblings — an ad's iframe reloading is not the effect of a click on a checkbox.
 */
function counted(look: Exclude<TabLook, "closed">): Set<number> | "all" {
  const knowing = [...look.frames].filter(([, f]) => f.state?.expects !== undefined && f.state.expects !== "any");
  if (knowing.length === 0) return "all";
  const frames = new Set<number>();
  for (let [id] of knowing) {
    for (; id >= 0 && !frames.has(id); id = look.frames.get(id)?.parent ?? -1) frames.add(id);
  }
  return frames;
}

/**
 * Whether the step had an effect between two looks: the tab navigated, loaded or retitled, a
 * frame's document, address or title changed, or a frame saw a change the step's kind counts.
 */
export function effectBetween(before: TabLook, now: TabLook): boolean {
  if (before === "closed" || now === "closed") return before !== now;
  if (before.url !== now.url || before.status !== now.status || before.title !== now.title) return true;
  const frames = counted(now);
  const scoped = frames !== "all";
  if (!scoped && (before.frames.size !== now.frames.size || [...now.frames.keys()].some((id) => !before.frames.has(id)))) return true;
  for (const [id, { state: frame }] of now.frames) {
    if (scoped && !frames.has(id)) continue;
    const was = before.frames.get(id)?.state;
    if (frame === null || was === null || was === undefined) {
      if (!scoped && frame !== was) return true;
      continue;
    }
    if (frame.doc !== was.doc || frame.url !== was.url || frame.title !== was.title || frame.effects.length > 0) return true;
  }
  return false;
}

/**
 * The step was judged: what the page changes from now on is its own doing (a ticker's tick, a
 * carousel's turn), learnt as such. Not waited for: nothing depends on it.
 */
export function stepJudged(tabId: number): void {
  void everyFrame(tabId, { op: "state", step: false });
}

/**
 * Whether the tab changed since `before` — or `elsewhere` settled first (a tab the step opened
 * joined the task) — watching up to [`SETTLE_MS`] for a change that comes late. A change seen at
 * once ends the wait: a click that did its work costs no fixed delay.
 */
export async function changedSince(tabId: number, before: TabLook, elsewhere?: Promise<unknown>): Promise<{ changed: boolean; kind: ExpectedKind }> {
  let settled = false;
  void elsewhere?.then(() => (settled = true));
  for (const deadline = Date.now() + SETTLE_MS; ; await Promise.race([sleep(POLL_MS), elsewhere])) {
    const now = settled ? "closed" : await tabState(tabId);
    if (settled || effectBetween(before, now)) return { changed: true, kind: expectedOf(now) };
    if (Date.now() >= deadline) return { changed: false, kind: expectedOf(now) };
  }
}

/** What the step acted on, as the frame that knows says (else any change counted). */
function expectedOf(look: TabLook): ExpectedKind {
  if (look === "closed") return "any";
  for (const { state } of look.frames.values()) if (state?.expects !== undefined && state.expects !== "any") return state.expects;
  return "any";
}

/** The warning of a step that did not do what its kind is expected to (`kind`: what it acted on). */
export function noEffect(name: ActionName, kind: ExpectedKind): string {
  const what = name.replace(/^browser_/, "").replace(/_/g, " ");
  return `no visible effect: after the ${what} ${NOT_SEEN[kind]}. The element may not do what its label says, may need something else first, or the page ignores this kind of input; what changed elsewhere (a clock, a ticker) is not its doing`;
}
