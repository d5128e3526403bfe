// Fields masked for the instant of a screenshot: those holding secrets (passwords, one-time
// codes, cards, and fields a secret was typed into) and, when evidence is filtered, those whose
// value holds personal data. Each is covered by an opaque box drawn over it in the page, removed
// right after the capture; the field itself is never changed. So is what shows a typed secret's
// value anywhere else (a page that echoes it, a field it was copied to): the frame's text is read
// (`pageText`), the worker — the only one that knows the values — finds them in it, and the
// elements showing those parts are covered too.
import type { PiiKind } from "../../../protocol/ts/protocol.ts";
import { pageChanged } from "../page-changes.ts";
import { hasPii } from "../redact.ts";
import { isSensitiveField } from "../secrets.ts";

export const MASK_HOST_ID = "__mimo_capture_mask";
const FIELDS = "input, textarea, select, [contenteditable]:not([contenteditable=false]), [data-sensitive], [data-mimo-secret]";
const NOT_TEXT = new Set(["hidden", "submit", "button", "reset", "image", "checkbox", "radio", "file", "range", "color"]);

/** Every field of the document, in open shadow roots too. */
function fields(root: Document | ShadowRoot, out: Element[] = []): Element[] {
  for (const el of Array.from(root.querySelectorAll("*"))) {
    if (el.matches(FIELDS)) out.push(el);
    if (el.shadowRoot !== null) fields(el.shadowRoot, out);
  }
  return out;
}

function valueOf(el: Element): string {
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) return el.value;
  if (el instanceof HTMLSelectElement) return el.selectedOptions[0]?.text ?? "";
  return (el as HTMLElement).innerText ?? el.textContent ?? "";
}

/** Elements whose text never shows. */
const NOT_SHOWN = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE"]);

/** A piece of the text last read by `pageText`: `[start, end)` in it, and what shows it. */
type Piece = { start: number; end: number; node: Text | HTMLInputElement | HTMLTextAreaElement };
let pieces: Piece[] = [];

/**
 * Everything the frame shows as text — its text nodes, in open shadow roots too, and what its
 * text fields hold — as one string, without separators (so a value split over elements is found
 * whole). Remembered, so that `maskFields` can cover the elements of parts of it.
 */
export function pageText(): string {
  const out: string[] = [];
  let at = 0;
  pieces = [];
  const add = (text: string, node: Piece["node"]) => {
    if (text === "") return;
    pieces.push({ start: at, end: at + text.length, node });
    out.push(text);
    at += text.length;
  };
  const walk = (root: Document | ShadowRoot) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => {
        const skip = n instanceof Element ? NOT_SHOWN.has(n.tagName) || n.id === MASK_HOST_ID : n.parentElement?.tagName === "TEXTAREA";
        return skip ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
      },
    });
    for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
      if (n instanceof Text) add(n.data, n);
      else if (n instanceof HTMLTextAreaElement || (n instanceof HTMLInputElement && n.type !== "hidden")) add(n.value, n);
      if (n instanceof Element && n.shadowRoot !== null) walk(n.shadowRoot);
    }
  };
  walk(document);
  return out.join("");
}

/** The boxes showing `[start, end)` of the text last read: its elements, and its own lines (text may overflow them). */
function boxesOf(start: number, end: number): DOMRect[] {
  const boxes: DOMRect[] = [];
  for (const p of pieces) {
    if (p.end <= start || p.start >= end || !p.node.isConnected) continue;
    if (!(p.node instanceof Text)) {
      boxes.push(p.node.getBoundingClientRect());
      continue;
    }
    // The node may have changed since it was read: offsets within what it holds now.
    const offset = (at: number) => Math.min(Math.max(at - p.start, 0), (p.node as Text).length);
    const range = document.createRange();
    range.setStart(p.node, offset(start));
    range.setEnd(p.node, offset(end));
    boxes.push(...Array.from(range.getClientRects()));
    const parent = p.node.parentElement;
    // The page itself is not "the element showing it": its lines are enough there.
    if (parent !== null && parent !== document.body && parent !== document.documentElement) boxes.push(parent.getBoundingClientRect());
  }
  return boxes;
}

/**
 * Covers the fields to hide, and the elements showing the parts `secrets` (`[start, end)` in
 * the text `pageText` read last) of the page's text; says how many boxes.
 */
export function maskFields(kinds: readonly PiiKind[], secrets: ReadonlyArray<readonly [number, number]> = []): number {
  unmaskFields();
  const boxes: DOMRect[] = [];
  for (const [start, end] of secrets) boxes.push(...boxesOf(start, end));
  pieces = [];
  for (const el of fields(document)) {
    if (el instanceof HTMLInputElement && NOT_TEXT.has(el.type)) continue;
    const value = valueOf(el);
    if (value === "") continue;
    if (!isSensitiveField(el) && !hasPii(value, kinds)) continue;
    boxes.push(el.getBoundingClientRect());
  }
  const shown = boxes.filter((r) => r.width > 0 && r.height > 0);
  if (shown.length === 0) return 0;
  const host = document.createElement("div");
  host.id = MASK_HOST_ID;
  host.style.cssText = "position:absolute;left:0;top:0;width:0;height:0;z-index:2147483647;pointer-events:none;";
  for (const r of shown) {
    const box = document.createElement("div");
    box.style.cssText = `position:absolute;left:${r.left + scrollX - 2}px;top:${r.top + scrollY - 2}px;width:${r.width + 4}px;height:${r.height + 4}px;background:#3c3c46;border-radius:3px;`;
    host.appendChild(box);
  }
  document.documentElement.appendChild(host);
  return shown.length;
}

export function unmaskFields(): void {
  document.getElementById(MASK_HOST_ID)?.remove();
}

/** The element a secret was typed into is sensitive from now on (see `isSensitiveField`). */
export function markSecret(el: Element): void {
  el.setAttribute("data-mimo-secret", "");
  // Ours, so no change of the page's own; but what the page's text shows of the field is not.
  pageChanged();
}
