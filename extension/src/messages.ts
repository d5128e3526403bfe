// Messages from the extension's own pages to its service worker (`chrome.runtime.sendMessage`).
// Any message starts the worker if Chrome stopped it. Only the extension's own pages may send
// them (`fromExtensionPage`): a content script lives in a web page, beside the page's scripts.

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

/** The answer to a message its sender may not send. */
export type Refused = { ok: false; code: "PERMISSION_DENIED"; message: string };

export function refused(message: string): Refused {
  return { ok: false, code: "PERMISSION_DENIED", message };
}

/**
 * Whether a message comes from one of the extension's own pages (the side panel, the options
 * page), where only the person acts: not from a content script, whose `sender.url` is the web
 * page it runs in (and whose world a page may yet find a way into).
 */
export function fromExtensionPage(sender: { id?: string; url?: string }, extensionId: string): boolean {
  if (sender.id !== extensionId || sender.url === undefined) return false;
  try {
    const url = new URL(sender.url);
    return url.protocol === "chrome-extension:" && url.host === extensionId;
  } catch {
    return false;
  }
}
