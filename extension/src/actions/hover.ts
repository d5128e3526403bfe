// browser_hover: moves the CDP mouse over the element's visible centre (DOM mouse events as
// the fallback, marked partial).
import { CdpFailure } from "../cdp.ts";
import type { Prepared } from "../frame-protocol.ts";
import { frameCall } from "../frames.ts";
import { dispatchMouse, ourInput, route, toTop } from "../input.ts";
import type { Handler } from "./handler.ts";

export const browserHover: Handler<"browser_hover"> = {
  async run(ctx, p) {
    const { frameId, target } = await route(ctx, p);
    const prepared = await frameCall<Prepared>(ctx.tabId, frameId, { op: "prepare", target, purpose: "hover" });
    try {
      const point = await toTop(ctx.tabId, frameId, prepared.point);
      await ourInput(ctx.deps.cdp, ctx.tabId, () => dispatchMouse(ctx.deps.cdp, ctx.tabId, "mouseMoved", point));
      return { result: { hovered: true, strategy: "cdp_mouse" } };
    } catch (error) {
      if (!(error instanceof CdpFailure)) throw error;
      await frameCall(ctx.tabId, frameId, { op: "domHover", target });
      return { result: { hovered: true, strategy: "dom" }, partial: true, warnings: [`CDP input failed (${error.message}); hovered with DOM events instead`] };
    }
  },
};
