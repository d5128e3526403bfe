// How an action ends: a success (possibly partial, with warnings) or an `ActionError` carrying
// one of the protocol's error codes. Action handlers throw `ActionError`; the dispatcher turns
// either into an `ActionOutcome`. No Chrome APIs here.
import { MAX_EXTENSION_FRAME_BYTES } from "../../protocol/ts/protocol.ts";
import type { ActionOutcome, BrowserAction, ErrorCode, ErrorObject, PageDialog } from "../../protocol/ts/protocol.ts";

/**
 * The most a result may take: its `action_result` frame must fit in one extension socket frame,
 * with room for the envelope around it. Larger results go to R2 and are cut to fit.
 */
export const MAX_RESULT_BYTES = MAX_EXTENSION_FRAME_BYTES - 4_096;

/** The message of anything thrown. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Codes a retry may cure (seed 000 §5.1); TIMEOUT too, since a later try may find the page ready. */
const RETRYABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "PLUGIN_OFFLINE",
  "PLUGIN_TIMEOUT_ACK",
  "PLUGIN_TIMEOUT_EXEC",
  "PAGE_PREP_FAILED",
  "CDP_UNAVAILABLE",
  "NAVIGATION_IN_PROGRESS",
  "TIMEOUT",
  // The local bridge had no free slot: a later try may find one.
  "E_BUSY",
]);

export function defaultRetryable(code: ErrorCode): boolean {
  return RETRYABLE.has(code);
}

export class ActionError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  /** The JavaScript dialog the page shows, which is why the action could not run. */
  readonly dialog: PageDialog | undefined;
  /** The site the person has not allowed Mimo on, when that is why the action could not run. */
  waitsForSite: string | undefined;
  /** The tab the task is in now, when it is not the one the action was for (that one closed). */
  currentTab: number | undefined;

  constructor(code: ErrorCode, message: string, retryable: boolean = defaultRetryable(code), dialog?: PageDialog) {
    super(message);
    this.code = code;
    this.retryable = retryable;
    this.dialog = dialog;
  }

  /** The same error saying `message` instead. */
  withMessage(message: string): ActionError {
    const error = new ActionError(this.code, message, this.retryable, this.dialog);
    error.waitsForSite = this.waitsForSite;
    error.currentTab = this.currentTab;
    return error;
  }

  toObject(): ErrorObject {
    return { code: this.code, message: this.message, retryable: this.retryable };
  }
}

/** What an action's handler returns when the action worked. `partial` marks a degraded success. */
export type ActionSuccess = {
  /** As the server keeps it (see `forServer`). */
  result: unknown;
  /** As the model reads it, where that differs: the server never keeps it. */
  modelResult?: unknown;
  warnings?: string[];
  partial?: boolean;
  /** A JavaScript dialog the page shows when the action ended. */
  dialog?: PageDialog;
  /** The task's current tab after the action. */
  tabId?: number;
  /** The page was as the action asks already (a checkbox ticked): nothing was done, no effect is looked for. */
  nothingToDo?: boolean;
};

type Ids = Pick<BrowserAction, "actionId" | "attempt" | "taskId">;

export function successOutcome(action: Ids, success: ActionSuccess): ActionOutcome {
  const warnings = success.warnings ?? [];
  const outcome: ActionOutcome = {
    actionId: action.actionId,
    attempt: action.attempt,
    taskId: action.taskId,
    status: success.partial === true ? "partial" : "ok",
    result: success.result,
    warnings,
  };
  if (success.modelResult !== undefined) outcome.modelResult = success.modelResult;
  if (success.dialog !== undefined) outcome.dialog = success.dialog;
  if (success.tabId !== undefined) outcome.tabId = success.tabId;
  return outcome;
}

/** Any thrown value as an error object: `ActionError`s keep their code, anything else is internal. */
export function errorObject(error: unknown): ErrorObject {
  return error instanceof ActionError ? error.toObject() : { code: "INTERNAL_ERROR", message: errorText(error), retryable: false };
}

/** Any thrown value as an outcome (see `errorObject`). */
export function errorOutcome(action: Ids, error: unknown, warnings: string[] = []): ActionOutcome {
  const outcome: ActionOutcome = { actionId: action.actionId, attempt: action.attempt, taskId: action.taskId, status: "error", error: errorObject(error), warnings };
  if (error instanceof ActionError && error.dialog !== undefined) outcome.dialog = error.dialog;
  if (error instanceof ActionError && error.waitsForSite !== undefined) outcome.waitsForSite = error.waitsForSite;
  if (error instanceof ActionError && error.currentTab !== undefined) outcome.tabId = error.currentTab;
  return outcome;
}

/** The dedupe key of one delivery: an action id and its attempt. */
export function actionKey(action: Pick<BrowserAction, "actionId" | "attempt">): string {
  return `${action.actionId}#${action.attempt}`;
}
