// An observation's parts in one message (actions/observe.ts): the element list is fitted to
// what the others leave before it is made; what of the readable text would not fit beside the
// rest stays in its artifact, the markdown first, then the text. No Chrome APIs here.
import type { ObserveResult } from "../../protocol/ts/protocol.ts";
import { utf8 } from "./image.ts";
import { MAX_RESULT_BYTES } from "./results.ts";

/** Cuts `result`'s readable text until the whole fits `limit` bytes (or nothing of it is left to cut). */
export function fitReadable(result: ObserveResult, limit = MAX_RESULT_BYTES): void {
  const text = result.readability.result;
  const fits = () => utf8(JSON.stringify(result)).byteLength <= limit;
  if (text === undefined || fits()) return;
  if (text.markdown !== undefined) {
    delete text.markdown;
    result.readability.warnings.push("the markdown is only in the artifact: with the element list it would not fit in one message");
    if (fits()) return;
  }
  if (text.text !== undefined) {
    delete text.text;
    text.truncated = true;
    result.readability.warnings.push("the readable text is only in the artifact: with the element list it would not fit in one message");
  }
}
