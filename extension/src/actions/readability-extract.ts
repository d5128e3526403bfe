// browser_readability_extract: the page's readable text (Mozilla Readability + Turndown,
// injected into the top frame), stored in R2 and inlined when small enough (seed 000 §4.4).
import { READABILITY_INLINE_LIMIT_BYTES, READABILITY_MAX_BYTES } from "../../../protocol/ts/protocol.ts";
import type { ReadabilityResult } from "../../../protocol/ts/protocol.ts";
import { uploadArtifact } from "../artifacts.ts";
import type { UploadWait } from "../artifacts.ts";
import { utf8 } from "../image.ts";
import { ActionError, errorText, MAX_RESULT_BYTES } from "../results.ts";
import type { ActionSuccess } from "../results.ts";
import type { ReadabilityPage } from "../readability-page.ts";
import { timeline } from "../timeline.ts";
import type { Handler, TabContext } from "./handler.ts";

/** How long a reading that waits for the page's next frame waits at most. */
const FRAME_WAIT_MS = 100;

/**
 * The readable text of a tab's top frame (Readability and Turndown, injected on demand: once
 * per document — a page read again, after each step, runs what it already has, and gives the
 * same text without reading while the page has not changed: `unchanged`, page-changes.ts).
 * `afterFrame`: read once the page has drawn its next frame.
 */
export async function readPage(tabId: number, afterFrame = false): Promise<ReadabilityPage> {
  let page: ReadabilityPage | null | undefined;
  const read = async () => {
    const [run] = await chrome.scripting.executeScript({
      target: { tabId, frameIds: [0] },
      // Runs in the page: what it uses comes as arguments (`waitMs`: 0 reads at once).
      func: (waitMs: number) => {
        const reader = (globalThis as unknown as { __mimoReadability?(): unknown }).__mimoReadability;
        if (reader === undefined) return null;
        // A page out of sight draws no frames (and its timers are slowed): read at once.
        if (waitMs === 0 || document.visibilityState !== "visible") return reader();
        return new Promise((resolve, reject) => {
          let done = false;
          const go = () => {
            if (done) return;
            done = true;
            try {
              resolve(reader());
            } catch (error) {
              reject(error);
            }
          };
          // Once the frame is drawn (after its animation frame callbacks, the next task), or
          // soon should none come.
          requestAnimationFrame(() => setTimeout(go, 0));
          setTimeout(go, waitMs);
        });
      },
      args: [afterFrame ? FRAME_WAIT_MS : 0],
    });
    return run?.result as ReadabilityPage | null | undefined;
  };
  try {
    page = await read();
    if (page === null) {
      await chrome.scripting.executeScript({ target: { tabId, frameIds: [0] }, files: ["readability.js"] });
      page = await read();
    }
  } catch (error) {
    throw new ActionError("PAGE_PREP_FAILED", `readability failed: ${errorText(error)}`, true);
  }
  if (page === undefined || page === null) throw new ActionError("PAGE_PREP_FAILED", "readability returned nothing", true);
  return page;
}

export const browserReadabilityExtract: Handler<"browser_readability_extract"> = {
  run: (ctx) => readableText(ctx, "stored"),
};

/**
 * The tab's readable text, inline when small enough, stored in R2; the result comes when the
 * upload is `wait`ed for. `afterFrame`: read once the page has drawn its next frame (one a
 * screenshot under way captures, which the reading would otherwise hold up).
 */
export async function readableText(ctx: TabContext, wait: UploadWait, afterFrame = false): Promise<ActionSuccess> {
  const stages = timeline(ctx.action);
  const reading = performance.now();
  const page = await readPage(ctx.tabId, afterFrame);
  // Given again: the page has not changed since it was last read (page-changes.ts).
  stages.note(page.unchanged === true ? "text.unchanged" : "text.read", performance.now() - reading);
  const warnings: string[] = page.article ? [] : ["no article found: the text is the whole page's"];
  const textBytes = utf8(page.text).byteLength;
  if (textBytes > READABILITY_MAX_BYTES) {
    throw new ActionError("READABILITY_TOO_LARGE", `the page's text is ${textBytes} bytes, over the limit of ${READABILITY_MAX_BYTES}`, false);
  }
  const markdown = utf8(page.markdown);
  const stored = markdown.byteLength <= READABILITY_MAX_BYTES ? { body: markdown, contentType: "text/markdown; charset=utf-8" } : { body: utf8(page.text), contentType: "text/plain; charset=utf-8" };
  const uploaded = await stages.part("text.upload", async () =>
    uploadArtifact(await ctx.deps.server(), { taskId: ctx.task.taskId, kind: "readability", contentType: stored.contentType, actionId: ctx.action.actionId, reuse: true }, stored.body, wait),
  );
  const result: ReadabilityResult = { artifactId: uploaded.artifactId, title: page.title, contentLengthBytes: textBytes, truncated: false };
  if (textBytes >= READABILITY_INLINE_LIMIT_BYTES) {
    result.truncated = true;
    return { result, warnings };
  }
  result.text = page.text;
  result.markdown = page.markdown;
  if (utf8(JSON.stringify(result)).byteLength > MAX_RESULT_BYTES) {
    delete result.markdown;
    warnings.push("the markdown is only in the artifact: with the text it would not fit in one message");
  }
  return { result, warnings };
}
