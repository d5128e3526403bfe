// Injected into a task tab's top frame on demand (`chrome.scripting.executeScript`), not into
// every page: Mozilla Readability on a clone of the document, Turndown for the markdown, and
// the plain text. Secrets are replaced in the clone before anything reads it.
import { Readability } from "@mozilla/readability";
import TurndownService from "turndown";
import { isSensitiveField, SECRET_PLACEHOLDER } from "./secrets.ts";

export type ReadabilityPage = { title: string; text: string; markdown: string; article: boolean };

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

/** Text of some HTML, parsed inertly (nothing loads), with block elements on their own lines. */
function plainText(html: string): string {
  const doc = new DOMParser().parseFromString(html, "text/html");
  for (const el of Array.from(doc.body.querySelectorAll("p, div, section, article, li, h1, h2, h3, h4, h5, h6, tr, br, pre, blockquote"))) {
    el.append(doc.createTextNode("\n"));
  }
  return (doc.body.textContent ?? "").replace(/[ \t]+/g, " ").replace(/ ?\n ?/g, "\n").replace(/\n{3,}/g, "\n\n").trim();
}

globalThis.__mimoReadability = () => {
  const clone = document.cloneNode(true) as Document;
  maskSecrets(clone);
  const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced" });
  turndown.remove(["script", "style", "noscript"]);
  const article = new Readability(clone).parse();
  if (article !== null && article.content) {
    return {
      title: article.title ?? document.title,
      text: plainText(article.content),
      markdown: turndown.turndown(article.content),
      article: true,
    };
  }
  // No article: the whole body as the page shows it.
  const body = document.cloneNode(true) as Document;
  maskSecrets(body);
  const html = body.body?.innerHTML ?? "";
  return { title: document.title, text: plainText(html), markdown: turndown.turndown(html), article: false };
};
