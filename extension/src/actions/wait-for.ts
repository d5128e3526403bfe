// browser_wait_for: waits until the page shows a text, reaches a URL (substring) or has an
// element matching a CSS selector, or its timeout passes.
import { frameCall } from "../frames.ts";
import { POLL_MS, sleep } from "../loading.ts";
import { ActionError } from "../results.ts";
import type { Handler } from "./handler.ts";

const DEFAULT_WAIT_TIMEOUT_MS = 10_000;

export const browserWaitFor: Handler<"browser_wait_for"> = {
  async run(ctx, p) {
    if (p.text === undefined && p.url === undefined && p.selector === undefined) {
      throw new ActionError("SCHEMA_VALIDATION_FAILED", "browser_wait_for needs text, url or selector");
    }
    const timeoutMs = p.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
    const started = ctx.deps.now();
    for (;;) {
      const tab = await chrome.tabs.get(ctx.tabId).catch(() => null);
      if (tab === null) throw new ActionError("TASK_TAB_CLOSED", "the task's tab was closed", false);
      let matched: string | undefined;
      if (p.url !== undefined && (tab.url ?? "").includes(p.url)) matched = "url";
      if (matched === undefined && (p.text !== undefined || p.selector !== undefined)) {
        const probe = await frameCall<{ text?: boolean; selector?: boolean }>(ctx.tabId, 0, {
          op: "probe",
          ...(p.text !== undefined ? { text: p.text } : {}),
          ...(p.selector !== undefined ? { selector: p.selector } : {}),
        }).catch((error: unknown) => {
          if (error instanceof ActionError && (error.code === "INVALID_TARGET" || error.code === "TASK_TAB_CLOSED")) throw error;
          return {} as { text?: boolean; selector?: boolean };
        });
        if (probe.text === true) matched = "text";
        else if (probe.selector === true) matched = "selector";
      }
      const elapsedMs = ctx.deps.now() - started;
      if (matched !== undefined) return { result: { matched, elapsedMs, url: tab.url ?? "" } };
      if (elapsedMs >= timeoutMs) {
        const what = [p.text !== undefined ? `text ${JSON.stringify(p.text)}` : "", p.url !== undefined ? `url containing ${JSON.stringify(p.url)}` : "", p.selector !== undefined ? `selector ${JSON.stringify(p.selector)}` : ""].filter((s) => s !== "").join(" or ");
        throw new ActionError("TIMEOUT", `no ${what} within ${timeoutMs} ms`, false);
      }
      await sleep(POLL_MS * 2);
    }
  },
};
