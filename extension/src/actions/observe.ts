// browser_observe: the page as the model is shown it after each step, in one round trip. It
// waits for the page to load (a page that does not is captured as it is, saying so), then takes
// the element list, and the screenshot and the readable text at once — each part by its own
// action's handler, each succeeding or failing on its own (a capture that failed in a way that
// may pass is tried once more). Together they fit one message: the element list is fitted to
// what the others leave, and readable text that would not fit stays in its artifact. A reader
// that takes neither capture from R2 at once (`waitStored: false`) has the result as soon as
// each has its artifact id, its bytes stored right after.
import type { DomIndexResult, ObserveResult, ObservedPart, ReadabilityResult, ScreenshotResult } from "../../../protocol/ts/protocol.ts";
import { DEFAULT_CLICK_ATTR } from "../frame-protocol.ts";
import { tabGone } from "../frames.ts";
import { fitReadable } from "../observation.ts";
import { ActionError, errorObject, errorText, MAX_RESULT_BYTES } from "../results.ts";
import { timeline } from "../timeline.ts";
import type { ActionSuccess } from "../results.ts";
import { indexPage } from "./dom-index.ts";
import type { Handler } from "./handler.ts";
import { readableText } from "./readability-extract.ts";
import { screenshot as takeScreenshot } from "./screenshot.ts";
import { browserWaitForLoaded } from "./wait-for-loaded.ts";

/** Room kept for the screenshot's part and the readable text's envelope beside the element list. */
const BESIDE_INDEX_BYTES = 16 * 1024;

/** One part: its handler's success, or why it failed (tried twice when a retry may cure it). */
async function part<T>(capture: () => Promise<ActionSuccess>, again: boolean): Promise<ObservedPart<T>> {
  try {
    const success = await capture().catch((error: unknown) => {
      if (again && error instanceof ActionError && error.retryable) return capture();
      throw error;
    });
    return { result: success.result as T, partial: success.partial === true, warnings: success.warnings ?? [] };
  } catch (error) {
    return { error: errorObject(error), partial: false, warnings: [] };
  }
}

export const browserObserve: Handler<"browser_observe"> = {
  async run(ctx, params) {
    const loaded = await browserWaitForLoaded.run(ctx, params.timeoutMs === undefined ? {} : { timeoutMs: params.timeoutMs }).then(
      () => undefined,
      (error: unknown) => {
        // A tab that closed has nothing to observe; a page still loading is captured as it is.
        if (error instanceof ActionError && error.code === "TASK_TAB_CLOSED") throw error;
        return errorText(error);
      },
    );
    const stages = timeline(ctx.action);
    stages.mark("load");
    const wait = params.waitStored === false ? "granted" : "stored";
    // Each part keeps the page's own thread busy for a while: the element list first (the
    // shortest), then the capture (masking fields, drawing a frame), and the readable text (the
    // longest) once that frame is drawn — the image is read back, encoded and stored meanwhile,
    // off that thread.
    const domIndex = await stages.part("act.index", () => part<DomIndexResult>(() => indexPage(ctx, { scope: "viewport", attr: DEFAULT_CLICK_ATTR, xpathScan: false, budget: MAX_RESULT_BYTES - BESIDE_INDEX_BYTES }), false));
    let capturing!: () => void;
    const asked = new Promise<void>((resolve) => (capturing = resolve));
    const shooting = stages.part("act.screenshot", () => part<ScreenshotResult>(() => takeScreenshot(ctx, false, wait, capturing), true));
    await Promise.race([asked, shooting]);
    const [screenshot, readability] = await Promise.all([shooting, stages.part("act.readability", () => part<ReadabilityResult>(() => readableText(ctx, wait, true), true))]);
    // A tab that closed while it was looked at has nothing to show either: the executor looks
    // again where the task goes on.
    const closed = [screenshot, readability, domIndex].some((p) => p.error?.code === "TASK_TAB_CLOSED");
    if (closed && (await tabGone(ctx.tabId))) throw new ActionError("TASK_TAB_CLOSED", "the task's tab was closed while it was observed", false);
    const result: ObserveResult = { screenshot, readability, domIndex };
    if (loaded !== undefined) result.notLoaded = loaded;
    fitReadable(result);
    return { result };
  },
};
