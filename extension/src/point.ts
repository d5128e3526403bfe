// Points of the task tab's viewport, for the actions that act where the element list has
// nothing to name (a canvas, SVG, a map): checked to be in view, and told what is there.
import type { ElementFacts } from "../../protocol/ts/protocol.ts";
import type { TabContext } from "./actions/handler.ts";
import type { Point } from "./frame-protocol.ts";
import { frameCall } from "./frames.ts";
import { ActionError } from "./results.ts";

/**
 * What the top frame shows at `point`, refusing a point outside the viewport — and, with
 * `expect`, an outbound or irreversible element there the step was not rated on (`TARGET_CHANGED`).
 */
export async function pointInView(ctx: TabContext, point: Point, expect?: ElementFacts): Promise<{ point: Point; element: string }> {
  if (!Number.isFinite(point.x) || !Number.isFinite(point.y)) throw new ActionError("SCHEMA_VALIDATION_FAILED", "x and y must be numbers");
  const at = await frameCall<{ inView: boolean; element?: string; viewport: { w: number; h: number } }>(ctx.tabId, 0, { op: "elementAt", point: { x: point.x, y: point.y }, expect });
  if (!at.inView) {
    throw new ActionError("INVALID_TARGET", `(${point.x}, ${point.y}) is outside the viewport of ${at.viewport.w}x${at.viewport.h} CSS pixels: scroll first`, false);
  }
  return { point, element: at.element ?? "nothing" };
}
