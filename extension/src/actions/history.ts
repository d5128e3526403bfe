// browser_back and browser_forward: one entry back or forward in the tab's history, then the
// page's load awaited. Chrome does not send a form again this way: an entry that was the answer
// to a form's POST, and is not in its cache, shows its "Confirm Form Resubmission" page instead.
import { CdpFailure } from "../cdp.ts";
import { DEFAULT_LOAD_TIMEOUT_MS, landedOn, tabComplete } from "../loading.ts";
import { ActionError, errorText } from "../results.ts";
import type { Handler, TabContext } from "./handler.ts";

type Direction = { step: -1 | 1; way: "back" | "forward"; chrome: (tabId: number) => Promise<void> };

const BACK: Direction = { step: -1, way: "back", chrome: (tabId) => chrome.tabs.goBack(tabId) };
const FORWARD: Direction = { step: 1, way: "forward", chrome: (tabId) => chrome.tabs.goForward(tabId) };

async function go(ctx: TabContext, direction: Direction) {
  let loaded: Promise<chrome.tabs.Tab> | undefined;
  try {
    // Through CDP: chrome.tabs.goBack/goForward skip entries the page added without a user gesture.
    const history = await ctx.deps.cdp.send<{ currentIndex: number; entries: Array<{ id: number }> }>(ctx.tabId, "Page.getNavigationHistory");
    const entry = history.entries[history.currentIndex + direction.step];
    if (entry === undefined) throw new ActionError("INVALID_TARGET", `there is no page to go ${direction.way} to`);
    loaded = tabComplete(ctx.tabId, DEFAULT_LOAD_TIMEOUT_MS, true);
    await ctx.deps.cdp.send(ctx.tabId, "Page.navigateToHistoryEntry", { entryId: entry.id });
  } catch (error) {
    if (!(error instanceof CdpFailure)) throw error;
    loaded = tabComplete(ctx.tabId, DEFAULT_LOAD_TIMEOUT_MS, true);
    try {
      await direction.chrome(ctx.tabId);
    } catch (again) {
      loaded.catch(() => undefined);
      throw new ActionError("INVALID_TARGET", `cannot go ${direction.way}: ${errorText(again)}`);
    }
  }
  return landedOn(ctx.tabId, loaded);
}

export const browserBack: Handler<"browser_back"> = { leavesPage: true, run: (ctx) => go(ctx, BACK) };
export const browserForward: Handler<"browser_forward"> = { leavesPage: true, run: (ctx) => go(ctx, FORWARD) };
