// browser_read_tab: the readable text of one of the person's own tabs ("summarise my open
// tabs", "compare the two products I have open"). Read only, on a site the person allowed,
// never Mimo's own pages nor the browser's; nothing in the tab is touched.
import { checkUrl } from "../guard.ts";
import { ActionError } from "../results.ts";
import { requireSite } from "../site-access.ts";
import type { Handler } from "./handler.ts";
import { readPage } from "./readability-extract.ts";

/** The most text of a tab that goes back to the model. */
const MAX_TEXT_CHARS = 20_000;

export const browserReadTab: Handler<"browser_read_tab"> = {
  async run({ deps }, p) {
    const tab = await chrome.tabs.get(p.tabId).catch(() => null);
    if (tab === null) throw new ActionError("TARGET_NOT_FOUND", `no tab ${p.tabId} is open`, false);
    const url = tab.url || tab.pendingUrl || "";
    if (url === "" || url === "about:blank") throw new ActionError("TARGET_NOT_FOUND", `tab ${p.tabId} shows no page`, false);
    checkUrl(url, (await deps.server()).serverUrl);
    await requireSite(url);
    const page = await readPage(p.tabId);
    const truncated = page.text.length > MAX_TEXT_CHARS;
    const text = truncated ? `${page.text.slice(0, MAX_TEXT_CHARS)}…` : page.text;
    return { result: { tabId: p.tabId, url, title: page.title || tab.title || "", text, truncated }, warnings: truncated ? [`only the first ${MAX_TEXT_CHARS} characters of the tab's text`] : [] };
  },
};
