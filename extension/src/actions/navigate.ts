// browser_navigate: opens a URL in the task's tab — one Mimo may act on, checked before it
// goes — and waits for it to load (still loading at the timeout is a warning).
import { checkDomains, checkUrl } from "../guard.ts";
import { DEFAULT_LOAD_TIMEOUT_MS, navigateTab } from "../loading.ts";
import { ActionError } from "../results.ts";
import { requireSite } from "../site-access.ts";
import type { Handler } from "./handler.ts";

export const browserNavigate: Handler<"browser_navigate"> = {
  leavesPage: true,
  async run(ctx, { url }) {
    if (typeof url !== "string" || url === "") throw new ActionError("SCHEMA_VALIDATION_FAILED", "browser_navigate needs a url");
    checkUrl(url, (await ctx.deps.server()).serverUrl);
    checkDomains(ctx.task, url);
    await requireSite(url);
    const warnings: string[] = [];
    const tab = (await navigateTab(ctx.tabId, url, DEFAULT_LOAD_TIMEOUT_MS, warnings)) ?? (await chrome.tabs.get(ctx.tabId));
    return { result: { url: tab.url ?? url, title: tab.title ?? "", status: tab.status ?? "loading" }, warnings };
  },
};
