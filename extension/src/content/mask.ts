// Fields masked for the instant of a screenshot: those holding secrets (passwords, one-time
// codes, cards, and fields a secret was typed into) and, when evidence is filtered, those whose
// value holds personal data. Each is covered by an opaque box drawn over it in the page, removed
// right after the capture; the field itself is never changed.
import type { PiiKind } from "../../../protocol/ts/protocol.ts";
import { hasPii } from "../redact.ts";
import { isSensitiveField } from "../secrets.ts";

const MASK_HOST_ID = "__mimo_capture_mask";
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

/** Covers the fields to hide; says how many. */
export function maskFields(kinds: readonly PiiKind[]): number {
  unmaskFields();
  const boxes: DOMRect[] = [];
  for (const el of fields(document)) {
    if (el instanceof HTMLInputElement && NOT_TEXT.has(el.type)) continue;
    const value = valueOf(el);
    if (value === "") continue;
    if (!isSensitiveField(el) && !hasPii(value, kinds)) continue;
    const rect = el.getBoundingClientRect();
    if (rect.width > 0 && rect.height > 0) boxes.push(rect);
  }
  if (boxes.length === 0) return 0;
  const host = document.createElement("div");
  host.id = MASK_HOST_ID;
  host.style.cssText = "position:absolute;left:0;top:0;width:0;height:0;z-index:2147483647;pointer-events:none;";
  for (const r of boxes) {
    const box = document.createElement("div");
    box.style.cssText = `position:absolute;left:${r.left + scrollX - 2}px;top:${r.top + scrollY - 2}px;width:${r.width + 4}px;height:${r.height + 4}px;background:#3c3c46;border-radius:3px;`;
    host.appendChild(box);
  }
  document.documentElement.appendChild(host);
  return boxes.length;
}

export function unmaskFields(): void {
  document.getElementById(MASK_HOST_ID)?.remove();
}

/** The element a secret was typed into is sensitive from now on (see `isSensitiveField`). */
export function markSecret(el: Element): void {
  el.setAttribute("data-mimo-secret", "");
}
