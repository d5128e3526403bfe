// Drop zones: what on a page accepts a drop. Often only the page's own listeners say so (a
// board's column listens for `dragover` and `drop` and looks like any other box), and a content
// script cannot see listeners; the DevTools protocol can (`DOMDebugger.getEventListeners`).
// Before an index of a page with something to drag (HTML5 `draggable`), the boxes around what
// can be dragged and the boxes like them beside them (a board's columns, a list and its items)
// are asked for drop listeners, and those that have them are marked with `DROP_ZONE_ATTR` in the
// top frame; the content script lists them as `dropzone` (with what ARIA and the common
// libraries mark: content/dom-index.ts), so `drag {from: index, to: index}` needs no vision. A
// page with nothing to drag costs nothing: its index says so first, and clears the marks itself
// (`needsDropSearch`).
import type { Debugger } from "./cdp.ts";
import { DROP_ZONE_ATTR } from "./frame-protocol.ts";

/** At most this many boxes are asked for their listeners. */
const MAX_CANDIDATES = 200;
/** A page paused in a dialog of its own does not answer; the index goes on without. */
const TIMEOUT_MS = 2_000;
const GROUP = "mimo-drop-zones";
const DROP_EVENTS = new Set(["drop", "dragover", "dragenter"]);

/**
 * Runs in the page's main world (sent as its source: it must not use anything outside itself):
 * clears the last marks and returns the boxes that may accept a drop — first the draggables'
 * parents, then their ancestors up to three more levels, each with the siblings like it (same
 * tag and class) — then the document, last, all after how many are parents (or their likes);
 * or null when nothing can be dragged.
 */
function candidates(attr: string, max: number): Array<number | EventTarget> | null {
  for (const el of Array.from(document.querySelectorAll(`[${attr}]`))) el.removeAttribute(attr);
  const dragged = Array.from(document.querySelectorAll('[draggable="true"]'));
  if (dragged.length === 0) return null;
  const found = new Set<Element>();
  let near = 0;
  for (let depth = 0; depth < 4; depth++) {
    for (const el of dragged) {
      let box = el.parentElement;
      for (let up = 0; up < depth && box !== null; up++) box = box.parentElement;
      if (box === null || box === document.body || box === document.documentElement) continue;
      for (const like of [box, ...Array.from(box.parentElement?.children ?? [])]) {
        if (found.size < max && (like === box || (like.tagName === box.tagName && like.className === box.className))) found.add(like);
      }
    }
    if (depth === 0) near = found.size;
  }
  return [near, ...found, document];
}

/** Marks the top frame's drop zones for the index that follows; how many it found. */
export async function markDropZones(cdp: Debugger, tabId: number): Promise<number> {
  const send = <T>(method: string, params: Record<string, unknown>) => cdp.send<T>(tabId, method, params, TIMEOUT_MS);
  const { result, exceptionDetails } = await send<{ result: { objectId?: string; subtype?: string }; exceptionDetails?: { text: string } }>("Runtime.evaluate", {
    expression: `(${candidates.toString()})(${JSON.stringify(DROP_ZONE_ATTR)}, ${MAX_CANDIDATES})`,
    objectGroup: GROUP,
    silent: true,
  });
  if (exceptionDetails !== undefined) throw new Error(exceptionDetails.text);
  if (result.objectId === undefined) return 0;
  try {
    const { result: items } = await send<{ result: Array<{ name: string; value?: { objectId?: string; value?: unknown } }> }>("Runtime.getProperties", { objectId: result.objectId, ownProperties: true });
    const near = Number(items.find((p) => p.name === "0")?.value?.value ?? 0);
    const boxes = items.filter((p) => /^\d+$/.test(p.name) && p.value?.objectId !== undefined).map((p) => ({ index: Number(p.name), objectId: p.value!.objectId! }));
    const accepts = await Promise.all(
      boxes.map(async (box) => {
        const { listeners } = await send<{ listeners: Array<{ type: string }> }>("DOMDebugger.getEventListeners", { objectId: box.objectId, depth: 0 });
        return listeners.some((l) => DROP_EVENTS.has(l.type));
      }),
    );
    const documentAt = boxes.length - 1;
    let marked = boxes.filter((_, i) => accepts[i] && i !== documentAt).map((b) => b.index);
    // Listened for on the document (a library that finds the target itself): the draggables'
    // own boxes, and those like them, accept.
    if (marked.length === 0 && accepts[documentAt] === true) marked = boxes.slice(0, near).map((b) => b.index);
    if (marked.length === 0) return 0;
    await send("Runtime.callFunctionOn", {
      objectId: result.objectId,
      functionDeclaration: "function (attr, marked) { for (const i of marked) this[i].setAttribute(attr, ''); }",
      arguments: [{ value: DROP_ZONE_ATTR }, { value: marked }],
      silent: true,
    });
    return marked.length;
  } finally {
    await send("Runtime.releaseObjectGroup", { objectGroup: GROUP }).catch(() => undefined);
  }
}
