// browser_back: goes one entry back in the tab's history and waits for the page to load.
import { CdpFailure } from "../cdp.ts";
import { DEFAULT_LOAD_TIMEOUT_MS, tabComplete } from "../loading.ts";
import { ActionError, errorText } from "../results.ts";
import type { Handler } from "./handler.ts";

export const browserBack: Handler<"browser_back"> = {
  leavesPage: true,
  async run(ctx) {
    let loaded: Promise<chrome.tabs.Tab> | undefined;
    try {
      // Through CDP: chrome.tabs.goBack skips entries the page added without a user gesture.
      const history = await ctx.deps.cdp.send<{ currentIndex: number; entries: Array<{ id: number }> }>(ctx.tabId, "Page.getNavigationHistory");
      if (history.currentIndex <= 0) throw new ActionError("INVALID_TARGET", "there is no page to go back to");
      loaded = tabComplete(ctx.tabId, DEFAULT_LOAD_TIMEOUT_MS, true);
      await ctx.deps.cdp.send(ctx.tabId, "Page.navigateToHistoryEntry", { entryId: history.entries[history.currentIndex - 1]!.id });
    } catch (error) {
      if (!(error instanceof CdpFailure)) throw error;
      loaded = tabComplete(ctx.tabId, DEFAULT_LOAD_TIMEOUT_MS, true);
      try {
        await chrome.tabs.goBack(ctx.tabId);
      } catch (again) {
        loaded.catch(() => undefined);
        throw new ActionError("INVALID_TARGET", `cannot go back: ${errorText(again)}`);
      }
    }
    const warnings: string[] = [];
    const tab = await loaded.catch((error: unknown) => {
      warnings.push(errorText(error));
      return chrome.tabs.get(ctx.tabId);
    });
    return { result: { url: tab.url ?? "", title: tab.title ?? "" }, warnings };
  },
};
