// browser_screenshot: captures the task's tab through CDP (which sees a tab that is not
// active), the whole page if asked, falling back to `captureVisibleTab`; a PNG over the limit
// is sent as a JPEG. The image goes to R2.
import { SCREENSHOT_MAX_BYTES } from "../../../protocol/ts/protocol.ts";
import type { ScreenshotResult } from "../../../protocol/ts/protocol.ts";
import { uploadArtifact } from "../artifacts.ts";
import { CdpFailure } from "../cdp.ts";
import { frameCall } from "../frames.ts";
import { base64ToBytes, imageSize } from "../image.ts";
import { MARK_MS } from "../input.ts";
import { ActionError, errorText } from "../results.ts";
import type { Handler } from "./handler.ts";

export const browserScreenshot: Handler<"browser_screenshot"> = {
  async run(ctx, params) {
    const fullPage = params.fullPage === true;
    const warnings: string[] = [];
    let bytes: Uint8Array;
    let partial = false;
    let contentType = "image/png";
    await frameCall(ctx.tabId, 0, { op: "mark", untilMs: MARK_MS }).catch(() => undefined);
    try {
      const shotParams: Record<string, unknown> = { format: "png" };
      if (fullPage) {
        const metrics = await ctx.deps.cdp.send<{ cssContentSize: { width: number; height: number } }>(ctx.tabId, "Page.getLayoutMetrics");
        shotParams.captureBeyondViewport = true;
        shotParams.clip = { x: 0, y: 0, width: metrics.cssContentSize.width, height: metrics.cssContentSize.height, scale: 1 };
      }
      const shot = await ctx.deps.cdp.send<{ data: string }>(ctx.tabId, "Page.captureScreenshot", shotParams);
      bytes = base64ToBytes(shot.data);
      if (bytes.byteLength > SCREENSHOT_MAX_BYTES) {
        const jpeg = await ctx.deps.cdp.send<{ data: string }>(ctx.tabId, "Page.captureScreenshot", { ...shotParams, format: "jpeg", quality: 70 });
        bytes = base64ToBytes(jpeg.data);
        contentType = "image/jpeg";
        warnings.push("the PNG was too large; sent a JPEG");
      }
    } catch (error) {
      if (!(error instanceof CdpFailure)) throw error;
      // captureVisibleTab sees only the active tab of a window: the task's tab is, in its own.
      try {
        const url = await chrome.tabs.captureVisibleTab(ctx.tab.windowId, { format: "png" });
        bytes = base64ToBytes(url.slice(url.indexOf(",") + 1));
      } catch (again) {
        throw new ActionError("PAGE_PREP_FAILED", `no screenshot: ${error.message}; captureVisibleTab: ${errorText(again)}`, true);
      }
      partial = true;
      warnings.push(`CDP screenshot failed (${error.message}); captured the visible tab instead${fullPage ? " (the viewport only)" : ""}`);
    } finally {
      void frameCall(ctx.tabId, 0, { op: "mark", untilMs: 0 }).catch(() => undefined);
    }
    if (bytes.byteLength > SCREENSHOT_MAX_BYTES) throw new ActionError("PAGE_PREP_FAILED", `the screenshot is ${bytes.byteLength} bytes, over the limit`, false);
    const size = imageSize(bytes) ?? { width: 0, height: 0 };
    const uploaded = await uploadArtifact(await ctx.deps.server(), { taskId: ctx.task.taskId, kind: "screenshot", contentType, actionId: ctx.action.actionId }, bytes);
    const result: ScreenshotResult = { artifactId: uploaded.artifactId, url: uploaded.url, width: size.width, height: size.height };
    return { result, warnings, partial };
  },
};
