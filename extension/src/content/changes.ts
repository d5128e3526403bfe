// What a person would notice change in this frame, so that the worker can tell a step that did
// something from one that did nothing: DOM changes since the content script started (not ours:
// the overlay, our data-mimo attributes), the address, the title, which field has the focus,
// and the state of the form controls (a checkbox's `checked` changes no attribute).
import type { FrameState } from "../frame-protocol.ts";

const OVERLAY_HOST = "mimo-overlay-host";
let changes = 0;

function isOverlay(node: Node): boolean {
  return node instanceof Element && node.id === OVERLAY_HOST;
}

function ours(record: MutationRecord): boolean {
  if (record.type === "attributes" && record.attributeName?.startsWith("data-mimo")) return true;
  const moved = [...Array.from(record.addedNodes), ...Array.from(record.removedNodes)];
  if (moved.length > 0 && moved.every(isOverlay)) return true;
  const node = record.target;
  const el = node instanceof Element ? node : node.parentElement;
  return el !== null && (el.id === OVERLAY_HOST || el.closest(`#${OVERLAY_HOST}`) !== null);
}

/** Starts counting the page's own changes (once per frame). */
export function watchChanges(): void {
  new MutationObserver((records) => {
    for (const record of records) if (!ours(record)) changes++;
  }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
}

/** A short digest of every form control's state (FNV-1a over checked states, choices and values). */
function controls(): string {
  let hash = 0x811c9dc5;
  const add = (text: string) => {
    for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  };
  for (const el of Array.from(document.querySelectorAll("input, select, textarea"))) {
    if (el instanceof HTMLInputElement) add(el.type === "checkbox" || el.type === "radio" ? (el.checked ? "1" : "0") : el.value);
    else if (el instanceof HTMLSelectElement) add(String(el.selectedIndex));
    else if (el instanceof HTMLTextAreaElement) add(el.value);
    add("\u0000");
  }
  return (hash >>> 0).toString(16);
}

/**
 * The field that has the focus: the caret is there to type into. A button that took the focus
 * when clicked shows nothing new, so only fields count.
 */
function focused(): string {
  const el = document.activeElement;
  if (el === null || !(el.matches("input, textarea, select") || (el instanceof HTMLElement && el.isContentEditable))) return "";
  return `${el.tagName}#${el.id}.${el.getAttribute("name") ?? ""}[${Array.from(el.parentElement?.children ?? []).indexOf(el)}]`;
}

export function frameState(): FrameState {
  return { changes, url: location.href, title: document.title, focus: focused(), controls: controls() };
}
