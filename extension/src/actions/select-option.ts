// browser_select_option: chooses an option of a <select> by its value or its visible label.
import { frameCall } from "../frames.ts";
import { route } from "../input.ts";
import { ActionError } from "../results.ts";
import type { Handler } from "./handler.ts";

export const browserSelectOption: Handler<"browser_select_option"> = {
  async run(ctx, p) {
    if (typeof p.option !== "string") throw new ActionError("SCHEMA_VALIDATION_FAILED", "browser_select_option needs an option");
    const { frameId, target } = await route(ctx, p);
    const chosen = await frameCall<{ value: string; label: string }>(ctx.tabId, frameId, { op: "select", target, option: p.option });
    return { result: { selected: true, ...chosen } };
  },
};
