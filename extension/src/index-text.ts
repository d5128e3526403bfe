// The compact text of a DOM index, for the model: one line per element, indented by structure
// (interactive elements, scrollable containers and iframes nest), e.g.
//
//   page https://shop.example/ "Shop" scroll 0,1200 of 1280x4800, viewport 1280x720
//   [1]<a href="/cart">Cart</a>
//   <div scrollable: 0px above, 900px below>
//     [2]<button>Add to cart</button>
//
// And the budget that keeps an index within one socket frame. Pure: tested under node:test.
import type { DomElement, DomIndexResult } from "../../protocol/ts/protocol.ts";

export type LineFacts = {
  /** None for an element that cannot be used now (covered): its line has no `[index]`. */
  clickId?: number;
  tag: string;
  /** A control's label, where its text is something else (a select's options). */
  label?: string;
  role?: string;
  text?: string;
  type?: string;
  name?: string;
  placeholder?: string;
  href?: string;
  value?: string;
  checked?: boolean;
  disabled?: boolean;
  expanded?: boolean;
  /** It can be dragged (HTML5 `draggable`, or a grab cursor): the drag action moves it. */
  draggable?: boolean;
  /** It accepts a drop (a board's column, a list a sortable item moves in): a drag's target. */
  dropzone?: boolean;
  /** Pointing at it reveals more (a hover menu): the hover action opens it. */
  hoverMenu?: boolean;
};

const MAX_ATTR = 60;

function quote(value: string): string {
  const short = value.length > MAX_ATTR ? `${value.slice(0, MAX_ATTR - 1)}…` : value;
  return /^[\w./:-]+$/.test(short) ? short : JSON.stringify(short);
}

/** `[12]<button>Add to cart</button>`, `[3]<input type=email placeholder="Email" value="a@b">`. */
export function elementLine(f: LineFacts): string {
  const attrs: string[] = [];
  if (f.label !== undefined && f.label !== "") attrs.push(`label=${quote(f.label)}`);
  if (f.role !== undefined) attrs.push(`role=${quote(f.role)}`);
  if (f.type !== undefined) attrs.push(`type=${quote(f.type)}`);
  if (f.name !== undefined && f.name !== "") attrs.push(`name=${quote(f.name)}`);
  if (f.placeholder !== undefined && f.placeholder !== "") attrs.push(`placeholder=${quote(f.placeholder)}`);
  if (f.href !== undefined && f.href !== "") attrs.push(`href=${quote(f.href)}`);
  if (f.value !== undefined && f.value !== "") attrs.push(`value=${quote(f.value)}`);
  // Both states are said: a switch that is off is as much a fact as one that is on.
  if (f.checked !== undefined) attrs.push(f.checked ? "checked" : "unchecked");
  if (f.disabled === true) attrs.push("disabled");
  if (f.expanded !== undefined) attrs.push(`expanded=${f.expanded}`);
  if (f.draggable === true) attrs.push("draggable");
  if (f.dropzone === true) attrs.push("dropzone");
  if (f.hoverMenu === true) attrs.push("hover-menu");
  const open = `${f.clickId !== undefined ? `[${f.clickId}]` : ""}<${f.tag}${attrs.length > 0 ? " " + attrs.join(" ") : ""}>`;
  const voidTag = f.tag === "input" || f.tag === "img";
  if (voidTag) return f.text !== undefined && f.text !== "" ? `${open} ${f.text}` : open;
  return `${open}${f.text ?? ""}</${f.tag}>`;
}

/** An element a person sees under something else: `(covered by <div id=cookies> "We use…") <button>Pay</button>`. */
export function coveredLine(cover: string, f: LineFacts): string {
  const { clickId: _covered, ...rest } = f;
  return `(covered by ${cover}) ${elementLine(rest)}`;
}

/** How many elements under one cover are listed; the rest are counted. */
export const MAX_COVERED_LINES = 5;

export function moreCoveredLine(count: number, cover: string): string {
  return `(… ${count} more elements covered by ${cover})`;
}

export function scrollableLine(tag: string, above: number, below: number, left: number, right: number): string {
  const parts: string[] = [];
  if (above > 0 || below > 0) parts.push(`${Math.round(above)}px above, ${Math.round(below)}px below`);
  if (left > 0 || right > 0) parts.push(`${Math.round(left)}px left, ${Math.round(right)}px right`);
  return `<${tag} scrollable: ${parts.join(", ")}>`;
}

export function pageLine(p: { url: string; title: string; scrollX: number; scrollY: number; width: number; height: number; vw: number; vh: number }): string {
  const below = Math.max(0, p.height - p.scrollY - p.vh);
  // Scrolled down to the end: a feed may load more when it is scrolled again.
  const end = p.scrollY > 0 && below < 2 ? "; at its end (a feed loads more when scrolled down)" : "";
  return `page ${p.url} ${JSON.stringify(p.title)}: scrolled to ${Math.round(p.scrollX)},${Math.round(p.scrollY)} of ${Math.round(p.width)}x${Math.round(p.height)}, viewport ${p.vw}x${p.vh}, ${Math.round(below)}px below${end}`;
}

export function indent(depth: number, text: string): string {
  return "  ".repeat(Math.max(0, depth)) + text;
}

/** The UTF-8 size of `s`, counted without encoding it (fitting measures thousands of strings). */
export function utf8Length(s: string): number {
  let bytes = s.length;
  for (let i = 0; i < s.length; i++) {
    const unit = s.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) bytes += 1;
    else if (unit >= 0xd800 && unit < 0xdc00 && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      // A surrogate pair: 4 bytes for its 2 units.
      bytes += 2;
      i++;
    } else {
      // 3 bytes, a lone surrogate too (written as U+FFFD).
      bytes += 2;
    }
  }
  return bytes;
}

/**
 * Cuts an index to fit in `maxBytes` of JSON: first without xpaths (unless `keepXpath`), then
 * keeping the first elements (and the text lines up to the last kept element). Returns the
 * result and a warning when anything was cut. `bytes` is its JSON's size, when the caller has
 * it already (a whole-document index is megabytes: not encoded again to be measured).
 */
export function fitIndex(result: DomIndexResult, maxBytes: number, keepXpath: boolean, bytes = utf8Length(JSON.stringify(result))): { result: DomIndexResult; warning?: string } {
  if (bytes <= maxBytes) return { result };
  // Each element without its xpath is its JSON less `,"xpath":"…"` (never its first field).
  const xpathBytes = (e: DomElement) => (keepXpath || e.xpath === undefined ? 0 : utf8Length(`,"xpath":${JSON.stringify(e.xpath)}`));
  const slim = (e: DomElement): DomElement => {
    if (keepXpath) return e;
    const { xpath: _xpath, ...rest } = e;
    return rest;
  };
  if (!keepXpath && bytes - result.elements.reduce((sum, e) => sum + xpathBytes(e), 0) <= maxBytes) {
    return { result: { ...result, elements: result.elements.map(slim) }, warning: "xpaths were left out to fit the index in one message" };
  }
  // One pass: the size of everything but the elements and the text, then elements (and the
  // text lines up to each) while they fit; only what is kept is measured and copied.
  const lines = result.text.split("\n");
  const lineOf = new Map<number, number>();
  lines.forEach((l, i) => {
    const m = /^\s*\[(\d+)\]/.exec(l);
    if (m !== null) lineOf.set(Number(m[1]), i);
  });
  const lineBytes = (i: number) => utf8Length(JSON.stringify(lines[i]!));
  const TRAILER = 200;
  let used = utf8Length(JSON.stringify({ ...result, elements: [], text: "" })) + lineBytes(0) + TRAILER;
  let lastLine = 0;
  let lo = 0;
  for (const e of result.elements) {
    const line = Math.max(lastLine, lineOf.get(e.clickId) ?? lastLine);
    let more = utf8Length(JSON.stringify(e)) - xpathBytes(e) + 1;
    for (let i = lastLine + 1; i <= line; i++) more += lineBytes(i);
    if (used + more > maxBytes) break;
    used += more;
    lastLine = line;
    lo++;
  }
  const all = result.elements.length;
  const text = `${lines.slice(0, lastLine + 1).join("\n")}\n… ${all - lo} more elements left out; index with scope "viewport" or scroll`;
  const why = keepXpath ? "" : "xpaths were left out and ";
  return { result: { ...result, elements: result.elements.slice(0, lo).map(slim), text }, warning: `${why}the index was cut to its first ${lo} of ${all} elements to fit in one message` };
}
