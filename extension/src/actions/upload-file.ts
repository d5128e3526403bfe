// browser_upload_file: puts a file the person attached to the task into a file input. The
// worker downloads it (its credential may read its tasks' artifacts) and the content script
// sets it on the input the way the file chooser does — CDP's own file setting needs a path on
// this machine, which an attached file does not have.
import { ATTACHMENT_MAX_BYTES } from "../../../protocol/ts/protocol.ts";
import { downloadArtifact } from "../artifacts.ts";
import { frameCall } from "../frames.ts";
import { bytesToBase64 } from "../image.ts";
import { route } from "../input.ts";
import type { Handler } from "./handler.ts";

export const browserUploadFile: Handler<"browser_upload_file"> = {
  async run(ctx, p) {
    const { frameId, target } = await route(ctx, p);
    const bytes = await downloadArtifact(await ctx.deps.server(), p.artifactId, ATTACHMENT_MAX_BYTES);
    const set = await frameCall<{ input: string; files: string[] }>(ctx.tabId, frameId, {
      op: "setFiles",
      target,
      files: [{ name: p.name, type: p.contentType, base64: bytesToBase64(bytes) }],
    });
    return { result: { uploaded: p.name, size: bytes.byteLength, input: set.input, files: set.files } };
  },
};
