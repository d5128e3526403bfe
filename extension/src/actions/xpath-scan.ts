// browser_xpath_scan: the DOM index again, into the attribute of the task's last index, keeping
// every element's xpath when the result must be cut to fit one message.
import { DEFAULT_CLICK_ATTR } from "../frame-protocol.ts";
import { indexPage } from "./dom-index.ts";
import type { Handler } from "./handler.ts";

export const browserXpathScan: Handler<"browser_xpath_scan"> = {
  run: (ctx, params) => indexPage(ctx, { scope: params.scope ?? "viewport", attr: ctx.task.attr ?? DEFAULT_CLICK_ATTR, xpathScan: true }),
};
