// browser_click: a trusted CDP click at the element's visible centre (after the content script
// scrolled it into view and hit-tested it), or DOM events — asked for, or as the fallback when
// CDP fails, marked partial. A click that is to leave a checkbox ticked or not (`checked`) is
// made only when it is not so already.
import { CdpFailure } from "../cdp.ts";
import type { Prepared } from "../frame-protocol.ts";
import { frameCall } from "../frames.ts";
import { clickMouse, ourInput, route, toTop } from "../input.ts";
import { ActionError } from "../results.ts";
import { timeline } from "../timeline.ts";
import type { Handler } from "./handler.ts";

export const browserClick: Handler<"browser_click"> = {
  async run(ctx, p) {
    const { frameId, target } = await route(ctx, p);
    const prepare = () => frameCall<Prepared>(ctx.tabId, frameId, { op: "prepare", target, purpose: "click" });
    // Read just before acting: a box the page ticked meanwhile is not unticked by the click.
    const first = p.checked !== undefined ? await prepare() : undefined;
    if (first !== undefined) {
      const { checked } = first;
      const state = p.checked ? "ticked" : "unticked";
      if (checked === undefined) throw new ActionError("TARGET_NOT_INTERACTABLE", `the element is not a checkbox, radio button or switch: it cannot be left ${state}`, false);
      if (checked === p.checked) return { result: { clicked: false, checked }, nothingToDo: true };
    }
    if (p.strategy === "dom_click") {
      await frameCall(ctx.tabId, frameId, { op: "domClick", target });
      return { result: { clicked: true, strategy: "dom_click" } };
    }
    const prepared = first ?? (await prepare());
    const cdp = ctx.deps.cdp;
    try {
      const point = await toTop(ctx.tabId, frameId, prepared.point);
      timeline(ctx.action).mark("prepare");
      await ourInput(cdp, ctx.tabId, () => clickMouse(cdp, ctx.tabId, point));
      return { result: { clicked: true, strategy: "cdp_mouse" } };
    } catch (error) {
      if (!(error instanceof CdpFailure)) throw error;
      if (p.strategy === "cdp_mouse") throw error;
      await frameCall(ctx.tabId, frameId, { op: "domClick", target });
      return {
        result: { clicked: true, strategy: "dom_click" },
        partial: true,
        warnings: [`CDP input failed (${error.message}); clicked with DOM events instead, which the page sees as untrusted`],
      };
    }
  },
};
