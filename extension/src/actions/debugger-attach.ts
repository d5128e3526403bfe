// browser_debugger_attach: attaches the debugger to the task's tab ahead of CDP input.
import type { Handler } from "./handler.ts";

export const browserDebuggerAttach: Handler<"browser_debugger_attach"> = {
  async run(ctx) {
    await ctx.deps.cdp.attach(ctx.tabId);
    return { result: { attached: true } };
  },
};
