// browser_type: focuses the field and inserts the text through CDP (`Input.insertText`),
// pressing Enter after it if asked; DOM input events when asked, or as the fallback when CDP
// fails (marked partial). Reports what the field holds afterwards. A date, time, colour or
// slider input is set whole, in its fixed format, the way its picker commits a value.
import { CdpFailure } from "../cdp.ts";
import type { Prepared } from "../frame-protocol.ts";
import { frameCall } from "../frames.ts";
import { dispatchKey, ourInput, route } from "../input.ts";
import { parseKey } from "../keys.ts";
import { ActionError } from "../results.ts";
import { substituteSecrets } from "../secret-values.ts";
import type { Handler } from "./handler.ts";

export const browserType: Handler<"browser_type"> = {
  async run(ctx, p) {
    if (typeof p.text !== "string") throw new ActionError("SCHEMA_VALIDATION_FAILED", "browser_type needs text");
    const { frameId, target } = await route(ctx, p);
    // `{{secret:name}}` becomes the secret's value here, at the moment of typing, and only here.
    const text = await substituteSecrets(await ctx.deps.server(), ctx.action, ctx.tabId, frameId, () => frameCall<{ sendsTo?: string }>(ctx.tabId, frameId, { op: "markSecret", target }), p.text);
    const cdp = ctx.deps.cdp;
    const submit = p.submit === true;
    const warnings: string[] = [];
    let strategy: "cdp_key" | "dom_input" = "cdp_key";
    let partial = false;
    if (p.strategy === "dom_input") {
      await frameCall(ctx.tabId, frameId, { op: "domType", target, text, submit });
      strategy = "dom_input";
    } else {
      const prepared = await frameCall<Prepared>(ctx.tabId, frameId, { op: "prepare", target, purpose: "type" });
      if (prepared.editable === "value") {
        // A date, time, colour or slider: set whole, as its picker does (keys go segment by segment).
        await frameCall(ctx.tabId, frameId, { op: "domType", target, text, submit });
        return { result: { typed: true, strategy: "set_value", value: p.text } };
      }
      try {
        await cdp.attach(ctx.tabId);
        await ourInput(cdp, ctx.tabId, async () => {
          await frameCall(ctx.tabId, frameId, { op: "focusForTyping", target });
          if (text === "") await dispatchKey(cdp, ctx.tabId, parseKey("Backspace"));
          else await cdp.send(ctx.tabId, "Input.insertText", { text });
          // Typing may have changed the page (a script on `input` pointing the form elsewhere):
          // Enter sends the form only if it is still the one the step was rated on.
          if (submit) {
            await frameCall(ctx.tabId, frameId, { op: "readValue", target });
            await dispatchKey(cdp, ctx.tabId, parseKey("Enter"));
          }
        });
      } catch (error) {
        if (!(error instanceof CdpFailure)) throw error;
        if (p.strategy === "cdp_key") throw error;
        await frameCall(ctx.tabId, frameId, { op: "domType", target, text, submit });
        strategy = "dom_input";
        partial = true;
        warnings.push(`CDP input failed (${error.message}); typed with DOM events instead, which the page sees as untrusted`);
      }
    }
    const result: { typed: true; strategy: string; value?: string } = { typed: true, strategy };
    if (!submit) {
      const read = await frameCall<{ value: string }>(ctx.tabId, frameId, { op: "readValue", target }).catch(() => undefined);
      if (read !== undefined) {
        result.value = read.value;
        if (read.value !== p.text && read.value !== "••••") {
          // The page took something else (a mask, a length limit, a script that clears it).
          partial = true;
          warnings.push(`the field holds ${JSON.stringify(read.value.slice(0, 200))} after typing, not what was typed: the page changed or refused it`);
        }
      }
    }
    return { result, warnings, partial };
  },
};
