// Personal data kept out of what the extension sends (seed 002 §4.5.1): e-mail addresses, phone
// numbers, card numbers (Luhn-checked, so order numbers rarely match) and tokens and keys, each
// replaced by a label saying what was there. `evidence` filters what is stored (page text, HTML,
// element lists; screenshots mask the fields holding such data), `model` the text the model
// reads — each its own setting (task_start's `redaction`). Cookies and localStorage are never
// read at all. Also the secrets typed by placeholder, replaced by their placeholder wherever they
// would appear. Pure functions: tested without a browser.
import type { PiiKind, RedactionPolicy } from "../../protocol/ts/protocol.ts";

export const ALL_KINDS: readonly PiiKind[] = ["email", "phone", "card", "token"];

/** What a task that was told nothing filters: evidence, every kind; not the model's text. */
export const DEFAULT_REDACTION: RedactionPolicy = { evidence: true, model: false, kinds: [...ALL_KINDS] };

export const LABELS: Record<PiiKind, string> = {
  email: "[email redacted]",
  phone: "[phone redacted]",
  card: "[card redacted]",
  token: "[token redacted]",
};

type Found = { kind: PiiKind; start: number; end: number };

export const EMAIL = /[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,63})@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])/g;

/** Keys and tokens by their known shapes, then long random-looking strings. */
const TOKENS: RegExp[] = [
  /\b(?:sk|pk|rk)-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{16,}/g,
  /\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{30,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /\b[Bb]earer\s+[A-Za-z0-9._~+/-]{16,}=*/g,
  /\b(?:api[_-]?key|access[_-]?token|secret|password|passwd|token)\s*[:=]\s*["']?[^\s"'<>&\\]{8,}/gi,
];
/** A key that matches none of the shapes: 32 or more letters, digits, `_` or `-` (with upper and lower case letters and digits). */
const KEY_MIN = 32;
/** The characters of such a key, by char code. */
const KEY_CHAR = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") KEY_CHAR[c.charCodeAt(0)] = 1;
const keyChar = (text: string, i: number) => {
  const c = text.charCodeAt(i);
  return c < 128 && KEY_CHAR[c] === 1;
};

/**
 * Every whole run of at least `KEY_MIN` key characters, as `/(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{32,}(?![A-Za-z0-9_-])/g`
 * finds them, in order. Such a run covers one of every `KEY_MIN` positions in a row, so only those
 * are looked at, and the runs there measured: a regular expression tries every position, and on
 * megabytes of page text or an element list that was the filter's largest cost.
 */
export function keyRuns(text: string): Array<{ start: number; end: number; text: string }> {
  const out: Array<{ start: number; end: number; text: string }> = [];
  for (let i = KEY_MIN - 1; i < text.length; ) {
    if (!keyChar(text, i)) {
      i += KEY_MIN;
      continue;
    }
    let start = i;
    while (start > 0 && keyChar(text, start - 1)) start--;
    let end = i + 1;
    while (end < text.length && keyChar(text, end)) end++;
    if (end - start >= KEY_MIN) out.push({ start, end, text: text.slice(start, end) });
    // The next run starts after `end`'s character, which is none of them.
    i = end + KEY_MIN;
  }
  return out;
}

const CARD = /(?<![\d+-])\d(?:[ -]?\d){12,18}(?![\d-])/g;

const PHONE = /(?<![\w+.-])(?:\+\d{1,3}[\s.-]?(?:\(\d{1,4}\)[\s.-]?)?\d{1,4}|(?:\(\d{1,4}\)[\s.-]?)?\d{2,4})(?:[\s.-]\d{2,4}){1,5}(?![\w-])|(?<![\w+])\+\d{8,14}(?!\w)/g;
const DATE_LIKE = /^(?:\d{4}[-./ ]\d{1,2}[-./ ]\d{1,2}|\d{1,2}[-./ ]\d{1,2}[-./ ]\d{2,4})(?:\D|$)/;

/** The Luhn checksum of a card number's digits. */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function matches(text: string, re: RegExp): Array<{ start: number; end: number; text: string }> {
  const out: Array<{ start: number; end: number; text: string }> = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    out.push({ start: m.index, end: m.index + m[0].length, text: m[0] });
    if (m[0].length === 0) re.lastIndex++;
  }
  return out;
}

/** How far an address reaches on either side of its `@` (a local part, a domain name). */
const LOCAL_MAX = 64;
const DOMAIN_MAX = 255;

/**
 * The e-mail addresses in `text`, the pattern tried only around each `@`: tried from every
 * letter, it reads up to 64 characters ahead each time, which on megabytes of page text is the
 * filter's largest cost.
 */
function emails(text: string): Array<{ start: number; end: number; text: string }> {
  const out: Array<{ start: number; end: number; text: string }> = [];
  let from = 0;
  for (let at = text.indexOf("@"); at !== -1; at = text.indexOf("@", at + 1)) {
    if (at < from) continue;
    const start = Math.max(from, at - LOCAL_MAX);
    const found = matches(text.slice(start, at + DOMAIN_MAX + 1), EMAIL).find((m) => m.start + start <= at && at < m.end + start);
    if (found === undefined) continue;
    out.push({ start: found.start + start, end: found.end + start, text: found.text });
    from = found.end + start;
  }
  return out;
}

/** The personal data of `kinds` in `text`, without overlaps, in order. */
export function findPii(text: string, kinds: readonly PiiKind[]): Found[] {
  const found: Found[] = [];
  const free = (start: number, end: number) => found.every((f) => end <= f.start || start >= f.end);
  const add = (kind: PiiKind, start: number, end: number) => {
    if (free(start, end)) found.push({ kind, start, end });
  };
  if (kinds.includes("token")) {
    for (const re of TOKENS) for (const m of matches(text, re)) add("token", m.start, m.end);
    for (const m of keyRuns(text)) {
      if (/[a-z]/.test(m.text) && /[A-Z]/.test(m.text) && /\d/.test(m.text)) add("token", m.start, m.end);
    }
  }
  if (kinds.includes("email")) for (const m of emails(text)) add("email", m.start, m.end);
  if (kinds.includes("card")) {
    for (const m of matches(text, CARD)) {
      const digits = m.text.replace(/\D/g, "");
      if (digits.length >= 13 && digits.length <= 19 && luhn(digits) && !/^(\d)\1+$/.test(digits)) add("card", m.start, m.end);
    }
  }
  if (kinds.includes("phone")) {
    for (const m of matches(text, PHONE)) {
      const digits = m.text.replace(/\D/g, "");
      const international = m.text.startsWith("+");
      if (digits.length < (international ? 8 : 9) || digits.length > 15) continue;
      if (!international && DATE_LIKE.test(m.text)) continue;
      // A run of digits with dots only is a version or an address, not a number to call.
      if (!international && !/[\s()-]/.test(m.text) && !/^\d{3}\.\d{3}\.\d{4}$/.test(m.text)) continue;
      add("phone", m.start, m.end);
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

/** `text` with the personal data of `kinds` replaced by labels. */
export function redactPii(text: string, kinds: readonly PiiKind[]): string {
  if (kinds.length === 0 || text === "") return text;
  const found = findPii(text, kinds);
  if (found.length === 0) return text;
  let out = "";
  let at = 0;
  for (const f of found) {
    out += text.slice(at, f.start) + LABELS[f.kind];
    at = f.end;
  }
  return out + text.slice(at);
}

export function hasPii(text: string, kinds: readonly PiiKind[]): boolean {
  return kinds.length > 0 && findPii(text, kinds).length > 0;
}

// A secret's value may reach text in many spellings: raw; escaped in a JSON string; escaped in
// HTML (named or numeric entities); percent-encoded in a URL or a form (either case of hex, `+`
// for a space, escaped twice as in a URL inside a URL's query) — and a browser's URL parser
// escapes only some characters, so these mix within one value; and base64 or base64url of the
// exact value. Each value becomes one regular expression matching every such spelling: for each
// character the alternatives of its spellings, none a prefix of another (a raw `%`, `&` or `\`
// is refused where an escape starting with it follows), so that matching never backtracks
// between them and stays linear in the text whatever the page writes.

const escapeRe = (s: string) => s.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
/** A hex number in either case of its letters. */
const hexRe = (n: number, width: number) =>
  n
    .toString(16)
    .padStart(width, "0")
    .split("")
    .map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d))
    .join("");

const NAMED: Record<string, string[]> = { "&": ["amp"], "<": ["lt"], ">": ["gt"], '"': ["quot"], "'": ["apos"], "\u00a0": ["nbsp"] };
const JSON_SHORT: Record<string, string> = { '"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** The spellings of one character as regular expressions, each as its first character and the rest. */
function spellings(char: string): Array<{ first: string; rest: string }> {
  const cp = char.codePointAt(0)!;
  const out: Array<{ first: string; rest: string }> = [];
  // Percent-encoding of its UTF-8 bytes, perhaps escaped again (`%2540` for `@`).
  const bytes = Array.from(new TextEncoder().encode(char));
  out.push({ first: "%", rest: bytes.map((b, i) => `${i === 0 ? "" : "%"}(?:25)*${hexRe(b, 2)}`).join("") });
  if (char === " ") out.push({ first: "+", rest: "" });
  // HTML: numeric entities, and the names a serializer writes.
  out.push({ first: "&", rest: `#(?:0*${cp}|[xX]0*${hexRe(cp, 1)});` });
  for (const name of NAMED[char] ?? []) out.push({ first: "&", rest: `${name};` });
  // JSON: `\uXXXX` (a pair of them beyond the BMP) and the short escapes.
  const units = char.length === 2 ? [char.charCodeAt(0), char.charCodeAt(1)] : [cp];
  out.push({ first: "\\", rest: units.map((u, i) => `${i === 0 ? "" : "\\\\"}u${hexRe(u, 4)}`).join("") });
  const short = JSON_SHORT[char];
  if (short !== undefined) out.push({ first: "\\", rest: escapeRe(short.slice(1)) });
  return out;
}

/** One character in any of its spellings; the raw one only where no escape starting with it follows. */
function charPattern(char: string): string {
  const alternatives = spellings(char);
  const clashing = alternatives.filter((a) => a.first === char).map((a) => a.rest);
  const raw = escapeRe(char) + (clashing.length > 0 ? `(?!${clashing.join("|")})` : "");
  return `(?:${[raw, ...alternatives.map((a) => escapeRe(a.first) + a.rest)].join("|")})`;
}

const charsPattern = (text: string) => Array.from(text, charPattern).join("");

function base64(value: string): string {
  let binary = "";
  for (const b of new TextEncoder().encode(value)) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Whole spellings tried first, so a value whose raw text looks like an escape is still found. */
function exactForms(value: string): string[] {
  const html = value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  return [value, JSON.stringify(value).slice(1, -1), html, html.replace(/'/g, "&#39;"), encodeURIComponent(value), new URLSearchParams({ v: value }).toString().slice(2)];
}

/** Every spelling of `value` as one regular expression (without flags or groups of its own). */
function secretPattern(value: string): string {
  const exact = [...new Set(exactForms(value))].map(escapeRe);
  const b64 = base64(value);
  const unpadded = b64.replace(/=+$/, "");
  const encoded = [...new Set([unpadded, unpadded.replace(/\+/g, "-").replace(/\//g, "_")])].map(
    (form) => `(?<![A-Za-z0-9+/_-])${charsPattern(form)}(?:${charPattern("=")}){0,2}(?![A-Za-z0-9+/_-])`,
  );
  return [...exact, charsPattern(value), ...encoded].join("|");
}

/** Where a secret's value stands in a text, in any spelling: `[start, end)` and its name. */
export type SecretFound = { name: string; start: number; end: number };

/** The values of a set of secrets (`name → value`), compiled once, found or replaced in texts. */
export class SecretMatcher {
  readonly #re: RegExp | undefined;
  readonly #names: string[];

  constructor(secrets: Iterable<readonly [string, string]>) {
    // Longest first: a value that contains another is found whole.
    const entries = [...secrets].filter(([, value]) => value !== "").sort((a, b) => b[1].length - a[1].length);
    this.#names = entries.map(([name]) => name);
    this.#re = entries.length === 0 ? undefined : new RegExp(entries.map(([, value]) => `(${secretPattern(value)})`).join("|"), "g");
  }

  find(text: string): SecretFound[] {
    const re = this.#re;
    if (re === undefined || text === "") return [];
    const found: SecretFound[] = [];
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const group = m.findIndex((g, i) => i > 0 && g !== undefined);
      found.push({ name: this.#names[group - 1]!, start: m.index, end: m.index + m[0].length });
      if (m[0].length === 0) re.lastIndex++;
    }
    return found;
  }

  /** `text` with every value, in any spelling, replaced by its placeholder. */
  redact(text: string): string {
    const found = this.find(text);
    if (found.length === 0) return text;
    let out = "";
    let at = 0;
    for (const f of found) {
      out += text.slice(at, f.start) + `{{secret:${f.name}}}`;
      at = f.end;
    }
    return out + text.slice(at);
  }
}

/** `text` with every known secret value (`name → value`), in any spelling, replaced by its placeholder. */
export function redactSecrets(text: string, secrets: Iterable<readonly [string, string]>): string {
  return new SecretMatcher(secrets).redact(text);
}

/** Every string in a JSON-like value passed through `f` (object keys untouched). */
export function mapStrings<T>(value: T, f: (s: string) => string, skipKeys: ReadonlySet<string> = new Set()): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return f(v);
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === "object" && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = skipKeys.has(k) ? x : walk(x);
      return out;
    }
    return v;
  };
  return walk(value) as T;
}
