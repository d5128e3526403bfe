// Steps waiting for the person, as the side panel shows them (seed 002 §6.2): the server sends
// `confirmation_requested` to the task's extension and `confirmation_settled` once it is
// answered anywhere; the service worker keeps the pending ones in storage, the side panel
// renders them and answers with `confirm`. The action's badge says that something waits.
import type { ConfirmationRequest } from "../../protocol/ts/protocol.ts";

export const CONFIRMATIONS_KEY = "confirmations";

/** A pending confirmation, by task. */
export type PendingConfirmation = { taskId: string; request: ConfirmationRequest; at: number };
export type Pending = Record<string, PendingConfirmation>;

async function load(): Promise<Pending> {
  return ((await chrome.storage.local.get<{ confirmations?: Pending }>(CONFIRMATIONS_KEY)).confirmations ?? {}) as Pending;
}

async function save(pending: Pending): Promise<void> {
  await chrome.storage.local.set({ [CONFIRMATIONS_KEY]: pending });
  const waiting = Object.keys(pending).length;
  await chrome.action.setBadgeText({ text: waiting > 0 ? "!" : "" });
  if (waiting > 0) await chrome.action.setBadgeBackgroundColor({ color: "#ef6c00" });
}

/** A step of `taskId` waits (one at a time per task: a newer one replaces it). */
export async function confirmationRequested(taskId: string, request: ConfirmationRequest): Promise<void> {
  const pending = await load();
  pending[taskId] = { taskId, request, at: Date.now() };
  await save(pending);
}

/** The task's confirmation was answered, or the task moved on: `step` only, or whatever waits. */
export async function confirmationSettled(taskId: string, step?: number): Promise<void> {
  const pending = await load();
  const waiting = pending[taskId];
  if (waiting === undefined || (step !== undefined && waiting.request.step !== step)) return;
  delete pending[taskId];
  await save(pending);
}
