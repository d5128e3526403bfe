// Points of the task tab's viewport, for the actions that act where the element list has
// nothing to name (a canvas, SVG, a map): checked to be in view, and told what is there.
import type { ElementFacts } from "../../protocol/ts/protocol.ts";
import type { TabContext } from "./actions/handler.ts";
import type { Point, StepPurpose } from "./frame-protocol.ts";
import { frameCall } from "./frames.ts";
import { ActionError } from "./results.ts";

/**
 * What the top frame shows at `point`, refusing a point outside the viewport — and, with
 * `expect`, an outbound or irreversible element there the step was not rated on (`TARGET_CHANGED`).
 * With `scale`, the point is in pixels of a screenshot taken at that scale (image pixels per CSS
 * pixel: the device pixel ratio, the width cap, the zoom), as a model reads it off the image;
 * the point returned is in CSS pixels of the viewport. With `purpose`, the step acts on what is
 * there (what it is expected to change follows from it: content/expectations.ts).
 */
export async function pointInView(ctx: TabContext, given: Point, expect?: ElementFacts, scale?: number, purpose?: StepPurpose): Promise<{ point: Point; element: string }> {
  if (!Number.isFinite(given.x) || !Number.isFinite(given.y)) throw new ActionError("SCHEMA_VALIDATION_FAILED", "x and y must be numbers");
  if (scale !== undefined && !(Number.isFinite(scale) && scale > 0)) throw new ActionError("SCHEMA_VALIDATION_FAILED", "scale must be a positive number");
  const point = scale === undefined ? given : { x: given.x / scale, y: given.y / scale };
  const at = await frameCall<{ inView: boolean; element?: string; viewport: { w: number; h: number } }>(ctx.tabId, 0, { op: "elementAt", point: { x: point.x, y: point.y }, expect, ...(purpose !== undefined ? { purpose } : {}) });
  if (!at.inView) {
    throw new ActionError("INVALID_TARGET", `(${point.x}, ${point.y}) is outside the viewport of ${at.viewport.w}x${at.viewport.h} CSS pixels: scroll first`, false);
  }
  return { point, element: at.element ?? "nothing" };
}
