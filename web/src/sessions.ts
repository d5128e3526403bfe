// The session list as the web app keeps it: its pages loaded from the server (for the words
// searched for), and loaded again — once for a burst of changes — when the open task's status
// or title is no longer what it shows.

import type { TaskListEntry, TaskStatus } from "../../protocol/ts/protocol.ts";
import { ApiError, listTasks } from "./api.ts";
import type { GettingStarted } from "./onboarding.ts";
import type { TaskList } from "./view.ts";

/** How long the list waits for more changes of the open task before it is loaded again. */
const RELOAD_MS = 300;

export type SessionsDeps = {
  /** The deployment token, if the person gave one. */
  token(): string | null;
  list: TaskList;
  guide: GettingStarted;
  /** The token was refused: the person is asked for another. */
  tokenRejected(err: ApiError): void;
};

export class Sessions {
  readonly #deps: SessionsDeps;
  /** The sessions shown (every page loaded), and the cursor of the next page. */
  #shown: TaskListEntry[] = [];
  #next: string | null = null;
  /** Counts the loads of the list, so that only the latest one's answer is shown. */
  #asked = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;

  constructor(deps: SessionsDeps) {
    this.#deps = deps;
  }

  /** Its first page (for the words searched for), or the next page after those shown (`more`). */
  async load(more: boolean): Promise<void> {
    const token = this.#deps.token();
    if (!token || (more && this.#next === null)) return;
    const { list, guide } = this.#deps;
    const asked = ++this.#asked;
    try {
      const page = await listTasks(token, list.words, more ? (this.#next ?? undefined) : undefined);
      if (asked !== this.#asked) return;
      this.#shown = more ? [...this.#shown, ...page.tasks] : page.tasks;
      // A task that was asked something (it has a title), not a blank one.
      if (list.words === "") guide.setHasTasks(this.#shown.some((t) => (t.title ?? "") !== ""));
      this.#next = page.nextBefore;
      list.render(this.#shown, page.nextBefore !== null);
    } catch (err) {
      if (asked !== this.#asked) return;
      if (err instanceof ApiError && err.unauthorized) return this.#deps.tokenRejected(err);
      list.showError(err instanceof Error ? err.message : String(err));
    }
  }

  /** The open task's status or title is now `status` and `title`. */
  changed(taskId: string, status: TaskStatus, title: string | undefined): void {
    const shown = this.#shown.find((t) => t.taskId === taskId);
    if (shown && shown.status === status && shown.title === title) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.load(false);
    }, RELOAD_MS);
  }
}
