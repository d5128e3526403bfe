// Facts about an element that bear on the risk of using it (seed 002 §6.1), read from the page
// itself: the form it sends (method, where to, whether to another site, which kinds of fields
// it holds), a link to another site, a download, a frame of another site. The server's risk
// policy rates steps from these, not from the model's words.
import type { ElementFacts, FieldKind, FormFacts } from "../../../protocol/ts/protocol.ts";
import { FrameError } from "./dom.ts";

const PAYMENT_AUTOCOMPLETE = /\bcc-|\btransaction-/;
const PAYMENT_NAME = /card.?(number|no)|\bcc.?(num|number)|cvc|cvv|\bexp(iry|iration)?\b|\biban\b|account.?number/i;
const PERSONAL_AUTOCOMPLETE = /\b(email|tel|street-address|address-line\d|postal-code|name|given-name|family-name|bday)/;
const PERSONAL_NAME = /e-?mail|phone|mobile|address|postcode|zip|birth/i;

function kindOf(field: Element): FieldKind | undefined {
  if (!(field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement || field instanceof HTMLSelectElement)) return undefined;
  const type = field instanceof HTMLInputElement ? field.type : "";
  if (type === "password") return "password";
  if (["hidden", "submit", "button", "reset", "image", "checkbox", "radio"].includes(type)) return undefined;
  const autocomplete = (field.getAttribute("autocomplete") ?? "").toLowerCase();
  const named = `${field.name} ${field.id}`;
  if (PAYMENT_AUTOCOMPLETE.test(autocomplete) || PAYMENT_NAME.test(named)) return "payment";
  if (type === "email" || type === "tel" || PERSONAL_AUTOCOMPLETE.test(autocomplete) || PERSONAL_NAME.test(named)) return "personal";
  return undefined;
}

function sameOrigin(url: string): boolean {
  try {
    return new URL(url, location.href).origin === location.origin;
  } catch {
    return true;
  }
}

function formFacts(form: HTMLFormElement, submitter: Element | null): FormFacts {
  // A submit button may send the form elsewhere, or otherwise (`formaction`, `formmethod`).
  const button = submitter instanceof HTMLButtonElement || submitter instanceof HTMLInputElement ? submitter : null;
  const action = button?.hasAttribute("formaction") ? button.formAction : form.action;
  const method = (button?.hasAttribute("formmethod") ? button.formMethod : form.method).toUpperCase();
  const facts: FormFacts = { method, action, crossOrigin: !sameOrigin(action) };
  const fields = fieldKinds(form);
  if (fields.length > 0) facts.fields = fields;
  return facts;
}

/**
 * The kinds of fields of each form, for one synchronous pass over the page (an index): every
 * element of a big form would otherwise read all its fields again.
 */
let kindsOfForms: WeakMap<HTMLFormElement, FieldKind[]> | null = null;

function fieldKinds(form: HTMLFormElement): FieldKind[] {
  if (kindsOfForms === null) {
    kindsOfForms = new WeakMap();
    queueMicrotask(() => (kindsOfForms = null));
  }
  let kinds = kindsOfForms.get(form);
  if (kinds === undefined) {
    const found = new Set<FieldKind>();
    for (const field of Array.from(form.elements)) {
      const kind = kindOf(field);
      if (kind !== undefined) found.add(kind);
    }
    kinds = [...found].sort();
    kindsOfForms.set(form, kinds);
  }
  return kinds;
}

/**
 * Whether a link's `href` attribute surely leads to this page's origin without resolving it: a
 * fragment, a query or a path of its own (`/x`, not `//host` nor `/\\host`, which a URL parser
 * reads as a host), with nothing the parser would strip or drop, while the document's base is
 * this origin. Resolving every link of a page of thousands (`el.href`, then `new URL`) is most
 * of the time an index spends on its facts; anything else is resolved.
 */
function staysHere(href: string): boolean {
  return /^(?:#|\?|\/(?![/\\]))[^\t\n\r\\]*$/.test(href) && baseIsHere();
}

/** Whether the document's base URL is of this page's origin (read again when the base changes). */
let base: { uri: string; here: boolean } = { uri: "", here: false };

function baseIsHere(): boolean {
  const uri = document.baseURI;
  if (uri !== base.uri) base = { uri, here: /^https?:/.test(location.href) && sameOrigin(uri) };
  return base.here;
}

/** Whether a click on `el` submits its form. */
function submits(el: Element): boolean {
  if (el instanceof HTMLButtonElement) return el.type === "submit";
  return el instanceof HTMLInputElement && (el.type === "submit" || el.type === "image");
}

/** Whether this frame is inside a page of another origin. */
const crossOriginFrame = window !== window.top && Array.from(location.ancestorOrigins ?? []).some((origin) => origin !== location.origin);

/** The facts about `el`, or nothing when there are none. */
/** The origin of a URL, or the text itself when it is none. */
function originOf(url: string | undefined): string {
  if (url === undefined || url === "") return "nowhere";
  try {
    return new URL(url, location.href).origin;
  } catch {
    return url;
  }
}

/**
 * How `el` differs now from the facts a step was rated on (`expected`), or null: where its form
 * sends and how, whether it sends it, new kinds of fields in it, where it leads, a download.
 */
export function factsChange(expected: ElementFacts, el: Element): string | null {
  return factsDiffer(expected, riskFacts(el) ?? {});
}

function factsDiffer(expected: ElementFacts, now: ElementFacts): string | null {
  const [was, is] = [expected.form, now.form];
  if (originOf(was?.action) !== originOf(is?.action)) return `its form now sends to ${originOf(is?.action)}, not ${originOf(was?.action)}`;
  if ((was?.method ?? "") !== (is?.method ?? "")) return `its form is now sent by ${is?.method ?? "nothing"}, not ${was?.method ?? "nothing"}`;
  if ((expected.submits ?? false) !== (now.submits ?? false)) return now.submits === true ? "it now sends its form" : "it no longer sends its form";
  const added = (is?.fields ?? []).filter((kind) => !(was?.fields ?? []).includes(kind));
  if (added.length > 0) return `its form now holds ${added.join(" and ")} fields`;
  if (originOf(expected.leavesTo) !== originOf(now.leavesTo)) return `it now leads to ${originOf(now.leavesTo)}`;
  if ((expected.download ?? false) !== (now.download ?? false)) return now.download === true ? "it now downloads a file" : "it no longer downloads a file";
  if ((expected.crossOriginFrame ?? false) !== (now.crossOriginFrame ?? false)) return now.crossOriginFrame === true ? "it is in a frame" : "it is no longer in a frame";
  return null;
}

/**
 * Why acting on an element with these facts can send something away or not be undone, or null:
 * a click (`pressing` false) that submits a form to another site or one holding a password or
 * payment field, Enter or Space (`pressing`) in a form to another site, a link to another site,
 * a frame (what is inside one cannot be read from its page).
 */
function outbound(facts: ElementFacts, pressing: boolean): string | null {
  const form = facts.form;
  if (form?.crossOrigin === true && (facts.submits === true || pressing)) return `sends its form to ${originOf(form.action)}`;
  const guarded = (form?.fields ?? []).filter((kind) => kind === "password" || kind === "payment");
  if (facts.submits === true && guarded.length > 0) return `sends a form holding ${guarded.join(" and ")} fields`;
  if (facts.leavesTo !== undefined) return `leads to ${originOf(facts.leavesTo)}`;
  if (facts.crossOriginFrame === true) return "is inside a frame, whose elements cannot be named from the page";
  return null;
}

/** The element acted on through `el` (the button around a label's text) and its facts; a frame stands for what is in it. */
function actedOn(el: Element): ElementFacts {
  if (el instanceof HTMLIFrameElement || el instanceof HTMLFrameElement) return { crossOriginFrame: true };
  const control = el.closest("a[href], button, input, select, textarea, label") ?? el;
  const target = control instanceof HTMLLabelElement ? (control.control ?? control) : control;
  return riskFacts(target) ?? {};
}

/**
 * Refuses (`TARGET_CHANGED`) to click at a point or press a key on what `el` is there (the
 * element under the point, the focused one) when that is outbound or irreversible and not what
 * the step was rated on (`expected`; `{}`: nothing outbound). What a coordinate or a key reaches
 * is only known when it acts: this is where it is read.
 */
export function guardActedOn(expected: ElementFacts, el: Element, pressing: boolean, where: string): void {
  const now = actedOn(el);
  const why = outbound(now, pressing);
  // What is inside a frame is not read here: a step rated on an element in a frame expects one.
  const inFrame = now.crossOriginFrame === true && now.form === undefined;
  const changed = why === null || (inFrame && expected.crossOriginFrame === true) ? null : factsDiffer(expected, now);
  if (why !== null && changed !== null) {
    const rated = Object.keys(expected).length === 0 ? "it was rated as reaching nothing that sends or leaves" : changed;
    throw new FrameError("TARGET_CHANGED", `${where} ${why}, which this step was not rated on (${rated}); nothing was done — look at the page again, or act on it by its index`);
  }
}

export function riskFacts(el: Element): ElementFacts | undefined {
  const facts: ElementFacts = {};
  const form = (el as HTMLInputElement).form ?? null;
  if (form instanceof HTMLFormElement) {
    facts.form = formFacts(form, el);
    if (submits(el)) facts.submits = true;
  }
  const attr = el instanceof HTMLAnchorElement ? el.getAttribute("href") : null;
  if (attr !== null) {
    // A link that surely stays here resolves (to a URL of this origin) and leaves nowhere.
    const href = staysHere(attr) ? null : (el as HTMLAnchorElement).href;
    if (href !== "") {
      if (el.hasAttribute("download")) facts.download = true;
      if (href !== null && /^https?:/.test(href) && !sameOrigin(href)) facts.leavesTo = href;
    }
  }
  if (crossOriginFrame) facts.crossOriginFrame = true;
  return Object.keys(facts).length > 0 ? facts : undefined;
}
