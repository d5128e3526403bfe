// browser_click_at: a trusted CDP click at a point of the viewport, for controls the element
// list cannot name (drawn on a canvas, in SVG, on a map); says what is at that point, and refuses
// when that is outbound or irreversible and the step was not rated on it (`expect`).
import { clickMouse, ourInput } from "../input.ts";
import { pointInView } from "../point.ts";
import type { Handler } from "./handler.ts";

export const browserClickAt: Handler<"browser_click_at"> = {
  async run(ctx, p) {
    const { point, element } = await pointInView(ctx, { x: p.x, y: p.y }, p.expect, p.scale, "click");
    const cdp = ctx.deps.cdp;
    await ourInput(cdp, ctx.tabId, () => clickMouse(cdp, ctx.tabId, point));
    return { result: { clicked: true, x: point.x, y: point.y, element } };
  },
};
