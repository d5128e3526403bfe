// browser_hover_at: moves the CDP mouse to a point of the viewport; says what is there.
import { dispatchMouse, ourInput } from "../input.ts";
import { pointInView } from "../point.ts";
import type { Handler } from "./handler.ts";

export const browserHoverAt: Handler<"browser_hover_at"> = {
  async run(ctx, p) {
    const { point, element } = await pointInView(ctx, { x: p.x, y: p.y }, undefined, p.scale);
    await ourInput(ctx.deps.cdp, ctx.tabId, () => dispatchMouse(ctx.deps.cdp, ctx.tabId, "mouseMoved", point));
    return { result: { hovered: true, x: point.x, y: point.y, element } };
  },
};
