// Talking to the content script of one frame of a tab, injecting it when the frame has none
// (pages loaded before the extension, frames the manifest's matches miss).
import type { FrameReply, FrameRequest, OverlayState } from "./frame-protocol.ts";
import { ActionError, errorText } from "./results.ts";

async function send<T>(tabId: number, frameId: number, request: FrameRequest): Promise<FrameReply<T> | undefined> {
  return (await chrome.tabs.sendMessage(tabId, request, { frameId })) as FrameReply<T> | undefined;
}

async function tabGone(tabId: number): Promise<boolean> {
  return (await chrome.tabs.get(tabId).catch(() => null)) === null;
}

/** Sends a request to a frame's content script and returns its value, or throws its error. */
export async function frameCall<T>(tabId: number, frameId: number, request: FrameRequest): Promise<T> {
  let reply: FrameReply<T> | undefined;
  try {
    reply = await send<T>(tabId, frameId, request);
  } catch (error) {
    if (await tabGone(tabId)) throw new ActionError("TASK_TAB_CLOSED", "the task's tab was closed", false);
    if (!/Receiving end does not exist|Could not establish connection/i.test(errorText(error))) {
      throw new ActionError("TIMEOUT", `the page did not answer (${errorText(error)})`, true);
    }
    try {
      await chrome.scripting.executeScript({ target: { tabId, frameIds: [frameId] }, files: ["content.js"] });
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

/** Sends to every frame, ignoring the ones that cannot answer. */
export async function everyFrame(tabId: number, request: FrameRequest): Promise<void> {
  const frames = await allFrames(tabId);
  await Promise.all(frames.map((f) => send(tabId, f.frameId, request).catch(() => undefined)));
}

/** Tells the tab's frames the task state (the top frame draws it). */
export async function showOverlay(tabId: number, state: OverlayState, label?: string): Promise<void> {
  await everyFrame(tabId, label === undefined ? { op: "overlay", state } : { op: "overlay", state, label });
}
