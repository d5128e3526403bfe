// browser_drag: drags with trusted CDP input from an element or point to another. The mouse is
// pressed, moved in steps and released — what pointer-based dragging (sortable lists, sliders,
// canvases) listens to. An HTML5 drag (`draggable`) is one Chrome would hand to the operating
// system: with CDP's drag interception on, Chrome gives us its data instead
// (`Input.dragIntercepted`) and the drop is dispatched where it ends (`Input.dispatchDragEvent`).
import type { DragEnd, ElementFacts } from "../../../protocol/ts/protocol.ts";
import type { Point, Prepared } from "../frame-protocol.ts";
import { frameCall } from "../frames.ts";
import { dispatchMouse, ourInput, route, toTop } from "../input.ts";
import { sleep } from "../loading.ts";
import { pointInView } from "../point.ts";
import { ActionError } from "../results.ts";
import type { Handler, TabContext } from "./handler.ts";

/** Mouse moves between the two ends: enough for libraries that wait for a few pixels of motion. */
const STEPS = 12;
/** How long the page gets to start an HTML5 drag after the first moves. */
const DRAG_START_MS = 100;

/** Where an end of the drag is; a point is checked as `browser_click_at` checks it (`expect`). */
async function endPoint(ctx: TabContext, end: DragEnd, which: "start" | "end", expect: ElementFacts | undefined, scale: number | undefined): Promise<{ point: Point; element: string }> {
  const purpose = which === "start" ? "dragFrom" : "dragTo";
  if (end.clickId !== undefined) {
    const { frameId, target } = await route(ctx, { clickId: end.clickId });
    const prepared = await frameCall<Prepared>(ctx.tabId, frameId, { op: "prepare", target, purpose });
    return { point: await toTop(ctx.tabId, frameId, prepared.point), element: `element ${end.clickId}` };
  }
  if (end.x === undefined || end.y === undefined) throw new ActionError("INVALID_TARGET", `the drag's ${which} needs a clickId, or x and y`, false);
  return pointInView(ctx, { x: end.x, y: end.y }, expect, scale, purpose);
}

export const browserDrag: Handler<"browser_drag"> = {
  async run(ctx, p) {
    const start = await endPoint(ctx, p.from, "start", p.expect, p.scale);
    const end = await endPoint(ctx, p.to, "end", p.expect, p.scale);
    const [from, to] = [start.point, end.point];
    const cdp = ctx.deps.cdp;
    const tab = ctx.tabId;
    const at = (t: number): Point => ({ x: from.x + (to.x - from.x) * t, y: from.y + (to.y - from.y) * t });
    let html5 = false;
    await ourInput(cdp, tab, async () => {
      await cdp.send(tab, "Input.setInterceptDrags", { enabled: true });
      const intercepted = cdp.nextEvent<{ data: unknown }>(tab, "Input.dragIntercepted");
      try {
        await dispatchMouse(cdp, tab, "mouseMoved", from);
        await dispatchMouse(cdp, tab, "mousePressed", from, { button: "left", buttons: 1, clickCount: 1 });
        for (let i = 1; i <= 2; i++) await dispatchMouse(cdp, tab, "mouseMoved", at(i / STEPS), { button: "left", buttons: 1 });
        const drag = await Promise.race([intercepted.event, sleep(DRAG_START_MS).then(() => undefined)]);
        if (drag !== undefined) {
          html5 = true;
          for (const type of ["dragEnter", "dragOver", "drop"]) await cdp.send(tab, "Input.dispatchDragEvent", { type, x: to.x, y: to.y, data: drag.data });
        } else {
          for (let i = 3; i <= STEPS; i++) await dispatchMouse(cdp, tab, "mouseMoved", at(i / STEPS), { button: "left", buttons: 1 });
        }
        await dispatchMouse(cdp, tab, "mouseReleased", to, { button: "left", buttons: 0, clickCount: 1 });
      } finally {
        intercepted.cancel();
        await cdp.send(tab, "Input.setInterceptDrags", { enabled: false }).catch(() => undefined);
      }
    });
    return { result: { dragged: true, from, to, fromElement: start.element, toElement: end.element, kind: html5 ? "html5" : "pointer" } };
  },
};
