// Secrets typed by placeholder: the model writes `{{secret:name}}`, and only at the moment of
// typing does the extension ask the task for the value (its own credential, the page it types
// into), check the page against the secret's domains itself, and type it. The values it learned
// are kept in `chrome.storage.session` (memory only, never on disk, not readable by content
// scripts) so that everything the extension sends afterwards — socket frames, results, uploaded
// page text and HTML — has them replaced by their placeholder, across service worker restarts.
import type { BrowserAction, ErrorCode, SecretValue, SecretValueRequest } from "../../protocol/ts/protocol.ts";
import type { ServerAccess } from "./storage.ts";
import { timedOut } from "./bounded.ts";
import { SecretMatcher } from "./redact.ts";
import type { SecretFound } from "./redact.ts";
import { ActionError } from "./results.ts";

const SESSION_KEY = "secretValues";
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** The names of the `{{secret:name}}` placeholders in `text`, in order, each once. */
export function placeholderNames(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/\{\{secret:([^{}]*)\}\}/g)) {
    const name = m[1]!.trim();
    if (NAME.test(name) && !names.includes(name)) names.push(name);
  }
  return names;
}

/** A secret's domain rule, read as the server reads it (`SecretDomain::parse`). */
type SecretDomain = { scheme: "http" | "https"; host: string; subdomains: boolean; port: number };

/**
 * `[http://|https://][*.]host[:port]`: without a scheme `https`, without a port the scheme's
 * default; undefined for anything else (the server stores no such rule).
 */
function parseSecretDomain(raw: string): SecretDomain | undefined {
  const rule = raw.toLowerCase();
  const scheme = rule.startsWith("http://") ? "http" : "https";
  let rest = rule.startsWith(`${scheme}://`) ? rule.slice(scheme.length + 3) : rule;
  const subdomains = rest.startsWith("*.");
  if (subdomains) rest = rest.slice(2);
  const colon = rest.indexOf(":");
  const host = colon < 0 ? rest : rest.slice(0, colon);
  let port = scheme === "https" ? 443 : 80;
  if (colon >= 0) {
    const digits = rest.slice(colon + 1);
    if (!/^\d{1,5}$/.test(digits)) return undefined;
    port = Number(digits);
  }
  const hostOk = host.length > 0 && host.length <= 253 && host.split(".").every((label) => /^[a-z0-9-]+$/.test(label));
  return hostOk && port > 0 && port <= 65535 ? { scheme, host, subdomains, port } : undefined;
}

/**
 * Whether a secret bound to `domains` may be typed into the page at `url` — the server's rule
 * (`secret_allowed_at`), tested against the same table (protocol/tests/fixtures/secret-domains.json): an
 * http(s) page whose scheme, host and port (the scheme's default when the URL names none) a rule
 * covers. `example.com` is `https://example.com` on port 443 only, `*.example.com` it and its
 * subdomains, `http://127.0.0.1:8123` plain http on that port.
 */
export function secretAllowedAt(domains: readonly string[], url: string): boolean {
  let page: URL;
  try {
    page = new URL(url);
  } catch {
    return false;
  }
  const scheme = page.protocol.slice(0, -1);
  if ((scheme !== "http" && scheme !== "https") || page.hostname === "") return false;
  const port = page.port !== "" ? Number(page.port) : scheme === "https" ? 443 : 80;
  return domains.some((raw) => {
    const rule = parseSecretDomain(raw);
    if (rule === undefined || rule.scheme !== scheme || rule.port !== port) return false;
    return page.hostname === rule.host || (rule.subdomains && page.hostname.endsWith(`.${rule.host}`));
  });
}

type Known = Record<string, Record<string, string>>;

/** The secret values this browser learned, per task, and the one filter that removes them. */
export class SecretVault {
  #known: Known = {};
  #loaded: Promise<void> | undefined;
  /** Every `[name, value]` learned (two tasks may name different values alike), compiled. */
  #matcher = new SecretMatcher([]);
  #count = 0;

  /** Reads what an earlier life of the service worker learned. */
  load(): Promise<void> {
    this.#loaded ??= (async () => {
      try {
        const stored = (await chrome.storage.session.get(SESSION_KEY))[SESSION_KEY];
        if (typeof stored === "object" && stored !== null) this.#known = { ...(stored as Known), ...this.#known };
      } catch {
        // No session storage (tests): memory only.
      }
      this.#index();
    })();
    return this.#loaded;
  }

  #index(): void {
    const all: Array<[string, string]> = [];
    for (const values of Object.values(this.#known)) for (const [name, value] of Object.entries(values)) all.push([name, value]);
    this.#matcher = new SecretMatcher(all);
    this.#count = all.length;
  }

  get empty(): boolean {
    return this.#count === 0;
  }

  async remember(taskId: string, name: string, value: string): Promise<void> {
    await this.load();
    (this.#known[taskId] ??= {})[name] = value;
    this.#index();
    try {
      await chrome.storage.session.set({ [SESSION_KEY]: this.#known });
    } catch {
      // No session storage (tests): memory only.
    }
  }

  /** `text` with every value learned, in any spelling, replaced by its placeholder (synchronous: what is loaded). */
  redact(text: string): string {
    return this.empty ? text : this.#matcher.redact(text);
  }

  /** Where the values learned stand in `text`, in any spelling. */
  find(text: string): SecretFound[] {
    return this.empty ? [] : this.#matcher.find(text);
  }

  /** A frame about to be sent, with the values replaced inside its strings (JSON stays valid). */
  redactFrame(frame: string): string {
    if (this.empty) return frame;
    const redacted = this.redact(frame);
    if (redacted === frame) return frame;
    try {
      const parsed: unknown = JSON.parse(frame);
      return JSON.stringify(mapStringsDeep(parsed, (s) => this.redact(s)));
    } catch {
      return redacted;
    }
  }
}

function mapStringsDeep(v: unknown, f: (s: string) => string): unknown {
  if (typeof v === "string") return f(v);
  if (Array.isArray(v)) return v.map((x) => mapStringsDeep(x, f));
  if (typeof v === "object" && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mapStringsDeep(x, f)]));
  return v;
}

/** The one vault of the service worker. */
export const secretVault = new SecretVault();

/** The `browser_type` attempt a secret is asked for: the server gives it only for that one. */
export type Typing = Pick<BrowserAction, "taskId" | "actionId" | "attempt">;

/**
 * The value of the secret `name` for typing into the page at `url`, asked of the task with the
 * extension's own credential for the `browser_type` attempt `typing` (once per attempt). The
 * server refuses a name it does not know (`TARGET_NOT_FOUND`), a page not on the secret's
 * domains and an action that does not type it (`PERMISSION_DENIED`); the extension checks the
 * page against the domains it is told once more.
 */
/** How long the server may take to give a secret's value. */
const SECRET_MS = 10_000;

export async function fetchSecret(server: ServerAccess, typing: Typing, name: string, url: string): Promise<SecretValue> {
  const base = server.serverUrl.replace(/\/+$/, "");
  const taskId = typing.taskId;
  const ask: SecretValueRequest = { name, url, actionId: typing.actionId, attempt: typing.attempt };
  let res: Response;
  try {
    res = await fetch(`${base}/api/task/${encodeURIComponent(taskId)}/secret-value`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify(ask),
      signal: AbortSignal.timeout(SECRET_MS),
    });
  } catch (error) {
    const why = timedOut(error) ? `no answer within ${SECRET_MS / 1000} s` : error instanceof Error ? error.message : String(error);
    throw new ActionError("TIMEOUT", `cannot reach the server for the secret ${name}: ${why}`, true);
  }
  const body = (await res.json().catch(() => null)) as (SecretValue & { code?: ErrorCode; message?: string }) | null;
  if (res.status !== 200 || body === null || typeof body.value !== "string") {
    const code: ErrorCode = body?.code === "TARGET_NOT_FOUND" || body?.code === "PERMISSION_DENIED" ? body.code : "PERMISSION_DENIED";
    throw new ActionError(code, body?.message ?? `the server refused the secret ${name}: ${res.status}`, false);
  }
  if (!secretAllowedAt(body.domains, url)) {
    throw new ActionError("PERMISSION_DENIED", `the secret ${name} may be typed only on ${body.domains.join(", ")}`, false);
  }
  return body;
}

/**
 * `text` with its `{{secret:name}}` placeholders replaced by their values, for typing into the
 * field `target` of frame `frameId` — whose page, and the form it belongs to (where the form
 * sends it), must be on each secret's domains. The field is marked as holding a secret before
 * anything is typed (`mark`, which says where its form sends), so it is masked and never read
 * back from then on. Text without placeholders is returned as it is.
 */
export async function substituteSecrets(
  server: ServerAccess,
  typing: Typing,
  tabId: number,
  frameId: number,
  mark: () => Promise<{ sendsTo?: string }>,
  text: string,
): Promise<string> {
  const names = placeholderNames(text);
  if (names.length === 0) return text;
  const frame = await chrome.webNavigation.getFrame({ tabId, frameId }).catch(() => null);
  const url = frame?.url ?? (await chrome.tabs.get(tabId)).url ?? "";
  let out = text;
  const values: SecretValue[] = [];
  for (const name of names) values.push(await fetchSecret(server, typing, name, url));
  await secretVault.load();
  for (const v of values) await secretVault.remember(typing.taskId, v.name, v.value);
  const { sendsTo } = await mark();
  const elsewhere = values.find((v) => sendsTo !== undefined && !secretAllowedAt(v.domains, sendsTo));
  if (elsewhere !== undefined) {
    throw new ActionError("PERMISSION_DENIED", `the secret ${elsewhere.name} may be sent only to ${elsewhere.domains.join(", ")}, and this field's form sends to ${new URL(sendsTo!).origin}: nothing was typed`, false);
  }
  for (const v of values) out = out.split(`{{secret:${v.name}}}`).join(v.value);
  return out;
}
