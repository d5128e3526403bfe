// bridge_invoke: one invocation of the local bridge (read, write, edit or bash in the folder the
// person shared), relayed to the bridge this extension is connected to, attributed to the task
// (its session) and the agent that chose it. The bridge's `E_*` errors are the action's error
// as the bridge gave it; without a bridge connected, or for a task the server has not said the
// person allows the bridge for (its `task_state`), the action is refused (PERMISSION_DENIED).
// Every invocation is kept in the extension's action log with its outcome, as every action is.
import type { Invoke } from "../../../protocol/ts/protocol.ts";
import { BridgeUnavailable } from "../bridge.ts";
import { ActionError } from "../results.ts";
import type { Handler } from "./handler.ts";

export const bridgeInvoke: Handler<"bridge_invoke"> = {
  async run({ action, deps }, p) {
    if (!(await deps.tasks.bridgeAllowed(action.taskId))) {
      throw new ActionError("PERMISSION_DENIED", "the person has not allowed this task to use files or commands on their computer", false);
    }
    let result;
    try {
      const invoke: Invoke = { id: `${action.actionId}#${action.attempt}`, tool: p.tool, args: p.args, sessionId: action.taskId, agentId: p.agentId };
      // Only the server's consent gate sets it, once the person confirmed this very write.
      if (p.confirmedProtectedPath !== undefined) invoke.confirmedProtectedPath = p.confirmedProtectedPath;
      result = await deps.bridge.invoke(invoke);
    } catch (error) {
      if (error instanceof BridgeUnavailable) throw new ActionError("PERMISSION_DENIED", error.message, false);
      throw error;
    }
    if (!result.ok) {
      const error = result.error ?? { code: "E_TOOL", message: "the bridge refused the invocation", retryable: false };
      throw new ActionError(error.code, error.message, error.retryable);
    }
    const exitCode = p.tool === "bash" ? (result.data as { exitCode?: number | null } | undefined)?.exitCode : 0;
    return { result: result.data, warnings: exitCode === 0 ? [] : [`the command exited with ${exitCode === null ? "a signal" : `code ${exitCode}`}`] };
  },
};
