// Element targets in this frame: by click id (the last index), xpath, CSS selector, or — for
// scripts that drive a page without indexing it — by what the element says (`label`) or its
// ARIA role. Only what a person can see counts; several equally good matches are refused with
// the candidates named, never one of them picked.
import type { FrameTarget, Located } from "../frame-protocol.ts";
import { ambiguity, best, matchQuality, MAX_NAMED_CANDIDATES, notFound, rank, roleOf, targetDescription } from "../targets.ts";
import type { Candidate } from "../targets.ts";
import { deepContains, deepQuery, evaluateXpath, FrameError, indexed, isDisabled, isOverlay, isRendered, shadowOf } from "./dom.ts";
import { isCandidate, labelText, nameOf, SKIP } from "./dom-index.ts";
import { factsChange } from "./risk-facts.ts";

/** One element of the page as a label or role target sees it. */
type Seen = { el: Element; tag: string; control: boolean; plain: boolean };

/** Whether the element holds text of its own (not only through its children). */
function ownText(el: Element): boolean {
  for (const node of el.childNodes) if (node.nodeType === Node.TEXT_NODE && node.nodeValue!.trim() !== "") return true;
  return false;
}

/**
 * Every element a label or role may name, in page order and open or closed shadow roots too,
 * with the label texts of the controls. Text inside a control belongs to that control: the
 * words of a button are not a second match beside it.
 */
function survey(): { seen: Seen[]; labels: Map<Element, string> } {
  const seen: Seen[] = [];
  const labels = new Map<Element, string>();
  const visit = (el: Element, inControl: boolean): void => {
    const tag = el.localName;
    if (SKIP.has(tag) || isOverlay(el)) return;
    if (tag === "label") {
      const control = (el as HTMLLabelElement).control;
      if (control !== null && !labels.has(control)) labels.set(control, labelText(el, control));
    }
    const control = isCandidate(el, tag);
    seen.push({ el, tag, control, plain: !control && !inControl && ownText(el) });
    for (const child of el.children) visit(child, inControl || control);
    const shadow = shadowOf(el);
    if (shadow !== null) for (const child of shadow.children) visit(child, inControl || control);
  };
  if (document.body !== null) visit(document.body, false);
  return { seen, labels };
}

/** Seen by a person: rendered, with a size. */
function visible(el: Element): boolean {
  if (!isRendered(el)) return false;
  const r = el.getBoundingClientRect();
  return r.width >= 1 && r.height >= 1;
}

/** What a control says: its name, and its label, placeholder, ARIA label and title as well. */
function controlTexts(s: Seen, labels: ReadonlyMap<Element, string>): string[] {
  return [nameOf(s.el, s.tag, labels), labels.get(s.el) ?? "", ...["placeholder", "aria-label", "title"].map((a) => s.el.getAttribute(a) ?? "")];
}

function textOf(s: Seen, labels: ReadonlyMap<Element, string>): string {
  return s.control ? nameOf(s.el, s.tag, labels) : (s.el as HTMLElement).innerText ?? "";
}

/** The best matches of a label or role target in this frame, with how they rank. */
function matches(target: FrameTarget): { els: Element[]; rank: number; candidates: Candidate[] } {
  const { seen, labels } = survey();
  const ranked: Array<{ item: Seen; rank: number }> = [];
  const wantedRole = target.role?.trim().toLowerCase();
  for (const s of seen) {
    if (wantedRole !== undefined ? roleOf(s.el) !== wantedRole : !s.control && !s.plain) continue;
    if (!visible(s.el)) continue;
    let quality: "exact" | "partial" | undefined = "exact";
    if (target.label !== undefined) quality = matchQuality(s.control ? controlTexts(s, labels) : [textOf(s, labels)], target.label);
    if (quality === undefined) continue;
    ranked.push({ item: s, rank: rank(quality, wantedRole !== undefined || s.control, isDisabled(s.el)) });
  }
  // Only a match by what it says is matched again by what it holds (see `best`).
  const top = best(ranked, target.label !== undefined ? (outer, inner) => deepContains(outer.el, inner.el) : undefined);
  const topRank = Math.min(...ranked.map((r) => r.rank));
  const candidates = top.slice(0, MAX_NAMED_CANDIDATES).map((s) => {
    const c: Candidate = { tag: s.tag, text: textOf(s, labels).replace(/\s+/g, " ").trim() };
    const role = roleOf(s.el);
    if (role !== undefined) c.role = role;
    return c;
  });
  return { els: top.map((s) => s.el), rank: topRank, candidates };
}

/** A CSS selector's first match; a selector the browser cannot read is the caller's mistake. */
function bySelector(selector: string): Element | null {
  try {
    return deepQuery(selector);
  } catch (error) {
    throw new FrameError("INVALID_TARGET", `invalid selector ${JSON.stringify(selector)}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** What this frame holds for a target that is not a click id: the service worker picks the frame. */
export function locate(target: FrameTarget): Located | null {
  if (target.xpath !== undefined || target.selector !== undefined) {
    const el = target.xpath !== undefined ? evaluateXpath(target.xpath) : bySelector(target.selector!);
    return el === null ? null : { rank: 0, total: 1, candidates: [{ tag: el.localName, text: "" }] };
  }
  const found = matches(target);
  return found.els.length === 0 ? null : { rank: found.rank, total: found.els.length, candidates: found.candidates };
}

/**
 * The element a target names, or a `FrameError` saying why there is none — or why it is not the
 * element the step was rated on (`TARGET_CHANGED`, when the target carries the facts it was rated
 * on and the page changed them since).
 */
export function resolveTarget(target: FrameTarget): Element {
  const el = findTarget(target);
  if (target.expect !== undefined) {
    const changed = factsChange(target.expect, el);
    if (changed !== null) throw new FrameError("TARGET_CHANGED", `the element changed since the page was read: ${changed}; nothing was done — look at the page again`);
  }
  return el;
}

function findTarget(target: FrameTarget): Element {
  if (target.clickId !== undefined) {
    const id = target.clickId;
    const el = indexed.get(id) ?? deepQuery(`[${CSS.escape(target.attr)}="${id}"]`);
    if (el === null) throw new FrameError("TARGET_NOT_FOUND", `no element has click id ${id} (the page changed since the last index: index it again)`);
    if (!el.isConnected) throw new FrameError("TARGET_NOT_FOUND", `the element with click id ${id} is no longer in the page (index it again)`);
    return el;
  }
  if (target.xpath !== undefined) {
    const el = evaluateXpath(target.xpath);
    if (el === null) throw new FrameError("TARGET_NOT_FOUND", `no element matches the xpath ${target.xpath}`);
    return el;
  }
  if (target.selector !== undefined) {
    const el = bySelector(target.selector);
    if (el === null) throw new FrameError("TARGET_NOT_FOUND", `no element matches the selector ${target.selector}`);
    return el;
  }
  if (target.label === undefined && target.role === undefined) throw new FrameError("INVALID_TARGET", "name the element by clickId, xpath, selector, label or role");
  const found = matches(target);
  const what = targetDescription(target);
  if (found.els.length === 0) throw new FrameError("TARGET_NOT_FOUND", notFound(what));
  if (found.els.length > 1) throw new FrameError("INVALID_TARGET", ambiguity(what, found.els.length, found.candidates));
  return found.els[0]!;
}
