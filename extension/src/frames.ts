// Talking to the content script of one frame of a tab, injecting it when the frame has none
// (pages loaded before the extension, frames the manifest's matches miss).
import { bounded } from "./bounded.ts";
import type { FrameReply, FrameRequest, OverlayState } from "./frame-protocol.ts";
import { ActionError, errorText } from "./results.ts";

/**
 * How long a frame's content script may take to answer a look or a preparation: it answers at
 * once unless its page's main thread is blocked (a long script, a dialog nobody answers, a
 * frozen tab). Building the element list or the text of a huge page takes longer.
 */
const FRAME_ANSWER_MS = 10_000;
const FRAME_WORK_MS = 30_000;
/** How long a look at one frame during a step may take: a frame that does not answer is not looked at. */
export const FRAME_LOOK_MS = 1_500;
/**
 * What a frame does to its page itself (DOM events, typing, choosing, scrolling, files). These
 * are not bounded here: a request the page holds (behind a `confirm()`) still runs once it is
 * free, so ending its wait would let the next one run too — the server names that wait instead
 * (its execution timeout and `action_query`: "still running in the browser"), and the
 * extension refuses another page-changing action meanwhile.
 */
const ACTS_ON_PAGE: ReadonlySet<FrameRequest["op"]> = new Set<FrameRequest["op"]>(["domClick", "domHover", "focusForTyping", "domType", "domKey", "select", "scroll", "setFiles"]);

function answerBound(request: FrameRequest): number | undefined {
  if (ACTS_ON_PAGE.has(request.op)) return undefined;
  if (request.op === "index" || request.op === "pageText" || request.op === "html" || request.op === "findText") return FRAME_WORK_MS;
  if (request.op === "whoami") return FRAME_ANSWER_MS + request.waitMs;
  return FRAME_ANSWER_MS;
}

async function send<T>(tabId: number, frameId: number, request: FrameRequest, ms = answerBound(request)): Promise<FrameReply<T> | undefined> {
  const asked = chrome.tabs.sendMessage(tabId, request, { frameId }) as Promise<FrameReply<T> | undefined>;
  if (ms === undefined) return asked;
  return bounded(asked, ms, () => new ActionError("TIMEOUT", `frame ${frameId} of tab ${tabId} did not answer ${request.op} within ${ms / 1000} s: its page is busy, frozen or held by a dialog`, true));
}

/** Whether the tab is closed. */
export async function tabGone(tabId: number): Promise<boolean> {
  return (await chrome.tabs.get(tabId).catch(() => null)) === null;
}

/** Sends a request to a frame's content script and returns its value, or throws its error. */
export async function frameCall<T>(tabId: number, frameId: number, request: FrameRequest): Promise<T> {
  let reply: FrameReply<T> | undefined;
  try {
    reply = await send<T>(tabId, frameId, request);
  } catch (error) {
    if (await tabGone(tabId)) throw new ActionError("TASK_TAB_CLOSED", "the task's tab was closed", false);
    if (error instanceof ActionError) throw error;
    if (!/Receiving end does not exist|Could not establish connection/i.test(errorText(error))) {
      throw new ActionError("TIMEOUT", `the page did not answer (${errorText(error)})`, true);
    }
    try {
      const injected = chrome.scripting.executeScript({ target: { tabId, frameIds: [frameId] }, files: ["content.js"] });
      await bounded(injected, FRAME_ANSWER_MS, () => new Error(`the content script was not in place within ${FRAME_ANSWER_MS / 1000} s`));
      reply = await send<T>(tabId, frameId, request);
    } catch (again) {
      throw new ActionError("TIMEOUT", `the page's frame ${frameId} cannot be reached (${errorText(again)}); it may be loading`, true);
    }
  }
  if (reply === undefined || reply === null) throw new ActionError("TIMEOUT", `the page's frame ${frameId} did not answer`, true);
  if (!reply.ok) throw new ActionError(reply.code, reply.message);
  return reply.value;
}

export type FrameInfo = { frameId: number; parentFrameId: number; url: string };

export async function allFrames(tabId: number): Promise<FrameInfo[]> {
  const frames = await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null);
  return (frames ?? []).map((f) => ({ frameId: f.frameId, parentFrameId: f.parentFrameId, url: f.url }));
}

/** Sends to every frame, ignoring the ones that cannot answer (or not at once). */
export async function everyFrame(tabId: number, request: FrameRequest): Promise<void> {
  const frames = await allFrames(tabId);
  await Promise.all(frames.map((f) => send(tabId, f.frameId, request, FRAME_LOOK_MS).catch(() => undefined)));
}

/** What one frame answers at once, or null (it cannot, or not within [`FRAME_LOOK_MS`]). */
export async function frameLook<T>(tabId: number, frameId: number, request: FrameRequest): Promise<T | null> {
  const reply = await send<T>(tabId, frameId, request, FRAME_LOOK_MS).catch(() => undefined);
  return reply?.ok === true ? reply.value : null;
}

/** Tells the tab's frames the task state (the top frame draws it). */
export async function showOverlay(tabId: number, state: OverlayState, label?: string): Promise<void> {
  await everyFrame(tabId, label === undefined ? { op: "overlay", state } : { op: "overlay", state, label });
}
