// browser_reload: the task's page loaded again from its address, then the load awaited. The
// answer to a form is refused: reloading it could send the form again (an order placed twice),
// and opening its address (a GET) is the safe way to load it again. Where CDP cannot read the
// tab's history (turned off in the settings), Chrome's own reload still asks the person before
// it sends a form again.
import { CdpFailure } from "../cdp.ts";
import { DEFAULT_LOAD_TIMEOUT_MS, landedOn, tabComplete } from "../loading.ts";
import { ActionError, errorText } from "../results.ts";
import type { Handler, TabContext } from "./handler.ts";

type History = { currentIndex: number; entries: Array<{ transitionType: string }> };

async function answersAForm(ctx: TabContext): Promise<boolean> {
  try {
    const history = await ctx.deps.cdp.send<History>(ctx.tabId, "Page.getNavigationHistory");
    return history.entries[history.currentIndex]?.transitionType === "form_submit";
  } catch (error) {
    if (error instanceof CdpFailure) return false;
    throw error;
  }
}

export const browserReload: Handler<"browser_reload"> = {
  leavesPage: true,
  run: async (ctx) => {
    if (await answersAForm(ctx)) {
      throw new ActionError("INVALID_TARGET", "this page is the answer to a form: reloading it could send the form again; navigate to its address instead");
    }
    const loaded = tabComplete(ctx.tabId, DEFAULT_LOAD_TIMEOUT_MS, true);
    try {
      await chrome.tabs.reload(ctx.tabId);
    } catch (error) {
      loaded.catch(() => undefined);
      throw new ActionError("INVALID_TARGET", `cannot reload the page: ${errorText(error)}`);
    }
    return landedOn(ctx.tabId, loaded);
  },
};
