// Injected into a task tab's top frame on demand (`chrome.scripting.executeScript`), not into
// every page: Mozilla Readability on a clone of the document, Turndown for the markdown (tables
// as tables), and the plain text. What a person cannot see is taken out of the clone first, so
// hidden or off-screen text is never presented as the page's content; secrets are replaced.
import { tables } from "@joplin/turndown-plugin-gfm";
import { Readability } from "@mozilla/readability";
import TurndownService from "turndown";
import { pageChanges } from "./page-changes.ts";
import { isSensitiveField, SECRET_PLACEHOLDER } from "./secrets.ts";

/** `unchanged`: given again, read before at the same count of the page's changes. */
export type ReadabilityPage = { title: string; text: string; markdown: string; article: boolean; unchanged?: true };

declare global {
  // eslint-disable-next-line no-var
  var __mimoReadability: (() => ReadabilityPage) | undefined;
}

function maskSecrets(doc: Document): void {
  for (const el of Array.from(doc.querySelectorAll("input, textarea, [data-sensitive]"))) {
    if (!isSensitiveField(el)) continue;
    if (el.tagName === "INPUT") {
      if (el.hasAttribute("value")) el.setAttribute("value", SECRET_PLACEHOLDER);
    } else {
      el.textContent = SECRET_PLACEHOLDER;
    }
  }
  doc.getElementById("mimo-overlay-host")?.remove();
  for (const el of Array.from(doc.querySelectorAll("script, style, noscript, template"))) el.remove();
}

/** Fully transparent, as `getComputedStyle` writes colours. */
const TRANSPARENT = /^(transparent|rgba\(.*,\s*0\))$/;

/**
 * Whether a person looking at the page cannot see `el` (nor anything in it): not rendered
 * (display, visibility, opacity, content-visibility), no size with its overflow cut, placed off
 * the page, text too small to read, or text in the colour of what is behind it.
 */
function unseen(el: Element, scroll: { x: number; y: number }, backgrounds: Map<Element, string>): boolean {
  if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return true;
  const rect = el.getBoundingClientRect();
  // Left of or above the page's origin: no scrolling brings it into view.
  if (rect.right + scroll.x <= 0 || rect.bottom + scroll.y <= 0) return true;
  const style = getComputedStyle(el);
  if (rect.width <= 1 && rect.height <= 1 && style.overflow !== "visible") return true;
  const clip = style.clipPath;
  if (clip === "inset(50%)" || clip === "inset(100%)") return true;
  if (!hasOwnText(el)) return false;
  const colour = style.color;
  if (parseFloat(style.fontSize) < 2 || TRANSPARENT.test(colour)) return true;
  return colour === backgroundBehind(el, backgrounds);
}

/** Whether `el` holds text of its own (not only in its children). Walked without a copy: this runs for every element. */
function hasOwnText(el: Element): boolean {
  for (let n = el.firstChild; n !== null; n = n.nextSibling) {
    if (n.nodeType === Node.TEXT_NODE && (n.nodeValue ?? "").trim() !== "") return true;
  }
  return false;
}

/** The colour painted behind `el`: its own background or the nearest ancestor's (white at the top). */
function backgroundBehind(el: Element, known: Map<Element, string>): string {
  const cached = known.get(el);
  if (cached !== undefined) return cached;
  const own = getComputedStyle(el).backgroundColor;
  const parent = el.parentElement;
  const colour = !TRANSPARENT.test(own) ? own : parent === null ? "rgb(255, 255, 255)" : backgroundBehind(parent, known);
  known.set(el, colour);
  return colour;
}

/**
 * A clone of the document without what a person cannot see. The clone's elements are in the
 * same order as the live page's, so the live page (which has styles and layout) decides.
 */
function visibleClone(): Document {
  const clone = document.cloneNode(true) as Document;
  const live = document.body === null ? [] : Array.from(document.body.querySelectorAll("*"));
  const copies = clone.body === null ? [] : Array.from(clone.body.querySelectorAll("*"));
  if (live.length === copies.length) {
    const backgrounds = new Map<Element, string>();
    const scroll = { x: scrollX, y: scrollY };
    const unseenCopies: Element[] = [];
    for (let i = 0; i < live.length; i++) {
      if (!unseen(live[i], scroll, backgrounds)) continue;
      unseenCopies.push(copies[i]);
      // Everything inside goes with it.
      while (i + 1 < live.length && live[i].contains(live[i + 1])) i++;
    }
    for (const copy of unseenCopies) copy.remove();
  }
  maskSecrets(clone);
  return clone;
}

/** The text of what `content` holds (a copy of it is marked up), with block elements on their own lines. */
function plainText(content: Element): string {
  const root = content.cloneNode(true) as Element;
  const doc = root.ownerDocument;
  for (const el of Array.from(root.querySelectorAll("td, th"))) el.append(doc.createTextNode(" | "));
  for (const el of Array.from(root.querySelectorAll("p, div, section, article, li, h1, h2, h3, h4, h5, h6, tr, br, pre, blockquote"))) {
    el.append(doc.createTextNode("\n"));
  }
  return (root.textContent ?? "").replace(/[ \t]+/g, " ").replace(/ ?\n ?/g, "\n").replace(/\n{3,}/g, "\n\n").trim();
}

/** The page's text last read, and what it was read at. */
let last: { at: string; page: ReadabilityPage } | undefined;

/** What the text depends on beyond the document: its address, the window's size and zoom. */
function readAt(): string | undefined {
  const changes = pageChanges();
  return changes === undefined ? undefined : `${changes} ${location.href} ${innerWidth}x${innerHeight}@${devicePixelRatio}`;
}

globalThis.__mimoReadability = () => {
  const at = readAt();
  if (at !== undefined && last?.at === at) return { ...last.page, unchanged: true };
  const page = read();
  last = at === undefined ? undefined : { at, page };
  return page;
};

function read(): ReadabilityPage {
  // What a person can see is decided once (the costly part: every element's style and box);
  // Readability takes a copy apart, and the page without an article is read from the rest.
  const visible = visibleClone();
  const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced" });
  turndown.use(tables);
  turndown.remove(["script", "style", "noscript"]);
  // The article as an element, not HTML: the text and the markdown are read from it without
  // writing it out and parsing it again, twice.
  const article = new Readability(visible.cloneNode(true) as Document, { serializer: (node) => node as HTMLElement }).parse();
  if (article?.content && article.content.hasChildNodes()) {
    return {
      title: article.title ?? document.title,
      text: plainText(article.content),
      markdown: turndown.turndown(article.content),
      article: true,
    };
  }
  // No article: the whole body as the page shows it.
  const body = visible.body;
  if (body === null) return { title: document.title, text: "", markdown: "", article: false };
  return { title: document.title, text: plainText(body), markdown: turndown.turndown(body), article: false };
}
