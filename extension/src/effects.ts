// Every step is verified: a click, a key, a choice or a drag that changed nothing a person
// would notice is reported as such (a warning, and partial), never as a plain success. What
// changed is judged from every frame of the tab (content/changes.ts) and the tab itself; what
// the page changes by itself (a clock, a ticker) is no effect of the step.
import type { ActionName } from "../../protocol/ts/protocol.ts";
import type { ExpectedKind, FrameRequest, FrameState } from "./frame-protocol.ts";
import { allFrames, everyFrame, frameLook } from "./frames.ts";
import { sleep } from "./loading.ts";

/**
 * What each action is expected to do, and who checks it: `watched` — the executor watches the tab
 * after it (what counts follows from the element it acts on: content/expectations.ts);
 * `handler` — the action's handler reads its own result back and says so; `none` — it only
 * looks, or what it does leaves nothing a page's scripts could see (a CSS `:hover` menu).
 */
const EXPECTED: Record<ActionName, "watched" | "handler" | "none"> = {
  task_start: "handler", // the task's tab opened or taken
  task_stop: "handler", // the task's tabs let go
  browser_debugger_attach: "handler", // the debugger attached
  browser_wait_for_loaded: "handler", // the page loaded
  browser_screenshot: "none", // a look
  browser_readability_extract: "none", // a look
  browser_dom_index: "none", // a look
  browser_observe: "none", // a look
  browser_xpath_scan: "none", // a look
  browser_click: "watched", // what the element's kind does
  browser_type: "handler", // the field's value, read back
  browser_get_html: "none", // a look
  browser_scroll: "handler", // the page or element scrolled (else: nothing left to scroll)
  browser_navigate: "handler", // the page at the address loaded
  browser_back: "handler", // the previous page of the tab's history
  browser_select_option: "watched", // the chosen option, read back
  browser_press_key: "watched", // any change at a place that does not change by itself
  browser_hover: "none", // a CSS hover leaves nothing to see
  browser_wait_for: "handler", // the text, element or address appeared
  browser_dialog: "handler", // the dialog answered and closed
  browser_scroll_to: "handler", // the text found and in view
  browser_click_at: "watched", // what the element at the point does
  browser_hover_at: "none", // a CSS hover leaves nothing to see
  browser_drag: "watched", // the dragged element moved, or where it was dropped changed
  browser_upload_file: "handler", // the files set on the input, read back
  browser_read_tab: "none", // a look
  browser_switch_tab: "handler", // the task in the other tab
  browser_open_tab: "handler", // a new tab at the address
  browser_close_tab: "handler", // the tab closed
  bridge_invoke: "handler", // the bridge's answer
};

/** The actions the executor watches the tab after (the others check themselves, or only look). */
export const EXPECTS_EFFECT: ReadonlySet<ActionName> = new Set((Object.keys(EXPECTED) as ActionName[]).filter((name) => EXPECTED[name] === "watched"));

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
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (tab === null) return "closed";
  const frames = await allFrames(tabId);
  const request: FrameRequest = step === undefined ? { op: "state" } : { op: "state", step };
  const states = await Promise.all(frames.map(async (f) => [f.frameId, { parent: f.parentFrameId, state: await frameLook<FrameState>(tabId, f.frameId, request) }] as const));
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
