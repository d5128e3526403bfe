// browser_screenshot: captures the task's tab through CDP (which sees a tab that is not
// active), the whole page if asked, falling back to `captureVisibleTab`. It is a JPEG at most
// MAX_WIDTH pixels wide: what the model is shown with the page, a few hundred KB where a
// full-size PNG of a high-density screen is megabytes. The image goes to R2.
import { SCREENSHOT_MAX_BYTES } from "../../../protocol/ts/protocol.ts";
import type { ScreenshotResult } from "../../../protocol/ts/protocol.ts";
import { uploadArtifact } from "../artifacts.ts";
import type { UploadWait } from "../artifacts.ts";
import { CdpFailure } from "../cdp.ts";
import { maskForCapture } from "../evidence.ts";
import { frameCall } from "../frames.ts";
import { base64ToBytes, imageSize } from "../image.ts";
import { MARK_MS } from "../input.ts";
import { ActionError, errorText } from "../results.ts";
import type { ActionSuccess } from "../results.ts";
import { timeline } from "../timeline.ts";
import type { Handler, TabContext } from "./handler.ts";

/** The widest screenshot, in image pixels: a wider one (a wide window, a high pixel ratio) is scaled down to it. */
const MAX_WIDTH = 1280;
const JPEG_QUALITY = 70;
/** How long a capture may take: one of a tab Chrome does not draw (hidden) never ends. */
const CAPTURE_MS = 10_000;

type Rect = { x: number; y: number; width: number; height: number };
type LayoutMetrics = {
  cssContentSize: { width: number; height: number };
  cssVisualViewport: { pageX: number; pageY: number; clientWidth: number; clientHeight: number };
};

export const browserScreenshot: Handler<"browser_screenshot"> = {
  run: (ctx, params) => screenshot(ctx, params.fullPage === true, "stored"),
};

/**
 * The tab's screenshot, stored in R2; the result comes when the upload is `wait`ed for.
 * `capturing` is called once the image is asked for, its fields masked (or no capture could
 * be), while it is still to be read back, encoded and stored.
 */
export async function screenshot(ctx: TabContext, fullPage: boolean, wait: UploadWait, capturing?: () => void): Promise<ActionSuccess> {
  const warnings: string[] = [];
  let bytes: Uint8Array;
  let partial = false;
  /** The CSS width of what was captured (the viewport, or the whole page): the image's scale. */
  let cssWidth: number | undefined;
  const stages = timeline(ctx.action);
  // The overlay is not in the picture.
  await frameCall(ctx.tabId, 0, { op: "mark", untilMs: MARK_MS, hide: true }).catch(() => undefined);
  // Fields holding secrets or personal data are covered for the capture (evidence.ts).
  const unmask = await stages.part("shot.mask", () => maskForCapture(ctx.tabId, ctx.task.taskId));
  try {
    const capture = async (clip?: Rect & { scale: number }): Promise<Uint8Array> => {
      const shot = await ctx.deps.cdp.send<{ data: string }>(ctx.tabId, "Page.captureScreenshot", {
        format: "jpeg",
        quality: JPEG_QUALITY,
        ...(fullPage ? { captureBeyondViewport: true } : {}),
        ...(clip ? { clip } : {}),
      }, CAPTURE_MS);
      return base64ToBytes(shot.data);
    };
    const captured = performance.now();
    const metrics = await ctx.deps.cdp.send<LayoutMetrics>(ctx.tabId, "Page.getLayoutMetrics");
    const viewport = metrics.cssVisualViewport;
    // In CSS pixels of the document, as CDP's clip takes them.
    const area: Rect = fullPage
      ? { x: 0, y: 0, width: metrics.cssContentSize.width, height: metrics.cssContentSize.height }
      : { x: viewport.pageX, y: viewport.pageY, width: viewport.clientWidth, height: viewport.clientHeight };
    cssWidth = area.width;
    const first = capture(fullPage ? { ...area, scale: 1 } : undefined);
    capturing?.();
    bytes = await first;
    // The image is the area times the screen's pixel ratio, which only the first capture
    // tells; a wider one is taken again, scaled down to MAX_WIDTH.
    const width = imageSize(bytes)?.width ?? 0;
    if (width > MAX_WIDTH) bytes = await capture({ ...area, scale: MAX_WIDTH / width });
    stages.note("shot.capture", performance.now() - captured);
  } catch (error) {
    if (!(error instanceof CdpFailure)) throw error;
    // captureVisibleTab sees only the active tab of a window: never another tab than the
    // task's (one of the person's own, say) in its place.
    const shown = (await chrome.tabs.get(ctx.tabId).catch(() => null))?.active === true;
    if (!shown) throw new ActionError("PAGE_PREP_FAILED", `no screenshot: ${error.message}; tab ${ctx.tabId} is not the one its window shows (switch_tab ${ctx.tabId} shows it)`, true);
    try {
      const url = await chrome.tabs.captureVisibleTab(ctx.tab.windowId, { format: "jpeg", quality: JPEG_QUALITY });
      bytes = base64ToBytes(url.slice(url.indexOf(",") + 1));
    } catch (again) {
      throw new ActionError("PAGE_PREP_FAILED", `no screenshot: ${error.message}; captureVisibleTab: ${errorText(again)}`, true);
    }
    partial = true;
    warnings.push(`CDP screenshot failed (${error.message}); captured the visible tab instead, at full size${fullPage ? " (the viewport only)" : ""}`);
  } finally {
    await unmask();
    void frameCall(ctx.tabId, 0, { op: "mark", untilMs: 0 }).catch(() => undefined);
    capturing?.();
  }
  if (bytes.byteLength > SCREENSHOT_MAX_BYTES) throw new ActionError("PAGE_PREP_FAILED", `the screenshot is ${bytes.byteLength} bytes, over the limit`, false);
  const size = imageSize(bytes) ?? { width: 0, height: 0 };
  const uploaded = await stages.part("shot.upload", async () =>
    uploadArtifact(await ctx.deps.server(), { taskId: ctx.task.taskId, kind: "screenshot", contentType: "image/jpeg", actionId: ctx.action.actionId }, bytes, wait),
  );
  const result: ScreenshotResult = { artifactId: uploaded.artifactId, url: uploaded.url, width: size.width, height: size.height };
  // Image pixels per CSS pixel: what maps a point the model reads off the image to the page.
  if (cssWidth !== undefined && cssWidth > 0 && size.width > 0) result.scale = size.width / cssWidth;
  return { result, warnings, partial };
}
