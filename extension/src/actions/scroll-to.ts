// browser_scroll_to: brings a text into view, in the page or the scroll container that holds
// it (find-in-page). A page that loads more as it is scrolled (a feed) is scrolled to its end
// and searched again while it grows, up to a bound.
import type { FoundText } from "../content/find.ts";
import { frameCall } from "../frames.ts";
import { sleep } from "../loading.ts";
import { ActionError } from "../results.ts";
import type { Handler } from "./handler.ts";

/** How many times a feed is asked for more before giving up. */
const MAX_LOADS = 20;
/** How long a feed gets to load more after it was scrolled to its end. */
const LOAD_WAIT_MS = 400;

export const browserScrollTo: Handler<"browser_scroll_to"> = {
  async run(ctx, p) {
    if (p.text.trim() === "") throw new ActionError("SCHEMA_VALIDATION_FAILED", "scroll_to needs a text to find");
    let height = -1;
    for (let loads = 0; ; loads++) {
      const found = await frameCall<FoundText>(ctx.tabId, 0, { op: "findText", text: p.text, loadMore: loads < MAX_LOADS });
      if (found.found) {
        const { found: _found, ...result } = found;
        const warnings = loads > 0 ? [`the page loaded more ${loads} time${loads === 1 ? "" : "s"} before the text appeared`] : [];
        if (found.matches > 1) warnings.push(`${found.matches} places show this text; this is the first`);
        return { result: { ...result, loads }, warnings };
      }
      // Nothing more loaded since the last look: the text is not on this page.
      if (loads >= MAX_LOADS || found.height === height) {
        throw new ActionError("TARGET_NOT_FOUND", `no ${JSON.stringify(p.text)} on the page${loads > 0 ? `, after scrolling to its end ${loads} times` : ""}`, false);
      }
      height = found.height;
      await sleep(LOAD_WAIT_MS);
    }
  },
};
