// The DOM index of one frame: every interactive element that a person could click or type into
// now, with a click id written to an attribute, a bounding box, and a line of compact text.
//
// Fast on large pages: one pass with TreeWalkers (into open shadow roots) reads only attributes
// and, for the few elements that need it, computed style; then all boxes are read (one layout);
// then the elements within the viewport are hit-tested; only then are attributes written, so
// nothing invalidates layout between reads.
import type { BoundingBox, ScanScope } from "../../../protocol/ts/protocol.ts";
import { DROP_ZONE_ATTR } from "../frame-protocol.ts";
import type { ChildFrame, FrameIndex, IndexedElement, IndexLine } from "../frame-protocol.ts";
import { riskFacts } from "./risk-facts.ts";
import { coveredLine, elementLine, MAX_COVERED_LINES, moreCoveredLine, scrollableLine } from "../index-text.ts";
import type { LineFacts } from "../index-text.ts";
import { shownValue } from "../secrets.ts";
import { clippedAway, contentBox, coverOf, deepElementFromPoint, FrameError, shadowOf, hitTest, indexed, isDisabled, isOverlay, isRendered, lastAttr, tagFrame } from "./dom.ts";

/** How far beyond the viewport a `viewport` scope index still looks. */
const VIEWPORT_MARGIN = 200;
const MAX_TEXT = 80;

export const SKIP = new Set(["script", "style", "noscript", "template", "head", "meta", "link", "title", "base"]);
const INTERACTIVE_TAGS = new Set(["button", "select", "textarea", "summary"]);
const ROLES = new Set([
  "button", "link", "checkbox", "radio", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "option",
  "switch", "combobox", "textbox", "searchbox", "slider", "spinbutton", "listbox", "treeitem", "gridcell",
]);

type Ctx = {
  xpath: string;
  /** Index of the nearest structural item (element, scroll container, iframe) above, or -1. */
  item: number;
  /** Inside an interactive element or a `cursor: pointer` region already indexed. */
  pointer: boolean;
  /** Same-name sibling counters for the children's xpath steps. */
  counters: Map<string, number>;
};

/**
 * What the page's stylesheets reveal when the pointer is over an element: for each rule that
 * styles something else then (`.menu:hover > .submenu`), the element's selector and what it
 * reveals, from the stylesheets the page may read. A rule that only restyles the element
 * itself (`a:hover`) reveals nothing. Menus opened by pointer listeners are not seen here.
 */
type Revealers = { any: string; rules: Array<{ hovered: string; revealed: string }> };

function hoverRevealers(): Revealers | null {
  const rules: Revealers["rules"] = [];
  const visitRules = (list: CSSRuleList) => {
    for (const rule of Array.from(list)) {
      if (rule instanceof CSSStyleRule) {
        for (const selector of rule.selectorText.split(",")) {
          const at = selector.indexOf(":hover");
          const hovered = selector.slice(0, at).trim();
          const revealed = selector.slice(at + ":hover".length).trim();
          if (at > 0 && hovered !== "" && revealed !== "" && !/[>+~]$/.test(hovered)) rules.push({ hovered, revealed });
        }
      } else if ("cssRules" in rule) {
        visitRules((rule as CSSGroupingRule).cssRules);
      }
    }
  };
  for (const sheet of Array.from(document.styleSheets)) {
    try {
      visitRules(sheet.cssRules);
    } catch {
      // A stylesheet of another origin cannot be read.
    }
  }
  const valid = rules.filter((r) => {
    try {
      document.documentElement.matches(r.hovered);
      document.documentElement.querySelector(`:scope ${/^[+~]/.test(r.revealed) ? "*" : ""} ${r.revealed}`);
      return true;
    } catch {
      return false;
    }
  });
  return valid.length === 0 ? null : { any: valid.map((r) => r.hovered).join(", "), rules: valid };
}

/** Whether pointing at `el` reveals something the stylesheets hide until then. */
function revealsOnHover(el: Element, revealers: Revealers): boolean {
  if (!el.matches(revealers.any)) return false;
  return revealers.rules.some((r) => {
    if (!el.matches(r.hovered)) return false;
    if (/^[+~]/.test(r.revealed)) {
      const sibling = r.revealed.slice(1).trim();
      for (let next = el.nextElementSibling; next !== null; next = next.nextElementSibling) {
        if (next.matches(sibling)) return true;
        if (r.revealed.startsWith("+")) return false;
      }
      return false;
    }
    return el.querySelector(`:scope ${r.revealed}`) !== null;
  });
}

type Item = {
  el: Element;
  kind: "element" | "scroll" | "frame";
  parent: number;
  xpath: string;
  keep: boolean;
  rect?: DOMRect;
  /** What a person sees on top of this element (in view, but under a banner or a modal). */
  cover?: { layer: Element; text: string };
  /** Pointing at it reveals something (a CSS hover menu). */
  hover?: boolean;
};

/**
 * What marks an element that accepts a drop: drop listeners found by the extension through the
 * DevTools protocol (`DROP_ZONE_ATTR`, see drop-zones.ts), ARIA's drop effect, the containers
 * of the common drag-and-drop libraries (jQuery UI, react-beautiful-dnd and its forks) and the
 * HTML `dropzone` attribute.
 */
const DROP_ZONES = `[${DROP_ZONE_ATTR}], [aria-dropeffect]:not([aria-dropeffect="none"]), .ui-droppable, .ui-sortable, [data-rbd-droppable-id], [data-rfd-droppable-id], [dropzone]`;

export function isDropZone(el: Element): boolean {
  return el.matches(DROP_ZONES);
}

/**
 * Whether the DevTools protocol must look for this frame's drop listeners before it is indexed:
 * only when something here can be dragged (what the search starts from). Otherwise the marks of
 * a search before are cleared, as the search itself would, and the index goes on without one:
 * most pages have nothing to drag, and the search is a round trip through the debugger.
 */
export function needsDropSearch(): boolean {
  if (document.querySelector('[draggable="true"]') !== null) return true;
  for (const el of Array.from(document.querySelectorAll(`[${DROP_ZONE_ATTR}]`))) el.removeAttribute(DROP_ZONE_ATTR);
  return false;
}

/** A cursor that says the element can be dragged (pointer-based sortable items, knobs, cards). */
const GRAB = new Set(["grab", "-webkit-grab", "move"]);

/** Whether a person would use the element (a control, a link, something made clickable). */
export function isCandidate(el: Element, tag: string): boolean {
  if (INTERACTIVE_TAGS.has(tag)) return true;
  if (tag === "a") return el.hasAttribute("href");
  if (tag === "input") return (el as HTMLInputElement).type !== "hidden";
  const role = el.getAttribute("role");
  if (role !== null && ROLES.has(role)) return true;
  if (el.hasAttribute("onclick")) return true;
  // A person can drag it (a card of a board, an item of a sortable list), or drop on it.
  if (el.getAttribute("draggable") === "true") return true;
  if (isDropZone(el)) return true;
  const editable = el.getAttribute("contenteditable");
  if (editable !== null && editable !== "false") {
    const parent = el.parentElement;
    return parent === null || !parent.isContentEditable;
  }
  const tabindex = el.getAttribute("tabindex");
  return tabindex !== null && Number(tabindex) >= 0;
}

function collapse(text: string | null | undefined): string {
  if (!text) return "";
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > MAX_TEXT ? `${t.slice(0, MAX_TEXT - 1)}…` : t;
}

/**
 * Label texts by the control they label, collected during the walk: `input.labels` searches the
 * whole document for every input (seconds on a page of thousands of inputs).
 */
const labelTexts = new Map<Element, string>();

/**
 * A label's own text. A label that wraps its control (`<label>Fruit <select>…</select></label>`)
 * would otherwise be named after the control's content too — a select's whole option list.
 */
export function labelText(label: Element, control: Element): string {
  if (!label.contains(control)) return label.textContent ?? "";
  const walker = label.ownerDocument.createTreeWalker(label, NodeFilter.SHOW_ALL, {
    acceptNode: (node) => (node === control ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  let text = "";
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    if (node.nodeType === Node.TEXT_NODE) text += `${node.nodeValue ?? ""} `;
  }
  return text;
}

/** Longest text taken for a control's name from the text before it. */
const MAX_TEXT_BEFORE = 80;

/**
 * The text a person reads as an unlabelled control's label: what stands right before it in its
 * parent (`Delivery speed <select>`), or in the table cell before its own. Nothing when another
 * control comes first, or the text is too long to be a label.
 */
function textBefore(el: Element): string {
  const before = (node: Node): string => {
    for (let prev = node.previousSibling; prev !== null; prev = prev.previousSibling) {
      if (prev instanceof Element && (CONTROL.has(prev.localName) || prev.querySelector(CONTROLS) !== null)) return "";
      const text = collapse(prev.textContent);
      if (text) return text.length <= MAX_TEXT_BEFORE ? text : "";
    }
    return "";
  };
  const own = before(el);
  if (own) return own;
  const cell = el.parentElement;
  if (cell !== null && (cell.localName === "td" || cell.localName === "th") && cell.children.length === 1) {
    const prevCell = cell.previousElementSibling;
    const text = collapse(prevCell?.textContent);
    if (prevCell !== null && prevCell.querySelector(CONTROLS) === null && text.length <= MAX_TEXT_BEFORE) return text;
  }
  return "";
}

const CONTROLS = "input, select, textarea, button";
const CONTROL = new Set(["input", "select", "textarea", "button"]);

/** What the element is called: its ARIA name, label (from `labels`), text, or image alt. */
export function nameOf(el: Element, tag: string, labels: ReadonlyMap<Element, string> = labelTexts): string {
  const aria = el.getAttribute("aria-label");
  if (aria) return collapse(aria);
  const by = el.getAttribute("aria-labelledby");
  if (by) {
    const label = by.split(/\s+/).map((id) => el.ownerDocument.getElementById(id)?.textContent ?? "").join(" ");
    if (label.trim()) return collapse(label);
  }
  if (tag === "input" || tag === "select" || tag === "textarea") {
    const type = (el as HTMLInputElement).type;
    if (tag === "input" && (type === "submit" || type === "button" || type === "reset")) return collapse((el as HTMLInputElement).value);
    const label = labels.get(el);
    if (label !== undefined) return collapse(label);
    return collapse(el.getAttribute("title") ?? el.getAttribute("placeholder")) || textBefore(el);
  }
  // A fast bound on huge containers: textContent of a small element is cheap.
  const text = collapse(el.textContent);
  if (text) return text;
  const img = el.querySelector("img[alt], [aria-label]");
  if (img) return collapse(img.getAttribute("alt") ?? img.getAttribute("aria-label"));
  return collapse(el.getAttribute("title"));
}

function facts(el: Element, tag: string, clickId: number): { line: LineFacts & { clickId: number }; element: Omit<IndexedElement, "bbox"> } {
  const role = el.getAttribute("role") ?? undefined;
  const text = nameOf(el, tag);
  const line: LineFacts & { clickId: number } = { clickId, tag, text };
  const element: Omit<IndexedElement, "bbox"> = { clickId, tag };
  if (role !== undefined) line.role = element.role = role;
  if (text) element.text = text;
  if (tag === "input") {
    const input = el as HTMLInputElement;
    line.type = input.type;
    line.name = input.name;
    line.placeholder = input.placeholder;
    if (input.type === "checkbox" || input.type === "radio") line.checked = element.checked = input.checked;
    else if (!["submit", "button", "reset", "image", "file"].includes(input.type)) line.value = element.value = shownValue(el, input.value);
  } else if (tag === "textarea") {
    const area = el as HTMLTextAreaElement;
    line.name = area.name;
    line.placeholder = area.placeholder;
    line.value = element.value = shownValue(el, collapse(area.value));
  } else if (tag === "select") {
    const select = el as HTMLSelectElement;
    line.name = select.name;
    const selected = select.selectedOptions[0];
    line.value = element.value = selected ? collapse(selected.label || selected.textContent) : "";
    line.text = element.text = collapse(Array.from(select.options).slice(0, 8).map((o) => o.label || o.textContent).join(" | "));
    // Its options are its text; its label tells two selects with the same options apart.
    if (text) line.label = text;
  } else if (tag === "a") {
    line.href = el.getAttribute("href") ?? undefined;
  } else if ((el as HTMLElement).isContentEditable) {
    line.text = element.text = shownValue(el, text);
  }
  const ariaChecked = el.getAttribute("aria-checked");
  if (ariaChecked !== null) line.checked = element.checked = ariaChecked === "true";
  const expanded = el.getAttribute("aria-expanded");
  if (expanded !== null) line.expanded = element.expanded = expanded === "true";
  else if (tag === "summary" && el.parentElement?.tagName === "DETAILS") line.expanded = element.expanded = (el.parentElement as HTMLDetailsElement).open;
  if (isDisabled(el)) line.disabled = element.disabled = true;
  if (el.getAttribute("draggable") === "true" || GRAB.has(getComputedStyle(el).cursor)) line.draggable = true;
  if (isDropZone(el)) line.dropzone = true;
  const risky = riskFacts(el);
  if (risky !== undefined) element.facts = risky;
  return { line, element };
}

function xpathStep(el: Element, counters: Map<string, number>): string {
  const name = el.localName;
  const n = (counters.get(name) ?? 0) + 1;
  counters.set(name, n);
  return el.namespaceURI === "http://www.w3.org/1999/xhtml" ? `/${name}[${n}]` : `/*[local-name()='${name}'][${n}]`;
}

const OVERFLOWS = new Set(["auto", "scroll", "overlay"]);

/** Whether the item lies wholly outside the box of a scroll container it is in. */
function outsideItsScrollers(items: Item[], it: Item): boolean {
  const r = it.rect!;
  for (let p = it.parent; p >= 0; p = items[p]!.parent) {
    const up = items[p]!;
    if (up.kind !== "scroll") continue;
    const box = up.rect!;
    if (r.bottom <= box.top || r.top >= box.bottom || r.right <= box.left || r.left >= box.right) return true;
  }
  return false;
}

export type IndexOptions = { scope: ScanScope; attr: string; startId: number; clip?: BoundingBox; xpath: boolean; within?: number };

/** Whether `el` is `region` or inside it, through the shadow roots between them. */
function holds(region: Element, el: Element): boolean {
  for (let node: Node | null = el; node !== null; node = node instanceof ShadowRoot ? node.host : node.parentNode) {
    if (node === region) return true;
  }
  return false;
}

export function indexFrame(opts: IndexOptions): FrameIndex {
  const started = performance.now();
  // The region, found by the id the last index gave it (before this one gives new ids).
  const region = opts.within === undefined ? null : (indexed.get(opts.within) ?? null);
  if (opts.within !== undefined && (region === null || !region.isConnected)) {
    throw new FrameError("TARGET_NOT_FOUND", `no element [${opts.within}] in the last element list of the page (it is gone, or in a frame): list the page again`);
  }
  const items: Item[] = [];
  labelTexts.clear();
  const revealers = hoverRevealers();

  const visit = (el: Element, ctx: Ctx): Ctx | null => {
    const tag = el.localName;
    if (SKIP.has(tag) || isOverlay(el)) return null;
    const xpath = ctx.xpath + xpathStep(el, ctx.counters);
    if (tag === "label") {
      const control = (el as HTMLLabelElement).control;
      if (control !== null && !labelTexts.has(control)) labelTexts.set(control, labelText(el, control));
    }
    let item = ctx.item;
    let pointer = ctx.pointer;
    if (tag === "iframe" || tag === "frame") {
      // Every iframe gets its token, so the worker can match all child frames at once.
      tagFrame(el);
      items.push({ el, kind: "frame", parent: ctx.item, xpath, keep: false });
      return null;
    }
    if (isCandidate(el, tag)) {
      item = items.push({ el, kind: "element", parent: ctx.item, xpath, keep: false }) - 1;
      pointer = true;
    } else if (revealers !== null && !ctx.pointer && tag !== "html" && tag !== "body" && revealsOnHover(el, revealers)) {
      item = items.push({ el, kind: "element", parent: ctx.item, xpath, keep: false, hover: true }) - 1;
    } else if (!pointer && tag !== "html" && tag !== "body") {
      // Elements that only a click handler makes interactive show a pointer cursor (one that
      // only a drag handler does, a grab cursor); the cursor is inherited, so only where such a
      // region starts.
      const style = getComputedStyle(el);
      if (style.cursor === "pointer" || GRAB.has(style.cursor)) {
        item = items.push({ el, kind: "element", parent: ctx.item, xpath, keep: false }) - 1;
        pointer = true;
      } else if ((OVERFLOWS.has(style.overflowY) || OVERFLOWS.has(style.overflowX)) && (el.scrollHeight > el.clientHeight + 2 || el.scrollWidth > el.clientWidth + 2)) {
        item = items.push({ el, kind: "scroll", parent: ctx.item, xpath, keep: false }) - 1;
      }
    }
    const shadow = shadowOf(el);
    if (shadow !== null) walk(shadow, { xpath: xpath + "/#shadow-root", item, pointer, counters: new Map() });
    // Made only for an element with children: most elements have none.
    return el.firstElementChild !== null ? { xpath, item, pointer, counters: new Map() } : null;
  };

  const walk = (root: Document | ShadowRoot, rootCtx: Ctx) => {
    const w = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    const stack: Ctx[] = [rootCtx];
    let node: Node | null = w.firstChild();
    while (node !== null) {
      const ctx = visit(node as Element, stack[stack.length - 1]!);
      if (ctx !== null && w.firstChild() !== null) {
        stack.push(ctx);
        node = w.currentNode;
        continue;
      }
      node = null;
      for (;;) {
        if (w.nextSibling() !== null) {
          node = w.currentNode;
          break;
        }
        if (w.parentNode() === null || w.currentNode === root) break;
        stack.pop();
      }
    }
  };
  walk(document, { xpath: "", item: -1, pointer: false, counters: new Map() });
  const walked = performance.now();

  // All boxes, in one layout.
  for (const it of items) it.rect = it.el.getBoundingClientRect();
  const boxed = performance.now();

  const vw = window.innerWidth;
  const vh = window.innerHeight;
  const clip = opts.clip ?? { x: 0, y: 0, w: vw, h: vh };
  const view = {
    left: Math.max(0, clip.x),
    top: Math.max(0, clip.y),
    right: Math.min(vw, clip.x + clip.w),
    bottom: Math.min(vh, clip.y + clip.h),
  };
  const margin = opts.scope === "viewport" ? VIEWPORT_MARGIN : Infinity;
  for (const it of items) {
    if (region !== null && !holds(region, it.el)) continue;
    const r = it.rect!;
    if (r.width < 1 || r.height < 1) continue;
    if (r.right < view.left - margin || r.left > view.right + margin || r.bottom < view.top - margin || r.top > view.bottom + margin) continue;
    if (!isRendered(it.el)) continue;
    // Scrolled out of a list of its own: out of sight (the list's line says how much lies
    // above and below).
    if (outsideItsScrollers(items, it)) continue;
    const inView = r.right > view.left && r.left < view.right && r.bottom > view.top && r.top < view.bottom;
    if (inView && it.kind !== "scroll") {
      if (it.kind === "frame") {
        const hit = deepElementFromPoint(Math.min(Math.max(r.left + r.width / 2, 0), vw - 1), Math.min(Math.max(r.top + r.height / 2, 0), vh - 1));
        if (hit !== it.el && !isOverlay(hit)) continue;
      } else {
        // Listed with what covers it, without an index: the model learns why it cannot use
        // what the person sees, and can remove the cover (or say so) instead of guessing.
        const hit = hitTest(it.el, r);
        if ("covered" in hit) {
          // Scrolled out of its container is out of sight (the container's line says how
          // much lies above and below), not covered.
          if (hit.covered === null || clippedAway(it.el, r)) continue;
          it.cover = coverOf(hit.covered, it.el);
        }
      }
    }
    it.keep = true;
  }

  const checked = performance.now();

  // Structure: depth counts kept structural ancestors.
  const base: number[] = new Array<number>(items.length);
  const depthOf = (i: number) => {
    const p = items[i]!.parent;
    return p < 0 ? 0 : base[p]!;
  };
  const lines: IndexLine[] = [];
  const elements: IndexedElement[] = [];
  const frames: ChildFrame[] = [];
  const writes: Array<[Element, number]> = [];
  const covers = new Map<Element, { text: string; count: number }>();
  let next = opts.startId;
  for (const [i, it] of items.entries()) {
    const depth = depthOf(i);
    base[i] = it.keep ? depth + 1 : depth;
    if (!it.keep) continue;
    const r = it.rect!;
    const bbox = { x: Math.round(r.left), y: Math.round(r.top), w: Math.round(r.width), h: Math.round(r.height) };
    if (it.kind === "scroll") {
      // An index of its own, so that `scroll` can name the list itself.
      const el = it.el;
      const clickId = next++;
      lines.push({
        depth,
        text: `[${clickId}]${scrollableLine(el.localName, el.scrollTop, el.scrollHeight - el.clientHeight - el.scrollTop, el.scrollLeft, el.scrollWidth - el.clientWidth - el.scrollLeft)}`,
      });
      const out: IndexedElement = { clickId, tag: el.localName, text: "(scrollable)", bbox };
      if (opts.xpath) out.xpath = it.xpath;
      elements.push(out);
      writes.push([el, clickId]);
    } else if (it.kind === "frame") {
      const token = tagFrame(it.el);
      frames.push({ token, box: contentBox(it.el) });
      lines.push({ depth, frame: token });
    } else if (it.cover !== undefined) {
      const cover = covers.get(it.cover.layer) ?? { text: it.cover.text, count: 0 };
      covers.set(it.cover.layer, cover);
      if (cover.count++ < MAX_COVERED_LINES) lines.push({ depth, text: coveredLine(cover.text, facts(it.el, it.el.localName, 0).line) });
    } else {
      const clickId = next++;
      const tag = it.el.localName;
      const { line, element } = facts(it.el, tag, clickId);
      if (it.hover === true) {
        // Named by what shows, not by the hidden menu it holds.
        line.text = element.text = collapse((it.el as HTMLElement).innerText?.split("\n")[0]);
        line.hoverMenu = true;
      }
      lines.push({ depth, text: elementLine(line) });
      const out: IndexedElement = { ...element, bbox };
      if (opts.xpath) out.xpath = it.xpath;
      elements.push(out);
      writes.push([it.el, clickId]);
    }
  }
  for (const cover of covers.values()) {
    if (cover.count > MAX_COVERED_LINES) lines.push({ depth: 0, text: moreCoveredLine(cover.count - MAX_COVERED_LINES, cover.text) });
  }
  const described = performance.now();
  // The previous index is forgotten only now, and only what changed is written: an element
  // that keeps its id (a page indexed again) keeps its attribute. On a page of thousands of
  // elements, removing and writing them all again was a good part of an index's time, and each
  // write is a mutation every observer of the page hears of.
  const sameAttr = lastAttr.name === opts.attr;
  const stays = new Set(writes.map(([el]) => el));
  for (const el of indexed.values()) if (!sameAttr || !stays.has(el)) el.removeAttribute(lastAttr.name);
  indexed.clear();
  lastAttr.name = opts.attr;
  for (const [el, id] of writes) {
    const value = String(id);
    if (el.getAttribute(opts.attr) !== value) el.setAttribute(opts.attr, value);
    indexed.set(id, el);
  }
  const root = document.documentElement;
  return {
    elements,
    lines,
    frames,
    nextId: next,
    url: location.href,
    title: document.title,
    scrollX: window.scrollX,
    scrollY: window.scrollY,
    viewport: { w: vw, h: vh },
    size: { w: Math.max(root.scrollWidth, vw), h: Math.max(root.scrollHeight, vh) },
    ms: performance.now() - started,
    phases: { walk: walked - started, boxes: boxed - walked, checks: checked - boxed, output: performance.now() - checked, describe: described - checked, items: items.length },
  };
}
