// Where the extension may act (seed 000 §4.3): only in the task's own tab, never on the web
// app's or the server's origin, never on the browser's own pages, and only on sites the person
// allowed (see site-access.ts for the Chrome side). Pure: tested under node:test.
import type { DomainPolicy } from "../../protocol/ts/protocol.ts";
import { ActionError } from "./results.ts";

/** Schemes a task tab may show. `about:blank` is where a task without a URL starts. */
const ALLOWED_SCHEMES = new Set(["http:", "https:"]);

/**
 * Refuses a URL the task may not act on or go to. `serverUrl` is the configured server (which
 * also serves the web app); `extraOrigins` any other origin of the web app.
 */
export function checkUrl(url: string, serverUrl: string, extraOrigins: readonly string[] = []): void {
  if (url === "about:blank" || url === "") return;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ActionError("SCHEMA_VALIDATION_FAILED", `${JSON.stringify(url)} is not a URL`);
  }
  if (!ALLOWED_SCHEMES.has(parsed.protocol)) {
    throw new ActionError("PERMISSION_DENIED", `Mimo does not act on ${parsed.protocol} pages (${url})`);
  }
  const forbidden = new Set(extraOrigins);
  try {
    if (serverUrl !== "") forbidden.add(new URL(serverUrl).origin);
  } catch {
    // An unset or broken server address forbids nothing more.
  }
  if (forbidden.has(parsed.origin)) {
    throw new ActionError("PERMISSION_DENIED", `Mimo does not act on its own web app or server (${parsed.origin})`);
  }
}

export type TaskTab = { tabId: number; tabs?: number[] };

/** The tab an action runs in: the one asked for if it is one of the task's, else its current one. */
export function taskTabFor(task: TaskTab | undefined, requested: number | undefined, taskId: string): number {
  if (task === undefined) {
    throw new ActionError("INVALID_TASK_TAB", `task ${taskId} has no task tab in this browser: start it with task_start`);
  }
  const tabs = task.tabs ?? [task.tabId];
  if (requested !== undefined && !tabs.includes(requested)) {
    throw new ActionError("INVALID_TASK_TAB", `tab ${requested} is not one of the task's tabs (${tabs.join(", ")})`);
  }
  return requested ?? task.tabId;
}

/** The site (origin) a URL belongs to when it is a web page Mimo could act on, else null. */
export function siteOf(url: string): string | null {
  try {
    const parsed = new URL(url);
    return ALLOWED_SCHEMES.has(parsed.protocol) ? parsed.origin : null;
  } catch {
    return null;
  }
}

/** The host permission pattern that covers every page of a site. */
export function sitePattern(site: string): string {
  return `${site}/*`;
}

/**
 * The refusal for a site the person has not allowed yet: what to do is in the message, and the
 * site goes with it (`waitsForSite`), so that a run waits for the person instead of failing.
 */
export function siteNotAllowed(site: string): ActionError {
  const error = new ActionError(
    "PERMISSION_DENIED",
    `Mimo is not allowed on ${site}: open the Mimo side panel and press "Allow Mimo on ${site}" (or allow all sites in Mimo's options), then try again`,
    false,
  );
  error.waitsForSite = site;
  return error;
}

/**
 * A host as rules and URLs are compared: lower case, punycode (IDNA), without trailing dots; null
 * when it is not a host. The server's `site_host` (protocol/src/action/mod.rs) is the same rule.
 */
export function siteHost(host: string): string | null {
  try {
    return new URL(`http://${host.trim().replace(/\.+$/, "")}/`).hostname.replace(/\.+$/, "") || null;
  } catch {
    return null;
  }
}

/**
 * A domain rule as written (`shop.example`, `*.shop.example`, `shop.example:8443`), read: its
 * host normalised (`siteHost`) and the port it names, if any; null when it names no host.
 */
export type DomainRule = { host: string; port: string | null };

export function readRule(rule: string): DomainRule | null {
  let r = rule.trim().replace(/^\*\./, "");
  let port: string | null = null;
  const at = r.lastIndexOf(":");
  if (at > 0 && /^\d+$/.test(r.slice(at + 1))) {
    port = String(Number(r.slice(at + 1)));
    r = r.slice(0, at);
  }
  const host = siteHost(r);
  return host === null ? null : { host, port };
}

/** The port a web page's URL is served from: the one it names, else its scheme's default. */
export function portOf(url: URL): string {
  return url.port || (url.protocol === "https:" ? "443" : "80");
}

/** Whether a rule covers a page of `host` on `port`: a host its subdomains on any port, `host:port` exactly that one. */
export function ruleCovers(rule: DomainRule, host: string, port: string): boolean {
  if (rule.port !== null) return rule.host === host && rule.port === port;
  return host === rule.host || host.endsWith(`.${rule.host}`);
}

/**
 * Why the task's domain policy keeps it from `url` (naming the rule), or null. The same rules
 * as the server's `DomainPolicy::refusal` (protocol/src/action/mod.rs), tested against one table
 * (protocol/tests/fixtures/domain-rules.json): the URL read as the browser reads it, hosts
 * compared normalised (`siteHost`); a host covers its subdomains on any port, `host:port`
 * exactly that port (the scheme's default when the URL names none); blocked rules win; with
 * allowed rules, only what they cover. Only web pages are judged.
 */
export function domainRefusal(policy: DomainPolicy | undefined, url: string, names = DEPLOYMENT_RULES): string | null {
  if (policy === undefined) return null;
  let host: string;
  let port: string;
  try {
    const parsed = new URL(url);
    if (!ALLOWED_SCHEMES.has(parsed.protocol)) return null;
    host = parsed.hostname.replace(/\.+$/, "");
    port = portOf(parsed);
  } catch {
    return null;
  }
  const covers = (rule: string) => {
    const read = readRule(rule);
    return read !== null && ruleCovers(read, host, port);
  };
  const blocked = policy.blocked.find(covers);
  if (blocked !== undefined) return `${url} is on a blocked domain (rule ${JSON.stringify(blocked)} of ${names.blocked})`;
  if (policy.allowed.length > 0 && !policy.allowed.some(covers)) return `${url} is not on an allowed domain (${names.allowed}: ${policy.allowed.join(", ")})`;
  return null;
}

/** Where rules are set, as a refusal names them: the deployment's settings, or the task's own. */
const DEPLOYMENT_RULES = { blocked: "MIMO_BLOCKED_DOMAINS", allowed: "MIMO_ALLOWED_DOMAINS" };
const TASK_RULES = { blocked: "this task's blocked sites", allowed: "this task's allowed sites" };

/** The rules a task is kept to: the deployment's, and its own (both must let a page be visited). */
export type SiteRules = { domains?: DomainPolicy; taskDomains?: DomainPolicy };

/** Why the task's rules keep it from `url` (the deployment's first), or null. */
export function siteRulesRefusal(rules: SiteRules, url: string): string | null {
  return domainRefusal(rules.domains, url) ?? domainRefusal(rules.taskDomains, url, TASK_RULES);
}

/** Refuses a page the task's rules keep it from: `PERMISSION_DENIED` with the rule. */
export function checkDomains(rules: SiteRules, url: string): void {
  const why = siteRulesRefusal(rules, url);
  if (why !== null) throw new ActionError("PERMISSION_DENIED", why, false);
}

