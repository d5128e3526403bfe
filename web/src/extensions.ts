// The person's browsers (paired extensions) as the web app keeps them: listed, refreshed every
// few seconds while the app is shown, paired with a code, revoked. The panel and the getting
// started guide show what this controller learns.

import type { ExtensionInfo } from "../../protocol/ts/protocol.ts";
import { ApiError, listExtensions, pairingCode, revokeExtension } from "./api.ts";
import type { GettingStarted } from "./onboarding.ts";
import type { ExtensionsPanel } from "./view.ts";

const REFRESH_MS = 5000;

export type ExtensionsDeps = {
  /** The deployment token, if the person gave one. */
  token(): string | null;
  panel: ExtensionsPanel;
  guide: GettingStarted;
  /** The token was refused: the person is asked for another. */
  tokenRejected(err: ApiError): void;
  /** The list changed (the task's browser is named from it). */
  changed(): void;
};

export class Extensions {
  /** The paired browsers, as last listed. */
  list: ExtensionInfo[] = [];
  readonly #deps: ExtensionsDeps;
  #timer: ReturnType<typeof setInterval> | null = null;
  #loading = false;

  constructor(deps: ExtensionsDeps) {
    this.#deps = deps;
  }

  startPolling(): void {
    this.stopPolling();
    this.#timer = setInterval(() => {
      if (document.visibilityState === "visible") void this.refresh();
    }, REFRESH_MS);
  }

  stopPolling(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  async refresh(): Promise<void> {
    const token = this.#deps.token();
    if (!token || this.#loading) return;
    this.#loading = true;
    this.#deps.panel.setLoading(true);
    try {
      const list = await listExtensions(token);
      this.set(list.extensions);
    } catch (err) {
      this.#failed(err);
    } finally {
      this.#loading = false;
      this.#deps.panel.setLoading(false);
    }
  }

  async pair(): Promise<void> {
    const token = this.#deps.token();
    if (!token) return;
    try {
      const { code, expiresAt } = await pairingCode(token);
      this.#deps.panel.showPairingCode(code, expiresAt);
      this.#deps.guide.showPairingCode(code, expiresAt);
    } catch (err) {
      this.#failed(err);
    }
  }

  async revoke(clientId: string): Promise<void> {
    const token = this.#deps.token();
    if (!token) return;
    try {
      await revokeExtension(token, clientId);
    } catch (err) {
      if (err instanceof ApiError && err.unauthorized) return this.#deps.tokenRejected(err);
      this.#deps.panel.setError(err instanceof Error ? err.message : String(err));
    }
    await this.refresh();
  }

  set(list: ExtensionInfo[]): void {
    this.list = list;
    this.#deps.panel.setExtensions(list);
    this.#deps.guide.setExtensions(list);
    this.#deps.changed();
  }

  #failed(err: unknown): void {
    if (err instanceof ApiError && err.unauthorized) this.#deps.tokenRejected(err);
    else this.#deps.panel.setError(err instanceof Error ? err.message : String(err));
  }
}
