// browser_press_key: one key, with modifiers (`Control+a`), through CDP; DOM key events as the
// fallback (marked partial). Enter or Space with `expect` is pressed only if the focused element's
// facts, read just before, are not outbound or are the ones the step was rated on.
import { CdpFailure } from "../cdp.ts";
import { frameCall } from "../frames.ts";
import { dispatchKey, ourInput } from "../input.ts";
import { parseKey } from "../keys.ts";
import { ActionError } from "../results.ts";
import type { Handler } from "./handler.ts";

export const browserPressKey: Handler<"browser_press_key"> = {
  async run(ctx, { key, expect }) {
    if (typeof key !== "string") throw new ActionError("SCHEMA_VALIDATION_FAILED", "browser_press_key needs a key");
    const spec = parseKey(key);
    if (expect !== undefined && (spec.key === "Enter" || spec.key === " ")) await frameCall(ctx.tabId, 0, { op: "guardFocus", expect });
    try {
      await ourInput(ctx.deps.cdp, ctx.tabId, () => dispatchKey(ctx.deps.cdp, ctx.tabId, spec));
      return { result: { pressed: spec.key, strategy: "cdp_key" } };
    } catch (error) {
      if (!(error instanceof CdpFailure)) throw error;
      await frameCall(ctx.tabId, 0, { op: "domKey", key: spec.key, code: spec.code, keyCode: spec.keyCode, modifiers: spec.modifiers });
      return { result: { pressed: spec.key, strategy: "dom" }, partial: true, warnings: [`CDP input failed (${error.message}); sent DOM key events instead`] };
    }
  },
};
