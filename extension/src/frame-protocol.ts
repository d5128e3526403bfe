// Messages between the service worker and the content script of one frame
// (`chrome.tabs.sendMessage(tabId, request, { frameId })`). Every answer is a `FrameReply`:
// the content script never lets an exception cross, it names a protocol error code instead.
import type { BoundingBox, ElementFacts, ErrorCode, PiiKind, ScanScope, ScrollDirection, Target } from "../../protocol/ts/protocol.ts";
import type { Candidate } from "./targets.ts";

export const DEFAULT_CLICK_ATTR = "data-mimo_click_id";

/** Marks what accepts a drop, found by its listeners before an index (drop-zones.ts). */
export const DROP_ZONE_ATTR = "data-mimo-dropzone";

/**
 * An element named one way (see `Target`): by click id (written to `attr` by the last index),
 * xpath, CSS selector, what it says (`label`), or ARIA role (narrowed by `label`).
 */
export type FrameTarget = Target & { attr: string };

/** What a frame holds for a target: its best matches' rank (lower is better), how many, and the first few. */
export type Located = { rank: number; total: number; candidates: Candidate[] };

/** A point or rectangle in a frame's own viewport (CSS pixels). */
export type Point = { x: number; y: number };

/** The kind of element a step acts on, which says what change counts as its effect (content/expectations.ts). */
export type ExpectedKind = "toggle" | "menu" | "link" | "submit" | "button" | "select" | "drag" | "any";

/** Why an element is acted on, as the worker's operations say it. */
export type StepPurpose = "click" | "select" | "dragFrom" | "dragTo";

export type OverlayState = "idle" | "hidden" | "ongoing" | "waiting" | "paused" | "takeover";

export type IndexedElement = {
  clickId: number;
  tag: string;
  role?: string;
  text?: string;
  xpath?: string;
  bbox: BoundingBox;
  value?: string;
  checked?: boolean;
  disabled?: boolean;
  expanded?: boolean;
  facts?: ElementFacts;
};

/** A line of the compact text; `frame` lines stand for an iframe's content, spliced in by the worker. */
export type IndexLine = { depth: number; text: string } | { depth: number; frame: string };

/**
 * An iframe of the frame that answered, with where its content box is. Chrome gives content
 * scripts no way to name an iframe element's frame id, so each iframe gets a token, posted to
 * its window; the worker asks the child frames for theirs (`whoami`) to match them up.
 */
export type ChildFrame = { token: string; box: BoundingBox };

/** The message a frame posts to an iframe's window to give it its token. */
export const FRAME_TOKEN_KEY = "__mimoFrameToken";

export type FrameIndex = {
  elements: IndexedElement[];
  lines: IndexLine[];
  frames: ChildFrame[];
  nextId: number;
  url: string;
  title: string;
  scrollX: number;
  scrollY: number;
  viewport: { w: number; h: number };
  /** The document's scrollable size. */
  size: { w: number; h: number };
  /** Time spent, in ms: in total and per phase (walk, boxes, checks, output). */
  ms: number;
  phases: Record<string, number>;
};

export type Prepared = {
  /** Where to click, in the frame's viewport. */
  point: Point;
  tag: string;
  /** For typing: what kind of editable the element is (`value`: a date, time, colour or slider input, set whole). */
  editable?: "input" | "textarea" | "contenteditable" | "value";
  /** For a click on a checkbox, radio button or switch (or its label): whether it is ticked now. */
  checked?: boolean;
};

/**
 * Where `findText` scrolls when the text is not there: nowhere (`stay`), to the end (`end`, to
 * make a feed load more), or two screens back (`back`), so that the end of a feed that is
 * still near the view after it loaded goes away and, scrolled to again, comes back: a feed that
 * watches its end (an IntersectionObserver, a scroll listener) is only told when it changes.
 */
export type FeedScroll = "stay" | "end" | "back";

export type FrameRequest =
  | { op: "ping" }
  /**
   * `askDropSearch`: the top frame's drop zones were not searched for yet (drop-zones.ts); a
   * frame with something to drag answers `{ dropSearch: true }` instead of its index.
   */
  | { op: "index"; scope: ScanScope; attr: string; startId: number; clip?: BoundingBox; xpath: boolean; askDropSearch?: boolean; within?: number }
  | { op: "prepare"; target: FrameTarget; purpose: "click" | "type" | "hover" | "dragFrom" | "dragTo" }
  | { op: "frameBox"; token: string; point?: Point }
  | { op: "tagFrames" }
  | { op: "whoami"; waitMs: number }
  | { op: "domClick"; target: FrameTarget }
  | { op: "domHover"; target: FrameTarget }
  | { op: "focusForTyping"; target: FrameTarget }
  | { op: "domType"; target: FrameTarget; text: string; submit: boolean }
  | { op: "readValue"; target: FrameTarget }
  | { op: "domKey"; key: string; code: string; keyCode: number; modifiers: number }
  | { op: "select"; target: FrameTarget; option: string }
  | { op: "scroll"; target?: FrameTarget; direction: ScrollDirection; amount?: number }
  | { op: "html"; xpath?: string }
  | { op: "probe"; text?: string; selector?: string }
  | { op: "findText"; text: string; scroll: FeedScroll }
  | { op: "elementAt"; point: Point; expect?: ElementFacts; purpose?: StepPurpose }
  | { op: "guardFocus"; expect: ElementFacts }
  | { op: "setFiles"; target: FrameTarget; files: Array<{ name: string; type: string; base64: string }> }
  | { op: "readyState" }
  | { op: "locate"; target: FrameTarget }
  // `hide`: the overlay is not drawn meanwhile (a screenshot); otherwise our input goes through it.
  | { op: "mark"; untilMs: number; hide?: boolean }
  | { op: "markSecret"; target: FrameTarget }
  | { op: "pageText" }
  | { op: "mask"; kinds: PiiKind[]; secrets: Array<[number, number]> }
  | { op: "unmask" }
  /** What a person would notice of the frame; `step`: a step begins (true) or was judged (false). */
  | { op: "state"; step?: boolean }
  // `lingerMs`: an `ongoing` label going `hidden` stays drawn this long (see `Overlay.set`).
  | { op: "overlay"; state: OverlayState; label?: string; lingerMs?: number };

/** What a person would notice change in a frame (content/changes.ts). */
/**
 * A frame during a step: its document (told apart from the one a reload replaces it with), its
 * address and title, and what changed since the step began that the step's kind counts
 * (`expects`, once the element the step acts on is known: content/expectations.ts).
 */
export type FrameState = { doc: string; url: string; title: string; effects: string[]; expects?: ExpectedKind };

export type FrameReply<T = unknown> = { ok: true; value: T } | { ok: false; code: ErrorCode; message: string };

/** Messages from a content script to the worker (`chrome.runtime.sendMessage`). */
export type ContentMessage =
  | { type: "mimo:overlay-state" }
  | { type: "mimo:takeover"; reason: string }
  | { type: "mimo:resume" }
  | { type: "mimo:stop" };

export function isContentMessage(message: unknown): message is ContentMessage {
  const type = typeof message === "object" && message !== null ? (message as { type?: unknown }).type : undefined;
  return type === "mimo:overlay-state" || type === "mimo:takeover" || type === "mimo:resume" || type === "mimo:stop";
}
