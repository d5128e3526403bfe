// browser_scroll_to: brings a text into view, in the page or the scroll container that holds
// it (find-in-page). A page that loads more as it is scrolled (a feed) is scrolled to its end
// and searched again while it grows, up to a bound.
import type { FoundText } from "../content/find.ts";
import type { FeedScroll } from "../frame-protocol.ts";
import { frameCall } from "../frames.ts";
import { sleep } from "../loading.ts";
import { ActionError } from "../results.ts";
import type { Handler } from "./handler.ts";

/** How many times a feed is asked for more before giving up. */
const MAX_LOADS = 20;
/**
 * How long a feed gets to load more after it was scrolled to its end: it loads over the
 * network, and a busy machine or a slow site takes its time. Looked at every `LOOK_MS`, so a
 * feed that grows at once costs no more than that.
 */
const LOAD_WAIT_MS = 1_500;
const LOOK_MS = 100;
/**
 * How long a feed may take to start loading before it is scrolled two screens back and to its
 * end again, as a person does when nothing comes: a feed whose end stayed near the view after
 * its last load is not told that it was scrolled to again.
 */
const NUDGE_AFTER_MS = 400;

export const browserScrollTo: Handler<"browser_scroll_to"> = {
  async run(ctx, p) {
    if (p.text.trim() === "") throw new ActionError("SCHEMA_VALIDATION_FAILED", "scroll_to needs a text to find");
    const look = (scroll: FeedScroll) => frameCall<FoundText>(ctx.tabId, 0, { op: "findText", text: p.text, scroll });
    const done = (found: Extract<FoundText, { found: true }>, loads: number) => {
      const { found: _found, ...result } = found;
      const warnings = loads > 0 ? [`the page loaded more ${loads} time${loads === 1 ? "" : "s"} before the text appeared`] : [];
      if (found.matches > 1) warnings.push(`${found.matches} places show this text; this is the first`);
      return { result: { ...result, loads }, warnings };
    };
    for (let loads = 0; ; loads++) {
      const found = await look(loads < MAX_LOADS ? "end" : "stay");
      if (found.found) return done(found, loads);
      const notThere = (scrolled: number) => new ActionError("TARGET_NOT_FOUND", `no ${JSON.stringify(p.text)} on the page${scrolled > 0 ? `, after scrolling to its end ${scrolled} times` : ""}`, false);
      if (loads >= MAX_LOADS) throw notThere(loads);
      // Scrolled to its end: wait for the page to grow (or the text to appear) before looking
      // again; nothing more within the wait, the text is not on this page.
      let grew = false;
      const start = Date.now();
      for (let nudged = false; !grew && Date.now() < start + LOAD_WAIT_MS; ) {
        await sleep(LOOK_MS);
        let scroll: FeedScroll = "stay";
        if (!nudged && Date.now() >= start + NUDGE_AFTER_MS) {
          const back = await look("back");
          if (back.found) return done(back, loads + 1);
          // A frame drawn with the end away, so the feed's observer sees it come back.
          await sleep(LOOK_MS);
          [nudged, scroll] = [true, "end"];
        }
        const again = await look(scroll);
        if (again.found) return done(again, loads + 1);
        grew = again.height !== found.height;
      }
      if (!grew) throw notThere(loads + 1);
    }
  },
};
