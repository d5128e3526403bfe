// browser_get_html: the top frame's HTML (or one element's, by XPath), stored in R2.
import { HTML_MAX_BYTES } from "../../../protocol/ts/protocol.ts";
import { uploadArtifact } from "../artifacts.ts";
import { frameCall } from "../frames.ts";
import { utf8 } from "../image.ts";
import { ActionError } from "../results.ts";
import type { Handler } from "./handler.ts";

export const browserGetHtml: Handler<"browser_get_html"> = {
  async run(ctx, { xpath }) {
    const { html } = await frameCall<{ html: string }>(ctx.tabId, 0, xpath === undefined ? { op: "html" } : { op: "html", xpath });
    const bytes = utf8(html);
    if (bytes.byteLength > HTML_MAX_BYTES) throw new ActionError("PAYLOAD_TOO_LARGE", `the HTML is ${bytes.byteLength} bytes, over the limit of ${HTML_MAX_BYTES}`, false);
    const uploaded = await uploadArtifact(await ctx.deps.server(), { taskId: ctx.task.taskId, kind: "html", contentType: "text/html; charset=utf-8", actionId: ctx.action.actionId }, bytes);
    return { result: { artifactId: uploaded.artifactId, url: uploaded.url, bytes: bytes.byteLength } };
  },
};
