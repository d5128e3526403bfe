// Input into the task's tab: finding the frame an element lives in, mapping a point in that
// frame to the top frame's viewport, and sending CDP mouse and key events that the content
// scripts' takeover watch knows to be ours.
import type { Target } from "../../protocol/ts/protocol.ts";
import type { TabContext } from "./actions/handler.ts";
import type { Debugger } from "./cdp.ts";
import { DEFAULT_CLICK_ATTR } from "./frame-protocol.ts";
import type { FrameTarget, Located, Point } from "./frame-protocol.ts";
import { allFrames, everyFrame, frameCall, tabGone } from "./frames.ts";
import type { FrameInfo } from "./frames.ts";
import type { KeySpec } from "./keys.ts";
import { checkDomains, siteRulesRefusal } from "./guard.ts";
import { ActionError, errorText } from "./results.ts";
import { siteAllowed } from "./site-access.ts";
import { ambiguity, notFound, targetDescription, targetProblem } from "./targets.ts";

/** How long our CDP input is expected by the content scripts' takeover watch. */
export const MARK_MS = 3_000;

/**
 * The frame a target lives in: click ids by the last index; xpaths and selectors in the first
 * frame (the top one first) that has a match; labels and roles in the frame with the one best
 * match of the whole tab — several equally good, in one frame or across frames, are refused.
 */
export async function route(ctx: TabContext, p: Target): Promise<{ frameId: number; target: FrameTarget }> {
  const problem = targetProblem(p);
  if (problem !== undefined) throw new ActionError("INVALID_TARGET", problem);
  const attr = ctx.task.attr ?? DEFAULT_CLICK_ATTR;
  if (p.clickId !== undefined) {
    if (!Number.isInteger(p.clickId)) throw new ActionError("SCHEMA_VALIDATION_FAILED", "clickId must be an integer");
    const indexed = ctx.task.indexTabId;
    if (indexed !== undefined && indexed !== ctx.tabId) {
      throw new ActionError("TARGET_NOT_FOUND", `click id ${p.clickId} is from the element list of tab ${indexed}, not of tab ${ctx.tabId} where the task acts now: look at this tab's page first`, false);
    }
    const range = ctx.task.clicks?.find(([first, last]) => p.clickId! >= first && p.clickId! <= last);
    if (range === undefined) throw new ActionError("TARGET_NOT_FOUND", `no element has click id ${p.clickId} in the last DOM index (index the page first)`);
    const target: FrameTarget = { clickId: p.clickId, attr };
    if (p.expect !== undefined) target.expect = p.expect;
    if (range[2] !== 0) await checkFrame(ctx, range[2]);
    return { frameId: range[2], target };
  }
  // Only the fields of the one way given: an action's own parameters stay out of the target.
  const target: FrameTarget = { attr };
  for (const field of ["xpath", "selector", "label", "role"] as const) if (p[field] !== undefined) target[field] = p[field];
  if (p.expect !== undefined) target.expect = p.expect;
  const frames = await allFrames(ctx.tabId);
  const allowed = await Promise.all(frames.map(async (f) => siteRulesRefusal(ctx.task, f.url) === null && (await siteAllowed(f.url))));
  const found: Array<{ frameId: number; located: Located }> = [];
  for (const f of [{ frameId: 0 }, ...frames.filter((f, i) => f.frameId !== 0 && allowed[i])]) {
    const located = await frameCall<Located | null>(ctx.tabId, f.frameId, { op: "locate", target }).catch((error: unknown) => {
      if (f.frameId === 0) throw error;
      return null;
    });
    if (located === null) continue;
    if (target.xpath !== undefined || target.selector !== undefined) return { frameId: f.frameId, target };
    found.push({ frameId: f.frameId, located });
  }
  if (target.xpath !== undefined) throw new ActionError("TARGET_NOT_FOUND", `no element matches the xpath ${target.xpath}`);
  if (target.selector !== undefined) throw new ActionError("TARGET_NOT_FOUND", `no element matches the selector ${target.selector}`);
  const what = targetDescription(target);
  if (found.length === 0) throw new ActionError("TARGET_NOT_FOUND", notFound(what));
  const top = Math.min(...found.map((f) => f.located.rank));
  const tied = found.filter((f) => f.located.rank === top);
  const total = tied.reduce((n, f) => n + f.located.total, 0);
  if (total > 1) throw new ActionError("INVALID_TARGET", ambiguity(what, total, tied.flatMap((f) => f.located.candidates)));
  return { frameId: tied[0]!.frameId, target };
}

/**
 * Refuses acting in a frame whose page the task's rules keep it from (the top frame's is checked
 * with the tab's): one loaded before the rules held the tab, or one that went there since the
 * page was indexed, whose request they cancelled.
 */
async function checkFrame(ctx: TabContext, frameId: number): Promise<void> {
  const frame = await chrome.webNavigation.getFrame({ tabId: ctx.tabId, frameId }).catch(() => null);
  if (frame !== null) checkDomains(ctx.task, frame.url);
}

/** A point in a frame's viewport, in the top frame's viewport (scrolling the iframes into view). */
export async function toTop(tabId: number, frameId: number, point: Point): Promise<Point> {
  if (frameId === 0) return point;
  const frames = await allFrames(tabId);
  let p = point;
  let f = frameId;
  while (f !== 0) {
    const info: FrameInfo | undefined = frames.find((x) => x.frameId === f);
    if (info === undefined) throw new ActionError("TARGET_NOT_FOUND", `the element's frame ${f} is gone`);
    let token = await frameCall<string | null>(tabId, f, { op: "whoami", waitMs: 0 });
    if (token === null) {
      await frameCall(tabId, info.parentFrameId, { op: "tagFrames" });
      token = await frameCall<string | null>(tabId, f, { op: "whoami", waitMs: 500 });
    }
    if (token === null) throw new ActionError("TARGET_NOT_FOUND", `the element's frame ${f} cannot be found in its parent`);
    const box = await frameCall<{ x: number; y: number }>(tabId, info.parentFrameId, { op: "frameBox", token, point: p });
    p = { x: p.x + box.x, y: p.y + box.y };
    f = info.parentFrameId;
  }
  return p;
}

/** Runs CDP input with every frame told to expect it (so it is not taken for the person's). */
export async function ourInput<T>(cdp: Debugger, tabId: number, work: () => Promise<T>): Promise<T> {
  await cdp.attach(tabId);
  await everyFrame(tabId, { op: "mark", untilMs: MARK_MS });
  try {
    return await work();
  } finally {
    void everyFrame(tabId, { op: "mark", untilMs: 0 });
  }
}

/** One `Input.dispatchMouseEvent` at a point of the top frame's viewport. */
export async function dispatchMouse(cdp: Debugger, tabId: number, type: string, p: Point, extra: Record<string, unknown> = {}): Promise<void> {
  await cdp.send(tabId, "Input.dispatchMouseEvent", { type, x: p.x, y: p.y, ...extra });
}

/**
 * A left click at `p`: the pointer moved there, pressed and released. The three events are sent
 * at once rather than each after the previous one's answer (as puppeteer's `click` does): they
 * travel in order on the tab's one input channel, and the page handles each in turn as before,
 * without two round trips to its renderer in between.
 *
 * Fails with CDP's own error (`CdpFailure`, after which DOM events may be tried) only when the
 * press did not reach the page. A press that did is never followed by another click: when its
 * release goes unanswered because the click closed its tab (a sign-in popup's button), the
 * click is done; otherwise it may have taken effect, and is not to be run again.
 */
export async function clickMouse(cdp: Debugger, tabId: number, p: Point): Promise<void> {
  const [, pressed, released] = await Promise.allSettled([
    dispatchMouse(cdp, tabId, "mouseMoved", p),
    dispatchMouse(cdp, tabId, "mousePressed", p, { button: "left", buttons: 1, clickCount: 1 }),
    dispatchMouse(cdp, tabId, "mouseReleased", p, { button: "left", buttons: 0, clickCount: 1 }),
  ]);
  if (pressed.status === "rejected") throw pressed.reason;
  if (released.status === "fulfilled" || (await tabGone(tabId))) return;
  throw new ActionError("TIMEOUT", `the click was pressed, but its release was not confirmed (${errorText(released.reason)}): it may have taken effect`, false);
}

/** A key pressed and released (`Input.dispatchKeyEvent`). */
export async function dispatchKey(cdp: Debugger, tabId: number, k: KeySpec): Promise<void> {
  const base = { key: k.key, code: k.code, windowsVirtualKeyCode: k.keyCode, nativeVirtualKeyCode: k.keyCode, modifiers: k.modifiers };
  await cdp.send(tabId, "Input.dispatchKeyEvent", k.text !== undefined ? { ...base, type: "keyDown", text: k.text, unmodifiedText: k.text } : { ...base, type: "rawKeyDown" });
  await cdp.send(tabId, "Input.dispatchKeyEvent", { ...base, type: "keyUp" });
}
