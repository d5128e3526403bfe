// The network rules of a task's domain policy (net-rules.ts), judged the way Chrome applies
// them: a small model of declarativeNetRequest's matching below decides what each request
// meets, and the shared table of the domain rules (protocol/tests/fixtures/domain-rules.json)
// says what must be cancelled — everything `domainRefusal` refuses, where a request can say it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import type { DomainPolicy } from "../../protocol/ts/protocol.ts";
import { domainRefusal } from "../src/guard.ts";
import type { SiteRules } from "../src/guard.ts";
import { EVERY_RESOURCE_TYPE, netRules, PAGE_TYPES, taskNetRules } from "../src/net-rules.ts";
import type { NetRule } from "../src/net-rules.ts";
import { guardedTasks } from "../src/tasks.ts";
import type { TaskRecord } from "../src/tasks.ts";

type Request = { url: string; type: string; tabId: number };

/** Chrome's domain lists: the host or a subdomain of it, trailing dots of the host left out. */
function domainListed(host: string, domains: readonly string[]): boolean {
  const bare = host.replace(/\.+$/, "");
  return domains.some((d) => bare === d || bare.endsWith(`.${d}`));
}

function matches(rule: NetRule, request: Request): boolean {
  const c = rule.condition;
  const url = new URL(request.url);
  if (c.tabIds !== undefined && !c.tabIds.includes(request.tabId)) return false;
  // Without resource types, Chrome's default: every type but main_frame.
  if (c.resourceTypes !== undefined ? !c.resourceTypes.includes(request.type as never) : request.type === "main_frame") return false;
  if (c.requestDomains !== undefined && !domainListed(url.hostname, c.requestDomains)) return false;
  if (c.excludedRequestDomains !== undefined && domainListed(url.hostname, c.excludedRequestDomains)) return false;
  if (c.regexFilter !== undefined && !new RegExp(c.regexFilter, c.isUrlFilterCaseSensitive === true ? "" : "i").test(url.href)) return false;
  return true;
}

/** What Chrome does with a request: the highest priority matching rule wins, allow before block at a tie. */
function outcome(rules: readonly NetRule[], request: Request): "blocked" | "sent" {
  const matching = rules.filter((r) => matches(r, request));
  if (matching.length === 0) return "sent";
  const top = Math.max(...matching.map((r) => r.priority ?? 1));
  return matching.some((r) => (r.priority ?? 1) === top && r.action.type === "allow") ? "sent" : "blocked";
}

const TAB = 7;
const OTHER_TAB = 8;

/** The request of `type` to `url` as Chrome would send it (a socket's with ws: or wss:). */
function request(url: string, type: string, tabId = TAB): Request {
  const href = new URL(url).href;
  return { url: type === "websocket" ? href.replace(/^http/, "ws") : href, type, tabId };
}

/** Asserts which resource types of a request to `url` from the task's tab are cancelled. */
function assertCancelled(rules: readonly NetRule[], url: string, cancelled: readonly string[], why: string): void {
  for (const type of EVERY_RESOURCE_TYPE) {
    assert.equal(outcome(rules, request(url, type)), cancelled.includes(type) ? "blocked" : "sent", `${type} ${url}: ${why}`);
    assert.equal(outcome(rules, request(url, type, OTHER_TAB)), "sent", `${type} ${url} from a tab of no task: ${why}`);
  }
}

const policy = (p: Partial<DomainPolicy>): DomainPolicy => ({ allowed: p.allowed ?? [], blocked: p.blocked ?? [] });

describe("the network rules of a domain policy", () => {
  const table = JSON.parse(readFileSync(new URL("../../protocol/tests/fixtures/domain-rules.json", import.meta.url), "utf8")) as {
    cases: Array<{ allowed?: string[]; blocked?: string[]; url: string; refused: boolean }>;
  };

  it("cancel what domainRefusal refuses in the shared table: blocked hosts for every request, hosts not allowed for pages and frames", () => {
    let judged = 0;
    for (const c of table.cases) {
      const p = policy(c);
      if (!/^https?:$/.test(new URL(c.url).protocol)) {
        // Not a web page: no request Chrome's rules see, and none refused.
        assert.equal(c.refused, false, c.url);
        continue;
      }
      // What each list refuses on its own: blocked hosts everything, the allowed list pages.
      const blocked = domainRefusal({ allowed: [], blocked: p.blocked }, c.url) !== null;
      const notAllowed = domainRefusal({ allowed: p.allowed, blocked: [] }, c.url) !== null;
      assert.equal(blocked || notAllowed, c.refused, `the table's own verdict on ${c.url}`);
      const cancelled = blocked ? EVERY_RESOURCE_TYPE : notAllowed ? PAGE_TYPES : [];
      // The same whether the deployment sets the rules or the task does.
      for (const rules of [{ domains: p }, { taskDomains: p }] as SiteRules[]) {
        assertCancelled(taskNetRules(rules, [TAB], 1), c.url, cancelled, JSON.stringify(c));
      }
      judged++;
    }
    assert.ok(judged >= 30);
  });

  it("block a host:port rule's port only, the scheme's default where the URL names none, and not its subdomains", () => {
    const rules = taskNetRules({ taskDomains: policy({ blocked: ["evil.test:8443", "ads.test:443", "track.test:80"] }) }, [TAB], 1);
    const every = EVERY_RESOURCE_TYPE;
    assertCancelled(rules, "https://evil.test:8443/x", every, "the port named");
    assertCancelled(rules, "http://evil.test:8443/x", every, "the port named, another scheme");
    assertCancelled(rules, "https://user:pw@EVIL.test.:8443/x", every, "user info, case, trailing dot");
    assertCancelled(rules, "https://evil.test:8444/x", [], "another port");
    assertCancelled(rules, "https://evil.test/x", [], "the default port");
    assertCancelled(rules, "https://sub.evil.test:8443/x", [], "a subdomain");
    assertCancelled(rules, "https://evil.test.good.test:8443/x", [], "a host that only starts like it");
    assertCancelled(rules, "https://evil.test:8443@good.test/x", [], "the rule in the user info");
    assertCancelled(rules, "https://ads.test/x", every, "443 is https's default");
    assertCancelled(rules, "http://ads.test:443/x", every, "443 named on http");
    assertCancelled(rules, "http://ads.test/x", [], "http's default is 80");
    assertCancelled(rules, "http://track.test/x", every, "80 is http's default");
    assertCancelled(rules, "https://track.test/x", [], "https's default is 443");
    assert.equal(outcome(rules, { url: "wss://ads.test/socket", type: "websocket", tabId: TAB }), "blocked", "wss's default is 443");
    assert.equal(outcome(rules, { url: "ws://ads.test/socket", type: "websocket", tabId: TAB }), "sent", "ws's default is 80");
  });

  it("keep pages to what every policy with allowed rules covers, an allowed host:port only where both allow it", () => {
    const deployment = policy({ allowed: ["shop.test", "cdn.test:8443"] });
    const own = policy({ allowed: ["shop.test:8080", "www.shop.test", "cdn.test", "other.test:8080"] });
    const rules = taskNetRules({ domains: deployment, taskDomains: own }, [TAB], 1);
    const judge = (url: string) => domainRefusal(deployment, url) ?? domainRefusal(own, url);
    for (const url of [
      "http://shop.test:8080/",
      "http://shop.test:8081/",
      "https://shop.test/",
      "https://www.shop.test/",
      "https://a.www.shop.test:9/",
      "https://cdn.test:8443/",
      "https://cdn.test/",
      "https://other.test/",
      "http://other.test:8080/",
    ]) {
      assertCancelled(rules, url, judge(url) === null ? [] : PAGE_TYPES, `both policies: ${judge(url) ?? "allowed"}`);
    }
  });

  it("let blocked rules win over allowed ones, a port allowed included", () => {
    const rules = taskNetRules({ taskDomains: policy({ allowed: ["shop.test", "pay.shop.test:443"], blocked: ["pay.shop.test"] }) }, [TAB], 1);
    assertCancelled(rules, "https://pay.shop.test/", EVERY_RESOURCE_TYPE, "blocked");
    assertCancelled(rules, "https://shop.test/", [], "allowed");
  });

  it("refuse every page when an allowed list holds no host, as domainRefusal does", () => {
    const rules = taskNetRules({ taskDomains: policy({ allowed: ["::bad::"] }) }, [TAB], 1);
    assert.notEqual(domainRefusal(policy({ allowed: ["::bad::"] }), "https://shop.test/"), null);
    assertCancelled(rules, "https://shop.test/", PAGE_TYPES, "no allowed host");
  });

  it("hold only the task's tabs, and nothing without a policy or a tab", () => {
    const rules = taskNetRules({ taskDomains: policy({ blocked: ["evil.test"] }) }, [3, 4], 1);
    for (const tabId of [3, 4]) assert.equal(outcome(rules, request("https://evil.test/", "image", tabId)), "blocked");
    assert.equal(outcome(rules, request("https://evil.test/", "image", 5)), "sent");
    assert.deepEqual(taskNetRules({}, [3], 1), []);
    assert.deepEqual(taskNetRules({ domains: policy({}), taskDomains: policy({}) }, [3], 1), []);
    assert.deepEqual(taskNetRules({ taskDomains: policy({ blocked: ["evil.test"] }) }, [], 1), []);
  });

  it("number the rules of all tasks one after the other, so no two share an id", () => {
    const busy = { rules: { domains: policy({ blocked: ["a.test", "b.test:81"] }), taskDomains: policy({ allowed: ["shop.test", "shop.test:8080"] }) }, tabIds: [1] };
    const rules = netRules([busy, { rules: {}, tabIds: [2] }, { ...busy, tabIds: [3, 4] }]);
    assert.deepEqual(
      rules.map((r) => r.id),
      rules.map((_, i) => i + 1),
    );
    assert.deepEqual(
      rules.map((r) => r.condition.tabIds),
      [...Array(rules.length / 2).fill([1]), ...Array(rules.length / 2).fill([3, 4])],
    );
  });

  it("guard the tasks still running, with their open tabs", () => {
    const record = (taskId: string, extra: Partial<TaskRecord>): TaskRecord => ({ taskId, tabId: 1, windowId: 1, startedAt: 0, overlay: "ongoing", ...extra });
    const blocked = policy({ blocked: ["evil.test"] });
    const guarded = guardedTasks([
      record("running", { tabId: 2, tabs: [1, 2], taskDomains: blocked }),
      record("ended", { ended: { at: 1 }, taskDomains: blocked }),
      record("closed", { tabClosed: true, taskDomains: blocked }),
    ]);
    assert.deepEqual(guarded, [{ rules: { domains: undefined, taskDomains: blocked }, tabIds: [1, 2] }]);
  });
});
