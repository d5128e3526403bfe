// What a person would notice change in this frame, so that the worker can tell a step that did
// something from one that did nothing: DOM changes during the step (not ours: the overlay, our
// data-mimo attributes), the address, the title, which field has the focus, and the state of
// the form controls (a checkbox's `checked` changes no attribute).
//
// A page that changes by itself — a clock, a ticker, a carousel, "3 minutes ago" — must not make
// a step that did nothing look done: a place that changed at least twice, a moment apart, while
// no step was under way is restless, and its changes during a step do not count. One that changed
// once (a page settling after it loaded) still counts, as a cart's count in the header does.
//
// Once the element a step acts on is known, only what that kind of element does counts
// (content/expectations.ts). The frame says what changed since the step began; the worker
// judges the tab from every frame's answer (effects.ts).
import type { FrameState, StepPurpose } from "../frame-protocol.ts";
import { CHANGING_EVENTS, countPageChanges, pageChanged } from "../page-changes.ts";
import { controlsDigest, countsForStep, expectedEffects, expectedKind, expectFrom, expectNothingYet } from "./expectations.ts";
import { MASK_HOST_ID } from "./mask.ts";

const OVERLAY_HOST = "mimo-overlay-host";
/** The page's changes during the step, at places that do not change by themselves, that its kind counts. */
let changes = 0;
/** The focused field and the form controls' digest when the step began. */
let baseline: { focus: string; controls: string } | null = null;
/** This document, told apart from the one a navigation or a reload replaces it with. */
const DOCUMENT_ID = Math.random().toString(36).slice(2);
/** When the step under way began (`performance.now()`), until the worker has judged it. */
let stepSince: number | null = null;
/** A step the worker never said was judged (its worker stopped) ends after this long. */
const STEP_MAX_MS = 30_000;
/** Places that changed while no step was under way: the last two times a moment apart. */
const unprompted = new WeakMap<Element, [number, number]>();
/** Two changes at least this far apart: a place that changes by itself, not a page settling. */
const PERIOD_MS = 300;
/** How long a place stays restless after it last changed by itself. */
const RESTLESS_MS = 30_000;
/** How far up from a change its place's restless container may be (a ticker re-rendering its box). */
const RESTLESS_DEPTH = 4;
/** Never restless: what everything hangs from (a page adding a script must not mute a modal). */
const ROOTS = new Set(["HTML", "HEAD", "BODY"]);

/** The overlay, or the boxes that cover fields for the instant of a screenshot. */
function isOurs(node: Node): boolean {
  return node instanceof Element && (node.id === OVERLAY_HOST || node.id === MASK_HOST_ID);
}

function ours(record: MutationRecord): boolean {
  if (record.type === "attributes" && record.attributeName?.startsWith("data-mimo")) return true;
  const moved = [...Array.from(record.addedNodes), ...Array.from(record.removedNodes)];
  if (moved.length > 0 && moved.every(isOurs)) return true;
  const node = record.target;
  const el = node instanceof Element ? node : node.parentElement;
  return el !== null && (el.id === OVERLAY_HOST || el.closest(`#${OVERLAY_HOST}`) !== null);
}

function placeOf(record: MutationRecord): Element | null {
  const node = record.target;
  return node instanceof Element ? node : node.parentElement;
}

function changedUnprompted(place: Element, now: number): void {
  if (ROOTS.has(place.tagName)) return;
  const seen = unprompted.get(place);
  if (seen === undefined) unprompted.set(place, [now, now]);
  else if (now - seen[1] >= PERIOD_MS) unprompted.set(place, [seen[1], now]);
}

function restless(place: Element, now: number): boolean {
  let el: Element | null = place;
  for (let depth = 0; el !== null && depth < RESTLESS_DEPTH; el = el.parentElement, depth++) {
    const seen = unprompted.get(el);
    if (seen !== undefined && seen[1] - seen[0] >= PERIOD_MS && now - seen[1] < RESTLESS_MS) return true;
  }
  return false;
}

/** Starts watching the page's own changes (once per frame). */
export function watchChanges(): void {
  new MutationObserver((records) => {
    const now = performance.now();
    if (stepSince !== null && now - stepSince > STEP_MAX_MS) stepSince = null;
    for (const record of records) {
      const place = ours(record) ? null : placeOf(record);
      if (place === null) continue;
      pageChanged();
      if (stepSince === null) changedUnprompted(place, now);
      else if (!restless(place, now) && countsForStep(record, place)) changes++;
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  countPageChanges();
  for (const type of CHANGING_EVENTS) addEventListener(type, pageChanged, { capture: true, passive: true });
}

/** A step begins (`true`: its first look) or was judged (`false`). */
export function stepUnderWay(on: boolean): void {
  stepSince = on ? performance.now() : null;
  if (!on) return;
  changes = 0;
  baseline = { focus: focused(), controls: controlsDigest(document) };
  expectNothingYet();
}

/**
 * The step under way acts on `el` for `purpose`: from now on only what that kind of element does
 * counts, and what changed before (getting it ready: scrolling it into view) was not its doing.
 */
export function stepActsOn(el: Element, purpose: StepPurpose, option?: string): void {
  if (stepSince === null) return;
  changes = 0;
  expectFrom(el, purpose, option);
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

/** What changed in this frame since the step began, by what the step's kind counts. */
function effects(): string[] {
  if (baseline === null) return [];
  const kind = expectedKind();
  const seen = expectedEffects();
  if (changes > 0) seen.push("content");
  // The caret in a field it was not in (a click on a field's label): leaving a field is no effect.
  const focus = focused();
  if (kind !== "toggle" && kind !== "select" && focus !== "" && focus !== baseline.focus) seen.push("focus");
  if ((kind === undefined || kind === "any") && controlsDigest(document) !== baseline.controls) seen.push("controls");
  return seen;
}

export function frameState(): FrameState {
  const kind = expectedKind();
  return { doc: DOCUMENT_ID, url: location.href, title: document.title, effects: effects(), ...(kind !== undefined ? { expects: kind } : {}) };
}
