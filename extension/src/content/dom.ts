// DOM helpers shared by the content script's operations: errors with protocol codes, shadow-DOM
// aware hit testing, visibility, iframes, and finding elements by click id, xpath or selector.
import type { ErrorCode } from "../../../protocol/ts/protocol.ts";
import { FRAME_TOKEN_KEY } from "../frame-protocol.ts";
import type { Point } from "../frame-protocol.ts";

export class FrameError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** The host element of Mimo's overlay, ignored by indexing and hit tests. */
export const OVERLAY_HOST_ID = "mimo-overlay-host";

export function isOverlay(el: Element | null): boolean {
  // Where it is first: an index asks this of every element, and reading an id makes a string.
  return el !== null && el.parentNode === document.documentElement && el.id === OVERLAY_HOST_ID;
}

/**
 * An element's shadow root, closed ones too: what a page keeps from its own scripts is still
 * what a person sees and uses, and an extension may reach it (`chrome.dom`).
 */
export function shadowOf(el: Element): ShadowRoot | null {
  if (el.shadowRoot !== null) return el.shadowRoot;
  // Closed roots are the way of custom elements (a dash in the name); asking only about them
  // keeps a walk over thousands of elements fast.
  if (!(el instanceof HTMLElement) || !el.localName.includes("-")) return null;
  return chrome.dom?.openOrClosedShadowRoot?.(el) ?? null;
}

/** `elementFromPoint` that descends into shadow roots, closed ones too. */
export function deepElementFromPoint(x: number, y: number): Element | null {
  let el = document.elementFromPoint(x, y);
  for (let root = el === null ? null : shadowOf(el); root !== null && el !== null; root = shadowOf(el)) {
    const inner = root.elementFromPoint(x, y);
    if (inner === null || inner === el) break;
    el = inner;
  }
  return el;
}

/** The parent element, stepping out of shadow roots to their host. */
export function composedParent(node: Node): Element | null {
  const parent = node.parentNode;
  if (parent === null) return null;
  if (parent instanceof ShadowRoot) return parent.host;
  return parent instanceof Element ? parent : null;
}

export function deepContains(ancestor: Element, node: Element | null): boolean {
  for (let n: Element | null = node; n !== null; n = composedParent(n)) if (n === ancestor) return true;
  return false;
}

const VISIBILITY_OPTIONS = { checkOpacity: true, checkVisibilityCSS: true, opacityProperty: true, visibilityProperty: true };

/** Rendered, not `visibility: hidden`, not fully transparent (itself or an ancestor). */
export function isRendered(el: Element): boolean {
  return el.checkVisibility(VISIBILITY_OPTIONS as CheckVisibilityOptions);
}

export function isDisabled(el: Element): boolean {
  if (el.getAttribute("aria-disabled") === "true") return true;
  try {
    return el.matches(":disabled");
  } catch {
    return false;
  }
}

/** A short description of an element for messages: `<div id=modal class="a b">`. */
export function describe(el: Element): string {
  const tag = el.tagName.toLowerCase();
  const id = el.id ? ` id=${el.id}` : "";
  const cls = typeof el.className === "string" && el.className.trim() ? ` class="${el.className.trim().slice(0, 40)}"` : "";
  return `<${tag}${id}${cls}>`;
}

/**
 * What a person sees covering `el`, given the element found on top of it: the outermost
 * ancestor of that element that does not hold `el` too (a cookie banner, a modal and its
 * backdrop, a sticky bar), named with a little of its text.
 */
export function coverOf(hit: Element, el: Element): { layer: Element; text: string } {
  let layer = hit;
  for (let up = composedParent(hit); up !== null && up !== document.body && up !== document.documentElement && !deepContains(up, el); up = composedParent(up)) {
    layer = up;
  }
  const roleName = layer.getAttribute("role");
  const role = roleName !== null ? ` role=${roleName}` : "";
  const words = (layer.textContent ?? "").replace(/\s+/g, " ").trim();
  const text = words.length > 50 ? `${words.slice(0, 49)}…` : words;
  return { layer, text: `${describe(layer).slice(0, -1)}${role}>${text ? ` ${JSON.stringify(text)}` : ""}` };
}

/**
 * Whether an ancestor that clips its content (a scroll container, `overflow: hidden`) hides the
 * element's box entirely: such an element is out of sight, not covered.
 */
export function clippedAway(el: Element, rect: DOMRect): boolean {
  for (let up = composedParent(el); up !== null && up !== document.body && up !== document.documentElement; up = composedParent(up)) {
    const style = getComputedStyle(up);
    if (style.overflowX === "visible" && style.overflowY === "visible") continue;
    const box = up.getBoundingClientRect();
    if (rect.bottom <= box.top || rect.top >= box.bottom || rect.right <= box.left || rect.left >= box.right) return true;
  }
  return false;
}

/** Whether a hit at a point counts as the element: itself, inside it, or its label. */
export function hitIs(el: Element, hit: Element | null): boolean {
  if (hit === null) return false;
  if (deepContains(el, hit) || isOverlay(hit)) return true;
  const label = hit.closest("label");
  return label !== null && (label as HTMLLabelElement).control === el;
}

/**
 * Points to hit-test inside a rectangle, clipped to the viewport: the centre of the visible part
 * first, then two more inside it (a sticky bar may cover only one side).
 */
export function probePoints(rect: DOMRect, vw: number, vh: number): Point[] {
  const left = Math.max(rect.left, 0);
  const right = Math.min(rect.right, vw);
  const top = Math.max(rect.top, 0);
  const bottom = Math.min(rect.bottom, vh);
  if (right - left < 1 || bottom - top < 1) return [];
  const cx = (left + right) / 2;
  const cy = (top + bottom) / 2;
  const pts: Point[] = [{ x: cx, y: cy }];
  if (right - left >= 8 && bottom - top >= 8) {
    pts.push({ x: left + (right - left) / 4, y: top + (bottom - top) / 4 });
    pts.push({ x: right - (right - left) / 4, y: bottom - (bottom - top) / 4 });
  }
  return pts;
}

/** The first probe point at which the element is on top, or what covers its centre. */
export function hitTest(el: Element, rect: DOMRect): { point: Point } | { covered: Element | null } {
  const points = probePoints(rect, window.innerWidth, window.innerHeight);
  let first: Element | null = null;
  for (const [i, p] of points.entries()) {
    const hit = deepElementFromPoint(p.x, p.y);
    if (hitIs(el, hit)) return { point: p };
    if (i === 0) first = hit;
  }
  return { covered: first };
}

// ---- iframes ----

/** Tokens of this frame's iframes (see `ChildFrame`). */
const frameTokens = new WeakMap<Element, string>();

/** Gives an iframe its token (once) and posts it to the iframe's window (again: it may have navigated). */
export function tagFrame(iframe: Element): string {
  let token = frameTokens.get(iframe);
  if (token === undefined) {
    token = crypto.randomUUID();
    frameTokens.set(iframe, token);
  }
  (iframe as HTMLIFrameElement).contentWindow?.postMessage({ [FRAME_TOKEN_KEY]: token }, "*");
  return token;
}

/** Every iframe of this document, in open shadow roots too. */
export function allIframes(root: Document | ShadowRoot = document): Element[] {
  const out = Array.from(root.querySelectorAll("iframe, frame"));
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
  for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
    const shadow = shadowOf(n as Element);
    if (shadow) out.push(...allIframes(shadow));
  }
  return out;
}

export function iframeByToken(token: string): Element | null {
  return allIframes().find((f) => frameTokens.get(f) === token) ?? null;
}

/** Where an element's content box (inside border and padding: where an iframe's page shows) is in the viewport. */
export function contentBox(el: Element): { x: number; y: number; w: number; h: number } {
  const r = el.getBoundingClientRect();
  const style = getComputedStyle(el);
  const pl = parseFloat(style.paddingLeft);
  const pt = parseFloat(style.paddingTop);
  return {
    x: r.left + el.clientLeft + pl,
    y: r.top + el.clientTop + pt,
    w: el.clientWidth - pl - parseFloat(style.paddingRight),
    h: el.clientHeight - pt - parseFloat(style.paddingBottom),
  };
}

// ---- targets ----

/** Elements of the last index in this frame, by click id. */
export const indexed = new Map<number, Element>();
/** The attribute the last index wrote. */
export const lastAttr = { name: "" };

/** `querySelector` over the document and every open shadow root in it. */
export function deepQuery(selector: string, root: Document | ShadowRoot = document): Element | null {
  const found = root.querySelector(selector);
  if (found !== null) return found;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
  for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
    const shadow = shadowOf(n as Element);
    if (shadow) {
      const inner = deepQuery(selector, shadow);
      if (inner !== null) return inner;
    }
  }
  return null;
}

/** Evaluates an xpath; `/#shadow-root/` steps enter an open shadow root (as our xpaths write them). */
export function evaluateXpath(xpath: string): Element | null {
  const [first, ...shadowParts] = xpath.split("/#shadow-root");
  let node: Node | null;
  try {
    node = document.evaluate(first!, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;
  } catch (error) {
    throw new FrameError("INVALID_TARGET", `invalid xpath ${JSON.stringify(xpath)}: ${error instanceof Error ? error.message : String(error)}`);
  }
  for (const part of shadowParts) {
    const shadow = node instanceof Element ? shadowOf(node) : null;
    if (shadow === null) return null;
    node = stepShadow(shadow, part, xpath);
  }
  return node instanceof Element ? node : null;
}

/** Follows `/tag[n]/tag[n]` steps from a shadow root. */
function stepShadow(root: ShadowRoot, path: string, whole: string): Element | null {
  let parent: ParentNode = root;
  for (const step of path.split("/").filter((s) => s !== "")) {
    const m = /^([a-zA-Z][\w-]*|\*)(?:\[(\d+)\])?$/.exec(step);
    if (m === null) throw new FrameError("INVALID_TARGET", `invalid xpath ${JSON.stringify(whole)}: cannot read step ${JSON.stringify(step)} inside a shadow root`);
    const tag = m[1]!.toLowerCase();
    const n = Number(m[2] ?? "1");
    let count = 0;
    let next: Element | null = null;
    for (const child of Array.from(parent.children)) {
      if (tag === "*" || child.localName === tag) {
        if (++count === n) {
          next = child;
          break;
        }
      }
    }
    if (next === null) return null;
    parent = next;
  }
  return parent instanceof Element ? parent : null;
}
