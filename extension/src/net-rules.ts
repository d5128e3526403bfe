// A task's domain policy enforced by Chrome before a request leaves (issue 24 §3). The actions'
// checks (guard.ts) see what Mimo is asked to do; a page's links, forms, redirects, scripts and
// frames reach other hosts without asking. declarativeNetRequest session rules, scoped with
// `tabIds` to the task's tabs, make Chrome cancel those requests itself:
//
// - blocked rules (the deployment's and the task's): every request to the host and its
//   subdomains, of every resource type, on any port; `host:port` only that port (the scheme's
//   default when a URL names none) — the rules as `domainRefusal` reads them;
// - allowed rules: a page or a frame (main_frame, sub_frame) of a host they do not cover is
//   cancelled, subresources are not: pages of allowed sites load scripts, images and fonts from
//   CDNs nobody lists. Keeping data from a host is the blocked rules' work.
//
// The manifest asks for `declarativeNetRequest`, not `declarativeNetRequestWithHostAccess`:
// under the latter a rule acts only on hosts the extension has access to, and the person grants
// access to the sites Mimo works on, never to those it is to be kept from. Block and allow rules
// need no host access under the former.
//
// What the rules cannot hold: a request that is no tab's (a page's service worker fetching on
// its own), and the first request of a tab a task's page opens (`target=_blank`,
// `window.open`), which Chrome may send before the service worker hears of the tab and adds it
// to the rules. Actions are checked where they run all the same.
//
// Pure: the rules are built here from the policies and the tab ids, tested under node:test;
// net-guard.ts gives them to Chrome.
import type { DomainPolicy } from "../../protocol/ts/protocol.ts";
import { readRule, ruleCovers } from "./guard.ts";
import type { DomainRule, SiteRules } from "./guard.ts";

export type NetRule = chrome.declarativeNetRequest.Rule;
type ResourceType = `${chrome.declarativeNetRequest.ResourceType}`;

/** Every kind of request Chrome tells apart: a blocked host gets none of them. */
export const EVERY_RESOURCE_TYPE: readonly ResourceType[] = [
  "main_frame",
  "sub_frame",
  "stylesheet",
  "script",
  "image",
  "font",
  "object",
  "xmlhttprequest",
  "ping",
  "csp_report",
  "media",
  "websocket",
  "webtransport",
  "webbundle",
  "other",
];
/** Pages and frames: what the allowed rules limit. */
export const PAGE_TYPES: readonly ResourceType[] = ["main_frame", "sub_frame"];

// Where several rules match a request, Chrome applies the one of highest priority: a blocked
// host is cancelled whatever else matches; a page an allowed `host:port` covers passes the
// refusal of pages no allowed rule covers (which, by host only, cannot name a port).
const BLOCKED_PRIORITY = 3;
const ALLOWED_PORT_PRIORITY = 2;
const NOT_ALLOWED_PRIORITY = 1;

/** A task whose tabs its policies hold. */
export type GuardedTask = { rules: SiteRules; tabIds: readonly number[] };

/** Every guarded task's rules, numbered one after the other from 1, so no two share an id. */
export function netRules(tasks: readonly GuardedTask[]): NetRule[] {
  const out: NetRule[] = [];
  for (const task of tasks) out.push(...taskNetRules(task.rules, task.tabIds, out.length + 1));
  return out;
}

/** The rules that keep `tabIds` to the task's policies, numbered from `firstId`. */
export function taskNetRules(rules: SiteRules, tabIds: readonly number[], firstId: number): NetRule[] {
  if (tabIds.length === 0) return [];
  const tabs = [...tabIds];
  const policies = [rules.domains, rules.taskDomains].filter((p): p is DomainPolicy => p !== undefined);
  const made: Array<Omit<NetRule, "id">> = [];
  const block = (priority: number, condition: chrome.declarativeNetRequest.RuleCondition) =>
    made.push({ priority, action: { type: "block" }, condition: { tabIds: tabs, ...condition } });

  const blocked = policies.flatMap((p) => readRules(p.blocked));
  const blockedHosts = unique(blocked.filter((r) => r.port === null).map((r) => r.host));
  if (blockedHosts.length > 0) block(BLOCKED_PRIORITY, { requestDomains: blockedHosts, resourceTypes: [...EVERY_RESOURCE_TYPE] });
  for (const regexFilter of unique(blocked.filter(namesPort).map(portFilter))) {
    block(BLOCKED_PRIORITY, { regexFilter, resourceTypes: [...EVERY_RESOURCE_TYPE] });
  }

  // Each policy with allowed rules refuses, on its own, the pages none of its rules covers: a
  // page must pass both the deployment's and the task's.
  const limiting = policies.filter((p) => p.allowed.length > 0).map((p) => readRules(p.allowed));
  for (const allowed of limiting) {
    const hosts = unique(allowed.filter((r) => r.port === null).map((r) => r.host));
    block(NOT_ALLOWED_PRIORITY, { resourceTypes: [...PAGE_TYPES], ...(hosts.length > 0 ? { excludedRequestDomains: hosts } : {}) });
  }
  // An allowed `host:port` is let past the refusals above by an allow rule, which passes both
  // policies' refusals at once: there is one only where every policy with allowed rules covers
  // that host and port.
  const allowedPorts = limiting
    .flat()
    .filter(namesPort)
    .filter((r) => limiting.every((allowed) => allowed.some((a) => ruleCovers(a, r.host, r.port))));
  for (const regexFilter of unique(allowedPorts.map(portFilter))) {
    made.push({ priority: ALLOWED_PORT_PRIORITY, action: { type: "allow" }, condition: { tabIds: tabs, regexFilter, resourceTypes: [...PAGE_TYPES] } });
  }
  return made.map((rule, i) => ({ id: firstId + i, ...rule }));
}

/**
 * The URLs of a `host:port` rule as Chrome sends them, for http(s) and ws(s): the port named,
 * or none where the rule's port is the scheme's default; with any user info before the host and
 * any trailing dots after it (the browser reads `evil.test.` as `evil.test`). Chrome matches it
 * without regard to case.
 */
function portFilter(rule: PortRule): string {
  const host = `(?:[^/?#]*@)?${escapeRegex(rule.host)}\\.*`;
  const named = `(?:https?|wss?)://${host}:${rule.port}`;
  const defaultSchemes = rule.port === "443" ? "https|wss" : rule.port === "80" ? "http|ws" : null;
  const unnamed = defaultSchemes === null ? "" : `|(?:${defaultSchemes})://${host}`;
  return `^(?:${named}${unnamed})[/?#]`;
}

type PortRule = DomainRule & { port: string };

function namesPort(rule: DomainRule): rule is PortRule {
  return rule.port !== null;
}

function readRules(rules: readonly string[]): DomainRule[] {
  return rules.map(readRule).filter((r): r is DomainRule => r !== null);
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
}
