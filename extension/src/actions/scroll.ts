// browser_scroll: scrolls the page, or the targeted scrollable element, by an amount or a
// viewport; says so when there was nothing left to scroll.
import type { FrameTarget } from "../frame-protocol.ts";
import { frameCall } from "../frames.ts";
import { route } from "../input.ts";
import { ActionError } from "../results.ts";
import { targetWays } from "../targets.ts";
import type { Handler } from "./handler.ts";

export const browserScroll: Handler<"browser_scroll"> = {
  async run(ctx, p) {
    if (!["up", "down", "left", "right"].includes(p.direction)) throw new ActionError("SCHEMA_VALIDATION_FAILED", "direction must be up, down, left or right");
    let frameId = 0;
    let target: FrameTarget | undefined;
    // No target scrolls the page.
    if (targetWays(p).length > 0) ({ frameId, target } = await route(ctx, p));
    const result = await frameCall<{ scrolledX: number; scrolledY: number }>(ctx.tabId, frameId, {
      op: "scroll",
      direction: p.direction,
      ...(target !== undefined ? { target } : {}),
      ...(p.amount !== undefined ? { amount: p.amount } : {}),
    });
    const warnings = result.scrolledX === 0 && result.scrolledY === 0 ? [`nothing scrolled: already at the ${p.direction === "up" ? "top" : p.direction === "down" ? "bottom" : "edge"}`] : [];
    return { result, warnings };
  },
};
