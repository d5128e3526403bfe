// browser_wait_for_loaded: waits until the tab has loaded and its top document is complete.
import { frameCall } from "../frames.ts";
import { DEFAULT_LOAD_TIMEOUT_MS, POLL_MS, sleep } from "../loading.ts";
import { ActionError } from "../results.ts";
import type { Handler } from "./handler.ts";

export const browserWaitForLoaded: Handler<"browser_wait_for_loaded"> = {
  async run(ctx, params) {
    const timeoutMs = params.timeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS;
    const deadline = ctx.deps.now() + timeoutMs;
    for (;;) {
      const tab = await chrome.tabs.get(ctx.tabId).catch(() => null);
      if (tab === null) throw new ActionError("TASK_TAB_CLOSED", "the task's tab was closed", false);
      if (tab.status === "complete") {
        const state = await frameCall<string>(ctx.tabId, 0, { op: "readyState" }).catch(() => "unknown");
        if (state === "complete") return { result: { status: "complete", url: tab.url ?? "", title: tab.title ?? "" } };
      }
      if (ctx.deps.now() >= deadline) throw new ActionError("TIMEOUT", `the page did not finish loading within ${timeoutMs} ms`, true);
      await sleep(POLL_MS);
    }
  },
};
