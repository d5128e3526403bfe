// Finding text on the page (the person's Ctrl+F): the match is brought into view in the page
// and in every scroll container that holds it, so a row 4,000 lines down is one step away. A
// page that loads more as it is scrolled (a feed) is asked for more when the text is not there
// yet: the service worker tries again once it had a moment to load.
export type FoundText =
  | { found: true; matches: number; snippet: string; scrollY: number }
  | { found: false; /** How tall the page and its feed are: the worker sees whether more loaded. */ height: number };

/** Lower case, whitespace collapsed: how text is compared. */
function norm(text: string): string {
  return text.replace(/\s+/g, " ").trim().toLowerCase();
}

import type { FeedScroll } from "../frame-protocol.ts";
import { shadowOf } from "./dom.ts";

const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE"]);
const VISIBLE = { checkVisibilityCSS: true, checkOpacity: true } as CheckVisibilityOptions;

/** The text nodes a person can see under `root`, in open shadow roots too. */
function* visibleTextNodes(root: Node): Generator<Text> {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
    acceptNode(node) {
      if (node.nodeType === Node.TEXT_NODE) return NodeFilter.FILTER_ACCEPT;
      const el = node as Element;
      if (SKIP.has(el.tagName)) return NodeFilter.FILTER_REJECT;
      return shadowOf(el) !== null ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP;
    },
  });
  for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
    if (n.nodeType !== Node.TEXT_NODE) {
      yield* visibleTextNodes(shadowOf(n as Element)!);
      continue;
    }
    const parent = n.parentElement;
    if (parent !== null && parent.checkVisibility(VISIBLE)) yield n as Text;
  }
}

/**
 * The elements that show `text`: those with a text node holding it whole, in page order; else
 * the innermost element whose text, read across its children (`Order <b>1057</b>`), holds it.
 */
function holders(text: string): Element[] {
  const needle = norm(text);
  const out: Element[] = [];
  for (const node of visibleTextNodes(document.body)) {
    const parent = node.parentElement!;
    if (norm(node.data).includes(needle) && out.at(-1) !== parent) out.push(parent);
  }
  if (out.length > 0) return out;
  let inner: Element | null = norm(document.body.textContent ?? "").includes(needle) ? document.body : null;
  while (inner !== null) {
    const child: Element | undefined = Array.from(inner.children).find(
      (c) => !SKIP.has(c.tagName) && c.checkVisibility(VISIBLE) && norm(c.textContent ?? "").includes(needle),
    );
    if (child === undefined) break;
    inner = child;
  }
  return inner === null || inner === document.body ? [] : [inner];
}

/** The element that scrolls the page, and the tallest scroll container (where a feed grows). */
function scrollers(): Element[] {
  const page = document.scrollingElement ?? document.documentElement;
  let feed: Element | null = null;
  for (const el of document.querySelectorAll("*")) {
    if (el.scrollHeight <= el.clientHeight + 2 || el.clientHeight === 0) continue;
    const overflow = getComputedStyle(el).overflowY;
    if (overflow !== "auto" && overflow !== "scroll") continue;
    if (feed === null || el.scrollHeight > feed.scrollHeight) feed = el;
  }
  return feed === null ? [page] : [page, feed];
}

export function findText(text: string, scroll: FeedScroll): FoundText {
  const found = norm(text) === "" ? [] : holders(text);
  const el = found[0];
  if (el !== undefined) {
    // `scrollIntoView` scrolls every scroll container on the way, the page last.
    el.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" });
    const words = (el.textContent ?? "").replace(/\s+/g, " ").trim();
    return { found: true, matches: found.length, snippet: words.length > 160 ? `${words.slice(0, 159)}…` : words, scrollY: window.scrollY };
  }
  let height = 0;
  for (const box of scrollers()) {
    if (scroll === "end") box.scrollTop = box.scrollHeight;
    if (scroll === "back") box.scrollTop = Math.max(0, box.scrollTop - 2 * box.clientHeight);
    height += box.scrollHeight;
  }
  return { found: false, height };
}
