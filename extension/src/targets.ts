// Targets named without an index (a script's way): which way a target is named, the implicit
// ARIA role of an element, how well what an element says matches a wanted label, and picking
// the one best match — or refusing to guess between several. Pure, so the rules are tested
// without a page; the content script walks the page with them (content/locate.ts).
import type { Target } from "../../protocol/ts/protocol.ts";

export type TargetWay = "clickId" | "xpath" | "selector" | "label" | "role";

/** The ways a target is named; `label` beside `role` narrows the role, it is not a second way. */
export function targetWays(t: Target): TargetWay[] {
  const ways: TargetWay[] = [];
  if (t.clickId !== undefined) ways.push("clickId");
  if (t.xpath !== undefined) ways.push("xpath");
  if (t.selector !== undefined) ways.push("selector");
  if (t.role !== undefined) ways.push("role");
  else if (t.label !== undefined) ways.push("label");
  return ways;
}

/** Why a target cannot be used, or `undefined`: it must be named exactly one way, not empty. */
export function targetProblem(t: Target): string | undefined {
  const ways = targetWays(t);
  const rule = "name the element exactly one way: clickId, xpath, selector, label, or role (with label to narrow it by name)";
  if (ways.length === 0) return rule;
  if (ways.length > 1) return `${rule}; this target gives ${ways.join(" and ")}`;
  for (const field of ["xpath", "selector", "label", "role"] as const) {
    const value = t[field];
    if (value !== undefined && (typeof value !== "string" || value.trim() === "")) return `the ${field} is empty`;
  }
  return undefined;
}

/** Lower case, whitespace collapsed: how labels are compared. */
export function normalize(text: string): string {
  return text.replace(/\s+/g, " ").trim().toLowerCase();
}

/** How well one of an element's texts matches a wanted label: exact, partial, or not at all. */
export function matchQuality(texts: readonly string[], wanted: string): "exact" | "partial" | undefined {
  const needle = normalize(wanted);
  const said = texts.map(normalize).filter((t) => t !== "");
  if (said.includes(needle)) return "exact";
  return said.some((t) => t.includes(needle)) ? "partial" : undefined;
}

/**
 * An element's rank as a match, lower is better: an exact match before a partial one, then a
 * control before plain text, then an enabled element before a disabled one (which is still
 * found, so that the action says it is disabled rather than that nothing matches).
 */
export function rank(quality: "exact" | "partial", control: boolean, disabled: boolean): number {
  return (quality === "exact" ? 0 : 4) + (control ? 0 : 2) + (disabled ? 1 : 0);
}

type ElementLike = Pick<Element, "localName" | "getAttribute" | "hasAttribute">;

const TEXTBOX_TYPES = new Set(["", "text", "email", "tel", "url", "password"]);
const INPUT_ROLES: Record<string, string> = {
  button: "button",
  submit: "button",
  reset: "button",
  image: "button",
  checkbox: "checkbox",
  radio: "radio",
  range: "slider",
  number: "spinbutton",
  search: "searchbox",
};
const TAG_ROLES: Record<string, string> = {
  button: "button",
  textarea: "textbox",
  option: "option",
  h1: "heading",
  h2: "heading",
  h3: "heading",
  h4: "heading",
  h5: "heading",
  h6: "heading",
  nav: "navigation",
  main: "main",
  ul: "list",
  ol: "list",
  li: "listitem",
  table: "table",
  tr: "row",
  td: "cell",
  th: "columnheader",
  dialog: "dialog",
  progress: "progressbar",
  fieldset: "group",
  details: "group",
  article: "article",
  aside: "complementary",
  hr: "separator",
};

/**
 * The element's ARIA role: its `role` attribute (the first token, as browsers read a fallback
 * list), else the role HTML gives it. A password field counts as a textbox, as a person sees it.
 */
export function roleOf(el: ElementLike): string | undefined {
  const explicit = el.getAttribute("role")?.trim().split(/\s+/)[0];
  if (explicit) return explicit.toLowerCase();
  const tag = el.localName;
  if (tag === "a" || tag === "area") return el.hasAttribute("href") ? "link" : undefined;
  if (tag === "img") return el.getAttribute("alt") === "" ? "presentation" : "img";
  if (tag === "select") return el.hasAttribute("multiple") || Number(el.getAttribute("size") ?? "0") > 1 ? "listbox" : "combobox";
  if (tag === "input") {
    const type = (el.getAttribute("type") ?? "").toLowerCase();
    if (type === "hidden") return undefined;
    if ((TEXTBOX_TYPES.has(type) || type === "search") && el.hasAttribute("list")) return "combobox";
    if (TEXTBOX_TYPES.has(type)) return "textbox";
    return INPUT_ROLES[type];
  }
  return TAG_ROLES[tag];
}

/** What an error says about one candidate: `<button> "Save" (button)`. */
export type Candidate = { tag: string; text: string; role?: string };

export function describeCandidate(c: Candidate): string {
  const text = c.text.length > 40 ? `${c.text.slice(0, 39)}…` : c.text;
  return `<${c.tag}>${text ? ` ${JSON.stringify(text)}` : ""}${c.role ? ` (${c.role})` : ""}`;
}

/** Most candidates an ambiguity names. */
export const MAX_NAMED_CANDIDATES = 5;

/** The refusal of a target that several elements fit equally well. */
export function ambiguity(what: string, total: number, named: readonly Candidate[]): string {
  const list = named.slice(0, MAX_NAMED_CANDIDATES).map(describeCandidate).join(", ");
  const more = total > MAX_NAMED_CANDIDATES ? `, and ${total - MAX_NAMED_CANDIDATES} more` : "";
  return `${total} elements fit ${what} equally well: ${list}${more}. Name one more precisely (a longer label, a role with a label, or a selector)`;
}

/** The refusal of a label or role that nothing visible fits. */
export function notFound(what: string): string {
  return `no visible element fits ${what}`;
}

/** The target described for messages: `label "Save"`, `role button named "Save"`. */
export function targetDescription(t: Pick<Target, "label" | "role">): string {
  if (t.role !== undefined) return `role ${t.role}${t.label !== undefined ? ` named ${JSON.stringify(t.label)}` : ""}`;
  return `label ${JSON.stringify(t.label)}`;
}

/**
 * The best-ranked matches. With `contains`, an element holding another match of the same rank
 * is left out: matched by what it says, it says it only through that one (a link around its
 * button, a paragraph around its bold words).
 */
export function best<T>(matches: ReadonlyArray<{ item: T; rank: number }>, contains?: (outer: T, inner: T) => boolean): T[] {
  if (matches.length === 0) return [];
  const top = Math.min(...matches.map((m) => m.rank));
  const tied = matches.filter((m) => m.rank === top).map((m) => m.item);
  if (contains === undefined) return tied;
  return tied.filter((outer) => !tied.some((inner) => inner !== outer && contains(outer, inner)));
}
