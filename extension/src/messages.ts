// Messages from the extension's own pages to its service worker (`chrome.runtime.sendMessage`).
// Any message starts the worker if Chrome stopped it.

export type PageMessage =
  /** The options page opened: connect now if not connected (rather than at the next alarm). */
  | { type: "mimo:wake" }
  /** The person saved unchanged settings: drop the connection and connect again now. (Changed
   * settings need no message: the worker reconnects when it sees them change in storage.) */
  | { type: "mimo:reconnect" }
  /** The person answered a step waiting for them, in the side panel. Answered with
   * `{ sent: boolean }`: whether it went to the server. */
  | { type: "mimo:confirm"; taskId: string; step: number; approve: boolean; reason?: string };

export function isPageMessage(message: unknown): message is PageMessage {
  const type = typeof message === "object" && message !== null ? (message as { type?: unknown }).type : undefined;
  return type === "mimo:wake" || type === "mimo:reconnect" || type === "mimo:confirm";
}
