// browser_dialog: answers the JavaScript dialog open in the task's tab (CDP
// `Page.handleJavaScriptDialog`): OK or Cancel, with the text for a prompt.
import { describeDialog } from "../dialogs.ts";
import type { Handler } from "./handler.ts";

export const browserDialog: Handler<"browser_dialog"> = {
  async run(ctx, p) {
    const dialog = await ctx.deps.dialogs.answer(ctx.tabId, p.accept, p.text);
    return { result: { kind: dialog.kind, message: dialog.message, accepted: p.accept, answered: `${p.accept ? "OK" : "Cancel"} to the ${describeDialog(dialog)}` } };
  },
};
