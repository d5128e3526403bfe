// The HTML snapshot is evidence to read, never a page to run again: whoever opens it later (the
// person, from a download, or a browser that renders it) must not run the page's scripts. So
// the copy is cleaned by DOMPurify before it leaves the page: no `<script>`, `<noscript>`,
// frames (`<iframe srcdoc>`), objects or embeds, no `on…` handlers, no `javascript:` (or other
// scriptable) URLs. What a person reads stays: text, forms and what their fields hold, styles,
// images, the title. DOMPurify works on an inert document of its own, so nothing in the copy
// loads or runs while it is cleaned.
import DOMPurify from "dompurify";

const purify = DOMPurify(window);

/** `root` (a detached copy of the page's `<html>` or of one element) as HTML that runs nothing. */
export function inertHtml(root: Element): string {
  return purify.sanitize(root, {
    WHOLE_DOCUMENT: root.localName === "html",
    // The title, the charset and the stylesheets make the copy read as the page did; a meta
    // refresh would send its reader elsewhere.
    ADD_TAGS: ["title", "meta", "link"],
    ADD_ATTR: ["charset", "content"],
    FORBID_ATTR: ["http-equiv"],
    // Clobbering only matters to scripts, and there are none: field names stay as they were.
    SANITIZE_DOM: false,
  });
}
