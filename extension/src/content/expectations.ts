// What a step is expected to change, by the kind of element it acts on (issue 26 §5). A change
// anywhere on the page is weak evidence: a clock, a price ticker, an ad slot filling late, a
// banner on a timer all change something while a dead button is clicked. Once the element a
// step acts on is known, only what that kind of element does counts:
//
// - a checkbox, radio, switch, toggle button, tab or <details> summary: its own state;
// - a menu button or combobox: its `aria-expanded`, what it controls, or new elements;
// - a link, a submit button or any other button: a navigation (the worker sees it), or a change
//   inside its form, its landmark, the page's main content, its banner (a cart's count, a
//   signed-in name), what it controls, or outside every landmark — not in another landmark (a
//   sidebar, a footer, an ad's region);
// - a <select>: the chosen option, read back;
// - a drag: the dragged element's new parent, place among its siblings or position, or a
//   change where it was dropped or where it came from (or outside every landmark);
// - a key, or a point on a frame the element list does not know: any change at a place that
//   does not change by itself (content/changes.ts).
//
// For every kind, a new layer anywhere — a dialog, a menu, a listbox, an alert, a toast, a
// popover, something fixed on top of the page — counts too, and so does a change of the page's
// address or document (the worker compares those).
import type { ExpectedKind, StepPurpose } from "../frame-protocol.ts";
import { composedParent } from "./dom.ts";

type Expectation = {
  kind: ExpectedKind;
  /** Where a change counts (for link, submit, menu and drag). */
  places: Element[];
  /** The element whose own state is the effect (toggle, menu, select, drag: the dragged one). */
  target: Element | null;
  /** The target's state when the step began, to compare with. */
  facts: string;
  /** The chosen option's value (select). */
  chosen?: string;
  /** The digest of the form controls in `places` when the step began. */
  controls: string;
};

let current: Expectation | null = null;

const LANDMARKS = [
  "main, nav, aside, footer, dialog, [role=main], [role=navigation], [role=complementary], [role=contentinfo], [role=banner], [role=search], [role=form], [role=dialog], [role=alertdialog], [role=tabpanel], [role=region][aria-label], [role=region][aria-labelledby]",
  "section[aria-label], section[aria-labelledby]",
].join(", ");
/** What lies on top of the page when it appears: its appearing is an effect of any step. */
const LAYERS =
  "dialog, [popover], [aria-modal=true], [role=dialog], [role=alertdialog], [role=menu], [role=listbox], [role=tooltip], [role=alert], [role=status], [role=log], [aria-live=polite], [aria-live=assertive]";
const TOGGLES =
  "input[type=checkbox], input[type=radio], [role=checkbox], [role=radio], [role=switch], [role=menuitemcheckbox], [role=menuitemradio], [role=tab], [role=option], [aria-pressed], summary";
/** How far up from a change its layer may be (a toast's text inside its fixed box). */
const LAYER_DEPTH = 4;

/** `el.closest(selector)`, across shadow roots. */
function closestComposed(el: Element, selector: string): Element | null {
  for (let n: Element | null = el; n !== null; n = composedParent(n)) if (n.matches(selector)) return n;
  return null;
}

/** The elements `el` names as its own (`aria-controls`, `aria-owns`). */
function controlled(el: Element): Element[] {
  const ids = `${el.getAttribute("aria-controls") ?? ""} ${el.getAttribute("aria-owns") ?? ""}`.split(/\s+/).filter(Boolean);
  const root = el.getRootNode() as Document | ShadowRoot;
  return ids.map((id) => root.getElementById?.(id) ?? document.getElementById(id)).filter((e): e is HTMLElement => e !== null);
}

/** The page's banner: the site's header (a cart's count, the signed-in name), not an article's. */
function banner(): Element | null {
  const role = document.querySelector("[role=banner]");
  if (role !== null) return role;
  return Array.from(document.querySelectorAll("header")).find((h) => h.parentElement?.closest("article, aside, main, nav, section") == null) ?? null;
}

/**
 * Where what a link or a button does shows: its form, its landmark (else the whole page), the
 * page's main content and banner, and what it controls.
 */
function region(el: Element): Element[] {
  const form = el instanceof HTMLButtonElement || el instanceof HTMLInputElement ? el.form : closestComposed(el, "form");
  const landmark = closestComposed(form ?? el, LANDMARKS) ?? document.documentElement;
  const main = document.querySelector("main, [role=main]");
  return [form, landmark, main, banner(), ...controlled(el)].filter((e): e is Element => e !== null);
}

function isSubmit(el: Element): boolean {
  if (el instanceof HTMLButtonElement) return el.form !== null && el.type === "submit";
  return el instanceof HTMLInputElement && (el.type === "submit" || el.type === "image") && el.form !== null;
}

/** The state of an element that is its own effect. */
function factsOf(el: Element): string {
  const checked = el instanceof HTMLInputElement ? String(el.checked) : "";
  const open = el.localName === "summary" ? String((el.parentElement as HTMLDetailsElement | null)?.open ?? "") : "";
  const aria = ["aria-checked", "aria-pressed", "aria-selected", "aria-expanded", "aria-current"].map((a) => el.getAttribute(a) ?? "").join(",");
  return `${checked}|${open}|${aria}`;
}

/** Identities of elements, to tell a new parent from the old one. */
const ids = new WeakMap<Node, number>();
let nextId = 1;
function idOf(node: Node | null): number {
  if (node === null) return 0;
  let id = ids.get(node);
  if (id === undefined) ids.set(node, (id = nextId++));
  return id;
}

/** Where a dragged element is: its parent, its place among its siblings, its box on the page. */
function placeOf(el: Element): string {
  const parent = el.parentNode;
  const index = parent === null ? -1 : Array.prototype.indexOf.call(parent.childNodes, el);
  const r = el.getBoundingClientRect();
  return `${el.isConnected}|${idOf(parent)}|${index}|${Math.round(r.left + scrollX)},${Math.round(r.top + scrollY)}`;
}

/** A short digest of the state of the form controls in `places` (FNV-1a). */
export function controlsDigest(places: Element[] | Document): string {
  let hash = 0x811c9dc5;
  const add = (text: string) => {
    for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  };
  const roots = places instanceof Document ? [places] : places;
  for (const root of roots) {
    for (const el of Array.from(root.querySelectorAll("input, select, textarea"))) {
      if (el instanceof HTMLInputElement) add(el.type === "checkbox" || el.type === "radio" ? (el.checked ? "1" : "0") : el.value);
      else if (el instanceof HTMLSelectElement) add(String(el.selectedIndex));
      else if (el instanceof HTMLTextAreaElement) add(el.value);
      add("\u0000");
    }
  }
  return (hash >>> 0).toString(16);
}

/** What a click on `el` is expected to do. */
function clickExpectation(el: Element): Expectation {
  const control = el instanceof HTMLLabelElement && el.control !== null ? el.control : el;
  const make = (kind: ExpectedKind, places: Element[], target: Element | null): Expectation => ({ kind, places, target, facts: target === null ? "" : factsOf(target), controls: controlsDigest(places) });
  if (control.matches(TOGGLES)) return make("toggle", controlled(control), control);
  const popup = control.getAttribute("aria-haspopup");
  if ((popup !== null && popup !== "false") || control.hasAttribute("aria-expanded") || control.matches("[role=combobox]")) {
    return make("menu", [control, ...controlled(control)], control);
  }
  const link = closestComposed(control, "a[href], area[href]");
  if (link !== null) return make("link", region(link), null);
  return make(isSubmit(control) ? "submit" : "button", region(control), null);
}

/**
 * The step under way acts on `el` for `purpose`: from now on only what that kind of element does
 * counts as the step's effect. A drag's two ends come one after the other; the second adds to
 * the first.
 */
export function expectFrom(el: Element, purpose: StepPurpose, option?: string): void {
  if (purpose === "click") current = clickExpectation(el);
  else if (purpose === "select") current = { kind: "select", places: [], target: el, facts: "", chosen: option, controls: "" };
  else if (purpose === "dragFrom") {
    const places = [el.parentElement].filter((e): e is HTMLElement => e !== null);
    current = { kind: "drag", places, target: el, facts: placeOf(el), controls: controlsDigest(places) };
  } else if (current?.kind === "drag") {
    current.places.push(el);
    current.controls = controlsDigest(current.places);
  } else {
    current = { kind: "drag", places: [el], target: null, facts: "", controls: controlsDigest([el]) };
  }
}

/** A new step begins: nothing is known of what it acts on yet. */
export function expectNothingYet(): void {
  current = null;
}

export function expectedKind(): ExpectedKind | undefined {
  return current?.kind;
}

function inLayer(place: Element): boolean {
  let el: Element | null = place;
  for (let depth = 0; el !== null && depth < LAYER_DEPTH; el = composedParent(el), depth++) {
    if (el.matches(LAYERS)) return true;
    if (el !== document.body && el !== document.documentElement && getComputedStyle(el).position === "fixed") return true;
  }
  return false;
}

function movesLayer(record: MutationRecord): boolean {
  if (record.type !== "childList") return false;
  return [...Array.from(record.addedNodes), ...Array.from(record.removedNodes)].some((n) => n instanceof Element && (n.matches(LAYERS) || (n.isConnected && getComputedStyle(n).position === "fixed")));
}

/** Whether a change of the page at `place` counts as what the step under way does. */
export function countsForStep(record: MutationRecord, place: Element): boolean {
  const e = current;
  if (e === null || e.kind === "any") return true;
  // Where the kind's places say first (cheap); a new layer anywhere after (it reads styles).
  if (countsAt(e, record, place)) return true;
  return movesLayer(record) || inLayer(place);
}

function countsAt(e: Expectation, record: MutationRecord, place: Element): boolean {
  switch (e.kind) {
    case "toggle":
    case "select":
    case "any":
      return false;
    case "menu":
      return e.places.some((p) => p.contains(place)) || (record.type === "childList" && Array.from(record.addedNodes).some((n) => n instanceof Element));
    case "link":
    case "submit":
    case "button":
    case "drag":
      // In its own places, or in none of the page's landmarks (a list or a toast at the end of
      // the body): only what lies in another landmark — a sidebar, a footer, an ad's region —
      // is somewhere else.
      return e.places.some((p) => p.contains(place)) || closestComposed(place, LANDMARKS) === null;
  }
}

/** What the target's own state says: the effects the step's kind expects of it. */
export function expectedEffects(): string[] {
  const e = current;
  if (e === null || e.kind === "any") return [];
  const effects: string[] = [];
  if (e.kind === "select") {
    if (e.target instanceof HTMLSelectElement && e.target.value === e.chosen) effects.push("chosen");
    return effects;
  }
  if (e.target !== null && (e.kind === "drag" ? placeOf(e.target) : factsOf(e.target)) !== e.facts) effects.push(e.kind === "drag" ? "moved" : "state");
  if (e.places.length > 0 && controlsDigest(e.places) !== e.controls) effects.push("controls");
  return effects;
}
