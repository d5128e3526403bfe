// The content script, in every frame of every page of a site the person allowed (registered
// by site-access.ts with `allFrames` and `matchOriginAsFallback`, or injected on demand): answers
// the service worker's `FrameRequest`s, and watches for the person's own input. In the top
// frame it also draws the overlay.
//
// Takeover: while the tab's task runs (overlay `ongoing`), a trusted mouse press, key,
// wheel or touch that is not ours switches the task to `takeover`. Ours are the CDP events the
// worker dispatches: it marks every frame (`mark`) right before and clears the mark after.
import type { ContentMessage, FrameReply, FrameRequest, OverlayState } from "../frame-protocol.ts";
import { FRAME_TOKEN_KEY } from "../frame-protocol.ts";
import { frameState, stepUnderWay, watchChanges } from "./changes.ts";
import { allIframes, FrameError, tagFrame } from "./dom.ts";
import { indexFrame, needsDropSearch } from "./dom-index.ts";
import { locate, resolveTarget } from "./locate.ts";
import { findText } from "./find.ts";
import * as act from "./interact.ts";
import { markSecret, maskFields, pageText, unmaskFields } from "./mask.ts";
import { Overlay } from "./overlay.ts";
import { riskFacts } from "./risk-facts.ts";

declare global {
  // eslint-disable-next-line no-var
  var __mimoContent: boolean | undefined;
}

function start(): void {
  const top = window === window.top;
  watchChanges();
  /** Our own CDP input is expected until this time (`performance.now()`). */
  let oursUntil = 0;
  /** The tab's task state, as the worker last said. */
  let state: OverlayState = "idle";
  let reported = false;

  const tell = (message: ContentMessage): void => {
    chrome.runtime.sendMessage(message).catch(() => undefined);
  };
  const overlay = top
    ? new Overlay({
        takeOver: () => takeover("the person pressed Take over"),
        resume: () => tell({ type: "mimo:resume" }),
        stop: () => tell({ type: "mimo:stop" }),
      })
    : null;

  const setState = (next: OverlayState, label?: string, lingerMs?: number) => {
    state = next;
    if (next !== "takeover") reported = false;
    overlay?.set(next, label, lingerMs);
  };

  const takeover = (reason: string) => {
    if (reported) return;
    reported = true;
    if (overlay !== null) overlay.set("takeover");
    tell({ type: "mimo:takeover", reason });
  };

  const watch = (event: Event) => {
    if (!event.isTrusted || state !== "ongoing") return;
    if (performance.now() < oursUntil) return;
    if (overlay?.owns(event)) return;
    takeover(`${event.type} by the person`);
  };
  for (const type of ["mousedown", "keydown", "wheel", "touchstart"]) {
    window.addEventListener(type, watch, { capture: true, passive: true });
  }

  // The token our parent frame gave us (see `ChildFrame`).
  let token: string | null = null;
  let tokenWaiters: Array<() => void> = [];
  window.addEventListener("message", (event: MessageEvent) => {
    if (event.source !== window.parent || window.parent === window) return;
    const data = event.data as Record<string, unknown> | null;
    if (typeof data !== "object" || data === null || typeof data[FRAME_TOKEN_KEY] !== "string") return;
    token = data[FRAME_TOKEN_KEY] as string;
    const waiters = tokenWaiters;
    tokenWaiters = [];
    for (const w of waiters) w();
  });
  const whoami = async (waitMs: number): Promise<string | null> => {
    if (token === null && waitMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        tokenWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return token;
  };

  const handle = (req: FrameRequest): unknown => {
    switch (req.op) {
      case "ping":
        return { top };
      case "index":
        return req.askDropSearch === true && needsDropSearch() ? { dropSearch: true } : indexFrame(req);
      case "prepare":
        return act.prepare(req.target, req.purpose);
      case "frameBox":
        return act.frameBox(req.token, req.point);
      case "tagFrames":
        return allIframes().map((f) => tagFrame(f));
      case "whoami":
        return whoami(req.waitMs);
      case "domClick":
        return act.domClick(req.target);
      case "domHover":
        return act.domHover(req.target);
      case "focusForTyping":
        return act.focusForTyping(req.target);
      case "domType":
        return act.domType(req.target, req.text, req.submit);
      case "readValue":
        return act.readValue(req.target);
      case "domKey":
        return act.domKey(req.key, req.code, req.keyCode, req.modifiers);
      case "select":
        return act.selectOption(req.target, req.option);
      case "scroll":
        return act.scroll(req.target, req.direction, req.amount);
      case "html":
        return act.html(req.xpath);
      case "probe":
        return act.probe(req.text, req.selector);
      case "findText":
        return findText(req.text, req.scroll);
      case "elementAt":
        return act.elementAt(req.point, req.expect, req.purpose);
      case "guardFocus":
        return act.guardFocus(req.expect);
      case "setFiles":
        return act.setFiles(req.target, req.files);
      case "readyState":
        return document.readyState;
      case "locate":
        return locate(req.target);
      case "mark":
        oursUntil = req.untilMs > 0 ? performance.now() + req.untilMs : 0;
        overlay?.suspend(req.untilMs > 0, req.hide === true);
        return true;
      case "overlay":
        setState(req.state, req.label, req.lingerMs);
        return true;
      case "markSecret": {
        const field = resolveTarget(req.target);
        markSecret(field);
        return { sendsTo: riskFacts(field)?.form?.action };
      }
      case "pageText":
        return pageText();
      case "mask":
        return maskFields(req.kinds, req.secrets);
      case "unmask":
        unmaskFields();
        return true;
      case "state":
        if (req.step !== undefined) stepUnderWay(req.step);
        return frameState();
    }
  };

  chrome.runtime.onMessage.addListener((message: unknown, sender, sendResponse: (reply: FrameReply) => void) => {
    // Requests come from the extension's service worker only (no tab), never from a page.
    if (sender.id !== chrome.runtime.id || sender.tab !== undefined) return false;
    const req = message as FrameRequest;
    if (typeof req !== "object" || req === null || typeof req.op !== "string") return false;
    Promise.resolve()
      .then(() => handle(req))
      .then(
        (value) => sendResponse({ ok: true, value: value ?? null }),
        (error: unknown) => {
          if (error instanceof FrameError) sendResponse({ ok: false, code: error.code, message: error.message });
          else sendResponse({ ok: false, code: "INTERNAL_ERROR", message: error instanceof Error ? error.message : String(error) });
        },
      );
    return true;
  });

  // A task tab that navigated gets its state back.
  chrome.runtime
    .sendMessage({ type: "mimo:overlay-state" } satisfies ContentMessage)
    .then((reply: { state?: OverlayState; label?: string } | undefined) => {
      if (reply?.state !== undefined) setState(reply.state, reply.label);
    })
    .catch(() => undefined);
}

if (globalThis.__mimoContent !== true) {
  globalThis.__mimoContent = true;
  start();
}
