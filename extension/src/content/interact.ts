// The content script's operations on one element or the page: getting an element ready for CDP
// input (scrolled into view, visible, enabled, on top), the DOM fallbacks for click, hover and
// typing, select options, scrolling, the HTML snapshot, and probes for `browser_wait_for`.
import type { ElementFacts, ScrollDirection } from "../../../protocol/ts/protocol.ts";
import type { FrameTarget, Point, Prepared, StepPurpose } from "../frame-protocol.ts";
import { isSensitiveField, SECRET_PLACEHOLDER, shownValue } from "../secrets.ts";
import {
  composedParent,
  contentBox,
  deepElementFromPoint,
  deepQuery,
  describe,
  evaluateXpath,
  FrameError,
  hitTest,
  iframeByToken,
  isDisabled,
  isOverlay,
  isRendered,
  OVERLAY_HOST_ID,
  shadowOf,
} from "./dom.ts";
import { inertHtml } from "./inert.ts";
import { resolveTarget } from "./locate.ts";
import { guardActedOn } from "./risk-facts.ts";
import { stepActsOn } from "./changes.ts";

const TEXT_INPUT_TYPES = new Set(["text", "search", "email", "url", "tel", "password", "number", ""]);
/**
 * Inputs whose value a browser's own picker sets, in a fixed format whatever the page's locale
 * shows: typing into one goes segment by segment, so their value is set the way the picker
 * commits it (the value, then `input` and `change`).
 */
const VALUE_FORMATS: Record<string, string> = {
  date: "2026-12-24",
  time: "14:30",
  "datetime-local": "2026-12-24T14:30",
  month: "2026-12",
  week: "2026-W52",
  color: "#3366ff",
  range: "a number within the slider's range",
};

type Editable = NonNullable<Prepared["editable"]>;

function editableKind(el: Element): Editable | undefined {
  if (el instanceof HTMLInputElement) return TEXT_INPUT_TYPES.has(el.type) ? "input" : el.type in VALUE_FORMATS ? "value" : undefined;
  if (el instanceof HTMLTextAreaElement) return "textarea";
  if (el instanceof HTMLElement && el.isContentEditable) return "contenteditable";
  return undefined;
}

function inViewport(r: DOMRect): boolean {
  return r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth;
}

/** Checks that a person could use the element now, scrolling it into view; returns where it is on top. */
function ready(el: Element, purpose: "click" | "type" | "hover" | "select"): Point {
  if (purpose !== "hover" && isDisabled(el)) throw new FrameError("TARGET_NOT_INTERACTABLE", `${describe(el)} is disabled`);
  if (!isRendered(el)) throw new FrameError("TARGET_NOT_INTERACTABLE", `${describe(el)} is hidden`);
  let rect = el.getBoundingClientRect();
  if (rect.width < 1 || rect.height < 1) throw new FrameError("TARGET_NOT_INTERACTABLE", `${describe(el)} has no size on the page`);
  if (!inViewport(rect)) {
    el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    rect = el.getBoundingClientRect();
  }
  const hit = hitTest(el, rect);
  if ("covered" in hit) {
    const by = hit.covered === null ? "nothing (it is outside the viewport)" : describe(hit.covered);
    throw new FrameError("TARGET_NOT_INTERACTABLE", `${describe(el)} is covered by ${by}`);
  }
  return hit.point;
}

export function prepare(target: FrameTarget, purpose: "click" | "type" | "hover" | "dragFrom" | "dragTo"): Prepared {
  const el = resolveTarget(target);
  let editable: Editable | undefined;
  if (purpose === "type") {
    editable = editableKind(el);
    if (editable === undefined) throw new FrameError("TARGET_NOT_INTERACTABLE", `${describe(el)} is not a text field`);
    if ((el as HTMLInputElement).readOnly === true) throw new FrameError("TARGET_NOT_INTERACTABLE", `${describe(el)} is read-only`);
  }
  const point = ready(el, purpose === "dragFrom" || purpose === "dragTo" ? "hover" : purpose);
  if (purpose !== "type" && purpose !== "hover") stepActsOn(el, purpose);
  const out: Prepared = { point, tag: el.localName };
  if (editable !== undefined) out.editable = editable;
  const checked = purpose === "click" ? checkedState(el) : undefined;
  if (checked !== undefined) out.checked = checked;
  return out;
}

/**
 * Whether a checkbox, radio button or switch is ticked — its own, its label's control's, or its
 * `aria-checked` — or `undefined` for any other element.
 */
function checkedState(el: Element): boolean | undefined {
  const control = el instanceof HTMLLabelElement ? el.control : el;
  if (control instanceof HTMLInputElement && (control.type === "checkbox" || control.type === "radio")) return control.checked;
  const aria = el.getAttribute("aria-checked");
  return aria === null ? undefined : aria === "true";
}

/**
 * Where a child frame's content box is in this frame's viewport. With `point` (in the child's
 * viewport), scrolls so that point is visible here and checks that the iframe is on top there.
 */
export function frameBox(token: string, point?: Point): { x: number; y: number; w: number; h: number } {
  const iframe = iframeByToken(token);
  if (iframe === null) throw new FrameError("TARGET_NOT_FOUND", "the element's iframe is not in the page any more");
  if (!isRendered(iframe)) throw new FrameError("TARGET_NOT_INTERACTABLE", `the iframe holding the element is hidden`);
  let box = contentBox(iframe);
  if (point === undefined) return box;
  let x = box.x + point.x;
  let y = box.y + point.y;
  if (x < 0 || y < 0 || x >= window.innerWidth || y >= window.innerHeight) {
    window.scrollBy({ left: x < 0 || x >= window.innerWidth ? x - window.innerWidth / 2 : 0, top: y < 0 || y >= window.innerHeight ? y - window.innerHeight / 2 : 0, behavior: "instant" });
    box = contentBox(iframe);
    x = box.x + point.x;
    y = box.y + point.y;
  }
  const hit = deepElementFromPoint(x, y);
  if (hit !== iframe && !isOverlay(hit)) {
    throw new FrameError("TARGET_NOT_INTERACTABLE", `the iframe holding the element is covered by ${hit === null ? "nothing visible" : describe(hit)}`);
  }
  return box;
}

function mouse(type: string, el: Element, p: Point, extra: MouseEventInit = {}): void {
  const init: MouseEventInit = { bubbles: true, cancelable: true, composed: true, clientX: p.x, clientY: p.y, button: 0, view: window, ...extra };
  if (type.startsWith("pointer")) el.dispatchEvent(new PointerEvent(type, { ...init, pointerId: 1, pointerType: "mouse", isPrimary: true }));
  else el.dispatchEvent(new MouseEvent(type, init));
}

export function domClick(target: FrameTarget): void {
  const el = resolveTarget(target);
  const p = ready(el, "click");
  stepActsOn(el, "click");
  mouse("pointerdown", el, p, { buttons: 1 });
  mouse("mousedown", el, p, { buttons: 1 });
  if (el instanceof HTMLElement) el.focus({ preventScroll: true });
  mouse("pointerup", el, p);
  mouse("mouseup", el, p);
  if (el instanceof HTMLElement) el.click();
  else mouse("click", el, p, { detail: 1 });
}

export function domHover(target: FrameTarget): void {
  const el = resolveTarget(target);
  const p = ready(el, "hover");
  for (const type of ["pointerover", "pointerenter", "mouseover", "mouseenter", "pointermove", "mousemove"]) {
    mouse(type, el, p, type.endsWith("enter") ? { bubbles: false } : {});
  }
}

function selectContent(el: HTMLElement, kind: Editable): void {
  if (kind === "contenteditable") {
    const selection = window.getSelection();
    selection?.selectAllChildren(el);
  } else {
    try {
      (el as HTMLInputElement).select();
    } catch {
      // Types without selection (some number inputs) are replaced whole by insertText anyway.
    }
  }
}

/** Focuses a text field and selects what it holds, so that inserted text replaces it. */
export function focusForTyping(target: FrameTarget): { editable: Editable; focused: boolean } {
  const el = resolveTarget(target) as HTMLElement;
  const kind = editableKind(el);
  if (kind === undefined) throw new FrameError("TARGET_NOT_INTERACTABLE", `${describe(el)} is not a text field`);
  el.focus({ preventScroll: true });
  selectContent(el, kind);
  return { editable: kind, focused: deepActive() === el };
}

function deepActive(): Element | null {
  let el = document.activeElement;
  for (let root = el === null ? null : shadowOf(el); root?.activeElement; root = shadowOf(el!)) el = root.activeElement;
  return el;
}

export function domType(target: FrameTarget, text: string, submit: boolean): void {
  const el = resolveTarget(target) as HTMLElement;
  ready(el, "type");
  const kind = editableKind(el);
  if (kind === undefined) throw new FrameError("TARGET_NOT_INTERACTABLE", `${describe(el)} is not a text field`);
  el.focus({ preventScroll: true });
  if (kind === "value") {
    setPickedValue(el as HTMLInputElement, text);
    return;
  }
  selectContent(el, kind);
  if (kind === "contenteditable") {
    if (text === "") document.execCommand("delete");
    else document.execCommand("insertText", false, text);
  } else {
    const field = el as HTMLInputElement | HTMLTextAreaElement;
    // From this isolated world the native setter is what runs, so a framework's own value
    // tracking still sees a change and the input event reaches its handlers.
    field.value = text;
    field.dispatchEvent(new InputEvent("input", { bubbles: true, composed: true, inputType: "insertText", data: text }));
    field.dispatchEvent(new Event("change", { bubbles: true }));
  }
  if (submit) domKey("Enter", "Enter", 13, 0);
}

/** Sets a date, time, colour or slider input as its picker would, refusing a value it does not take. */
function setPickedValue(input: HTMLInputElement, text: string): void {
  const before = input.value;
  input.value = text;
  const taken = input.type === "color" ? input.value.toLowerCase() === text.trim().toLowerCase() : input.value === text.trim() || (text === "" && input.value === "");
  if (!taken && !(input.type === "range" && input.value !== before && Number(input.value) === Number(text))) {
    input.value = before;
    throw new FrameError("SCHEMA_VALIDATION_FAILED", `${describe(input)} (type=${input.type}) takes a value like ${VALUE_FORMATS[input.type]}, not ${JSON.stringify(text)}`);
  }
  input.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
  input.dispatchEvent(new Event("change", { bubbles: true }));
}

export function readValue(target: FrameTarget): { value: string } {
  const el = resolveTarget(target);
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) return { value: shownValue(el, el.value) };
  return { value: shownValue(el, (el as HTMLElement).innerText ?? el.textContent ?? "") };
}

/** Keyboard events for a key, on the focused element (the DOM fallback of `browser_press_key`). */
export function domKey(key: string, code: string, keyCode: number, modifiers: number): void {
  const el = deepActive() ?? document.body;
  const init: KeyboardEventInit = {
    key,
    code,
    keyCode,
    which: keyCode,
    bubbles: true,
    cancelable: true,
    composed: true,
    altKey: (modifiers & 1) !== 0,
    ctrlKey: (modifiers & 2) !== 0,
    metaKey: (modifiers & 4) !== 0,
    shiftKey: (modifiers & 8) !== 0,
  } as KeyboardEventInit;
  const proceed = el.dispatchEvent(new KeyboardEvent("keydown", init));
  if (key.length === 1 || key === "Enter") el.dispatchEvent(new KeyboardEvent("keypress", init));
  el.dispatchEvent(new KeyboardEvent("keyup", init));
  if (proceed && key === "Enter" && el instanceof HTMLInputElement && el.form !== null) el.form.requestSubmit();
}

export function selectOption(target: FrameTarget, option: string): { value: string; label: string } {
  const el = resolveTarget(target);
  if (!(el instanceof HTMLSelectElement)) {
    throw new FrameError("TARGET_NOT_INTERACTABLE", `${describe(el)} is not a <select>: for a custom dropdown, click it and then click the option`);
  }
  ready(el, "select");
  const options = Array.from(el.options);
  const label = (o: HTMLOptionElement) => (o.label || o.textContent || "").replace(/\s+/g, " ").trim();
  const wanted = option.trim();
  const found =
    options.find((o) => o.value === option) ??
    options.find((o) => label(o) === wanted) ??
    options.find((o) => label(o).toLowerCase() === wanted.toLowerCase());
  if (found === undefined) {
    const list = options.slice(0, 20).map((o) => JSON.stringify(label(o))).join(", ");
    throw new FrameError("TARGET_NOT_FOUND", `no option ${JSON.stringify(option)} in ${describe(el)}; it has ${list}`);
  }
  if (found.disabled) throw new FrameError("TARGET_NOT_INTERACTABLE", `the option ${JSON.stringify(label(found))} is disabled`);
  stepActsOn(el, "select", found.value);
  el.focus({ preventScroll: true });
  found.selected = true;
  el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
  el.dispatchEvent(new Event("change", { bubbles: true }));
  return { value: found.value, label: label(found) };
}

function scrollable(el: Element): boolean {
  if (el.scrollHeight <= el.clientHeight + 1 && el.scrollWidth <= el.clientWidth + 1) return false;
  const style = getComputedStyle(el);
  return /(auto|scroll|overlay)/.test(style.overflowY + style.overflowX);
}

export type ScrollResult = { scrolledX: number; scrolledY: number; scrollX: number; scrollY: number; target: "page" | "element" };

export function scroll(target: FrameTarget | undefined, direction: ScrollDirection, amount?: number): ScrollResult {
  let scroller: Element | null = null;
  if (target !== undefined) {
    const el = resolveTarget(target);
    if (!isRendered(el)) throw new FrameError("TARGET_NOT_INTERACTABLE", `${describe(el)} is hidden`);
    for (let n: Element | null = el; n !== null && n !== document.documentElement && n !== document.body; n = composedParent(n)) {
      if (scrollable(n)) {
        scroller = n;
        break;
      }
    }
  }
  const page = document.scrollingElement ?? document.documentElement;
  const box = scroller ?? page;
  const vertical = direction === "up" || direction === "down";
  const size = scroller === null ? (vertical ? window.innerHeight : window.innerWidth) : vertical ? box.clientHeight : box.clientWidth;
  const by = Math.round(amount ?? size * 0.85) * (direction === "up" || direction === "left" ? -1 : 1);
  const beforeX = box.scrollLeft;
  const beforeY = box.scrollTop;
  const delta = vertical ? { top: by, left: 0 } : { top: 0, left: by };
  if (scroller === null) window.scrollBy({ ...delta, behavior: "instant" });
  else scroller.scrollBy({ ...delta, behavior: "instant" });
  return {
    scrolledX: box.scrollLeft - beforeX,
    scrolledY: box.scrollTop - beforeY,
    scrollX: box.scrollLeft,
    scrollY: box.scrollTop,
    target: scroller === null ? "page" : "element",
  };
}

/**
 * The HTML of the page (or of the element an xpath names), with what fields hold now written
 * into it, secrets replaced by the placeholder, and nothing that would run (`inert.ts`).
 */
export function html(xpath?: string): { html: string } {
  const root = xpath === undefined ? document.documentElement : evaluateXpath(xpath);
  if (root === null) throw new FrameError("TARGET_NOT_FOUND", `no element matches the xpath ${xpath}`);
  const clone = root.cloneNode(true) as Element;
  const fields = "input, textarea, select";
  const originals = root.matches(fields) ? [root] : Array.from(root.querySelectorAll(fields));
  const copies = clone.matches(fields) ? [clone] : Array.from(clone.querySelectorAll(fields));
  originals.forEach((orig, i) => {
    const copy = copies[i];
    if (copy === undefined) return;
    if (orig instanceof HTMLInputElement) {
      if (orig.type === "checkbox" || orig.type === "radio") {
        copy.toggleAttribute("checked", orig.checked);
      } else if (isSensitiveField(orig)) {
        if (orig.value !== "" || copy.hasAttribute("value")) copy.setAttribute("value", SECRET_PLACEHOLDER);
      } else if (orig.type !== "file") copy.setAttribute("value", orig.value);
    } else if (orig instanceof HTMLTextAreaElement) {
      copy.textContent = shownValue(orig, orig.value);
    } else if (orig instanceof HTMLSelectElement) {
      Array.from((copy as HTMLSelectElement).options).forEach((o, j) => o.toggleAttribute("selected", orig.options[j]?.selected ?? false));
    }
  });
  for (const el of Array.from(clone.querySelectorAll("[data-sensitive]"))) {
    if (el.getAttribute("data-sensitive") !== "false" && !(el instanceof HTMLInputElement)) el.textContent = SECRET_PLACEHOLDER;
  }
  clone.querySelector(`#${OVERLAY_HOST_ID}`)?.remove();
  const doctype = xpath === undefined && document.doctype ? `<!DOCTYPE ${document.doctype.name}>\n` : "";
  return { html: doctype + inertHtml(clone) };
}

export function probe(text?: string, selector?: string): { text?: boolean; selector?: boolean } {
  const out: { text?: boolean; selector?: boolean } = {};
  if (text !== undefined) out.text = (document.body?.innerText ?? "").includes(text);
  if (selector !== undefined) {
    let el: Element | null;
    try {
      el = deepQuery(selector);
    } catch (error) {
      throw new FrameError("INVALID_TARGET", `invalid selector ${JSON.stringify(selector)}: ${error instanceof Error ? error.message : String(error)}`);
    }
    out.selector = el !== null && isRendered(el);
  }
  return out;
}

/**
 * What a person sees at a point of this frame's viewport: the element there, described. With
 * `expect` (a click is about to land there), refused when that element is outbound or
 * irreversible and not what the step was rated on.
 */
export function elementAt(point: Point, expect?: ElementFacts, purpose?: StepPurpose): { inView: boolean; element?: string; viewport: { w: number; h: number } } {
  const viewport = { w: window.innerWidth, h: window.innerHeight };
  if (point.x < 0 || point.y < 0 || point.x >= viewport.w || point.y >= viewport.h) return { inView: false, viewport };
  const el = deepElementFromPoint(point.x, point.y);
  if (el === null) return { inView: true, viewport };
  if (expect !== undefined) guardActedOn(expect, el, false, `${describe(el)} at (${point.x}, ${point.y})`);
  // An iframe's own page is not this frame's to judge: what changes in it is, as for any click.
  if (purpose !== undefined && el.localName !== "iframe") stepActsOn(el, purpose);
  const text = (el.getAttribute("aria-label") ?? (el as HTMLElement).innerText ?? "").replace(/\s+/g, " ").trim();
  return { inView: true, element: `${describe(el)}${text && text.length <= 60 ? ` ${JSON.stringify(text)}` : ""}`, viewport };
}

/**
 * Refuses (`TARGET_CHANGED`) a key press that would send what the focused element belongs to
 * somewhere the step was not rated on (`expect`).
 */
export function guardFocus(expect: ElementFacts): void {
  let el = document.activeElement;
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
  if (el !== null && el !== document.body) guardActedOn(expect, el, true, `the focused ${describe(el)}`);
}

/**
 * The file input a person would use through `el`: the input itself, the one its label is for,
 * or the one it holds (a styled "Choose file" button wrapping a hidden input).
 */
function fileInputOf(el: Element): HTMLInputElement | null {
  const isFile = (e: Element | null | undefined): e is HTMLInputElement => e instanceof HTMLInputElement && e.type === "file";
  if (isFile(el)) return el;
  const label = el.closest("label");
  if (isFile(label?.control)) return label.control;
  const inside = el.querySelector("input[type=file]");
  return isFile(inside) ? inside : null;
}

/**
 * Puts files into a file input as the browser's file chooser does: its `files` replaced, then
 * `input` and `change`. The input may be hidden (pages style their own button over it).
 */
export function setFiles(target: FrameTarget, files: Array<{ name: string; type: string; base64: string }>): { input: string; files: string[] } {
  const el = resolveTarget(target);
  const input = fileInputOf(el);
  if (input === null) throw new FrameError("TARGET_NOT_INTERACTABLE", `${describe(el)} is not a file input, nor the label or button of one`);
  if (input.disabled) throw new FrameError("TARGET_NOT_INTERACTABLE", `${describe(input)} is disabled`);
  if (files.length > 1 && !input.multiple) throw new FrameError("TARGET_NOT_INTERACTABLE", `${describe(input)} takes one file`);
  const transfer = new DataTransfer();
  for (const f of files) {
    const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
    transfer.items.add(new File([bytes], f.name, { type: f.type, lastModified: Date.now() }));
  }
  input.files = transfer.files;
  input.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
  input.dispatchEvent(new Event("change", { bubbles: true }));
  return { input: describe(input), files: Array.from(input.files ?? []).map((f) => f.name) };
}

