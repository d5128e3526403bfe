// The replay of a task (seed 002 §7.2), from its audit log: a timeline of the steps with a
// scrubber, and for the step shown its action, risk, the model's reflection, the confirmation,
// what came of it, and the page before and after (address, title, screenshot, the target
// outlined on the page it was chosen on).

import type { AgentAction, AuditConfirmation, AuditOutcome, AuditPage, AuditRecord } from "../../protocol/ts/protocol.ts";
import { h, replaceChildren } from "./dom.ts";
import { outlinedShot, riskBadge } from "./evidence.ts";
import { retryText } from "./retry.ts";
import { describeAction } from "./steps.ts";

/** The audit log (JSON Lines) as records. */
export function parseAuditLog(text: string): AuditRecord[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as AuditRecord);
}

/** The step's action as the model gave it (`{click: {index: 4}}`), to describe it. */
export function actionOf(record: AuditRecord): AgentAction {
  return { [record.action.type]: record.action.params } as AgentAction;
}

/**
 * "Step 3", "Run 2 · step 3" when the log has several runs (each numbers its steps from 1), or
 * "Sub-task 2 · step 3" for a step of the sub-agent doing the request's second browser job.
 */
export function stepTitle(record: AuditRecord, runs: number): string {
  const subtask = /^subtask-(\d+)$/.exec(record.agentId)?.[1];
  if (subtask !== undefined) return `Sub-task ${subtask} · step ${record.step}`;
  return runs > 1 ? `Run ${record.run} · step ${record.step}` : `Step ${record.step}`;
}

/** Whether the step succeeded, failed, half-succeeded or never ended. */
export function outcomeState(outcome: AuditOutcome | undefined): "ok" | "partial" | "failed" | "unfinished" {
  if (outcome === undefined) return "unfinished";
  if (!outcome.ok) return "failed";
  return outcome.partial ? "partial" : "ok";
}

/** What came of the step, in a line. */
export function outcomeText(outcome: AuditOutcome | undefined): string {
  switch (outcomeState(outcome)) {
    case "unfinished":
      return "It did not end (the run ended first, or it was still running).";
    case "failed": {
      const error = outcome!.errors?.[0];
      return error ? `Failed: ${error.code} — ${error.message}` : "Failed.";
    }
    case "partial":
      return "Done in part.";
    case "ok":
      return "Done.";
  }
}

/** A time of day with seconds, as an audit needs it. */
function timeOf(ms: number): string {
  return new Date(ms).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/** How the person answered the step's confirmation, in a line. */
export function confirmationText(c: AuditConfirmation, time: (ms: number) => string = timeOf): string {
  const where = c.by === "web" ? " in the web app" : c.by ? ` (${c.by})` : "";
  if (c.approved === undefined || c.answeredAt === undefined) return `Asked at ${time(c.askedAt)}; not answered.`;
  const waited = Math.round((c.answeredAt - c.askedAt) / 1000);
  return `${c.approved ? "Confirmed" : "Declined"}${where} at ${time(c.answeredAt)}, ${waited} s after it was asked.`;
}

/** Download URLs of artifacts live 5 minutes (DEFAULT_DOWNLOAD_EXPIRY_SECS): one is reused for less. */
const URL_REUSE_MS = 4 * 60_000;

export type ReplayHandlers = {
  /** Where to load a stored artifact from. */
  artifactUrl: (artifactId: string) => Promise<string>;
  /** The step shown changed (1-based position in the log), to keep the address in step. */
  onStep: (at: number) => void;
};

export class ReplayView {
  readonly el: HTMLElement;
  private records: AuditRecord[] = [];
  private runs = 1;
  private at = 1;
  private readonly urls = new Map<string, { url: Promise<string>; until: number }>();
  private readonly handlers: ReplayHandlers;
  private readonly scrubber: HTMLInputElement;
  private readonly prev: HTMLButtonElement;
  private readonly next: HTMLButtonElement;
  private readonly position = h("span", { class: "replay-position", "data-testid": "replay-position" });
  private readonly timeline = h("ol", { class: "replay-timeline", "data-testid": "replay-timeline" });
  private readonly detail = h("div", { class: "replay-detail", "data-testid": "replay-step" });
  private readonly note = h("div", { class: "replay-note muted", "data-testid": "replay-note" });
  /** The pages before and after one above the other, each at full width (else side by side). */
  private stacked = false;

  constructor(handlers: ReplayHandlers) {
    this.handlers = handlers;
    this.scrubber = h("input", { class: "replay-scrubber", type: "range", min: 1, max: 1, step: 1, value: 1, "aria-label": "Step", "data-testid": "replay-scrubber" });
    this.scrubber.addEventListener("input", () => this.show(Number(this.scrubber.value)));
    this.prev = h("button", { class: "btn btn-sm btn-outline", type: "button", "data-testid": "replay-prev", title: "Previous step (←)", onclick: () => this.show(this.at - 1) }, "‹ Prev");
    this.next = h("button", { class: "btn btn-sm btn-outline", type: "button", "data-testid": "replay-next", title: "Next step (→)", onclick: () => this.show(this.at + 1) }, "Next ›");
    this.el = h(
      "section",
      { class: "replay", "data-testid": "replay", tabindex: -1, "aria-label": "Replay of the task" },
      h("div", { class: "replay-bar" }, this.prev, this.scrubber, this.next, this.position),
      this.timeline,
      this.note,
      this.detail,
    );
    this.el.addEventListener("keydown", (e) => {
      // The scrubber moves itself with the arrow keys.
      if (e.target === this.scrubber) return;
      if (e.key === "ArrowLeft") this.show(this.at - 1);
      else if (e.key === "ArrowRight") this.show(this.at + 1);
    });
  }

  /** Nothing to show yet, or any more: `message` says why. */
  clear(message: string): void {
    this.records = [];
    this.urls.clear();
    this.note.textContent = message;
    this.note.hidden = false;
    this.setBar(false);
    this.timeline.replaceChildren();
    this.detail.replaceChildren();
  }

  /** The task's steps, showing step `at` (1-based). */
  load(records: AuditRecord[], at: number): void {
    this.records = records;
    this.urls.clear();
    this.runs = new Set(records.map((r) => r.run)).size;
    if (records.length === 0) {
      this.clear("This task has no steps to replay: it ran no browser actions.");
      return;
    }
    this.note.hidden = true;
    this.setBar(true);
    this.scrubber.max = String(records.length);
    replaceChildren(
      this.timeline,
      records.map((r, i) =>
        h(
          "li",
          {},
          h(
            "button",
            {
              class: "replay-tick",
              type: "button",
              "data-testid": "replay-tick",
              "data-state": outcomeState(r.outcome),
              "data-risk": r.action.risk ?? "low",
              "data-confirmed": r.confirmation ? String(r.confirmation.approved ?? "unanswered") : false,
              title: `${stepTitle(r, this.runs)}: ${describeAction(actionOf(r), r.action.targetName)}`,
              onclick: () => this.show(i + 1),
            },
            h("span", { class: "replay-tick-n" }, String(i + 1)),
            h("span", { class: "replay-tick-name" }, r.action.type),
          ),
        ),
      ),
    );
    this.show(at);
  }

  /** Shows step `at` of the log (kept within it). */
  show(at: number): void {
    if (this.records.length === 0) return;
    this.at = Math.min(Math.max(1, Math.round(at)), this.records.length);
    const record = this.records[this.at - 1]!;
    this.scrubber.value = String(this.at);
    this.prev.disabled = this.at === 1;
    this.next.disabled = this.at === this.records.length;
    this.position.textContent = `${this.at} of ${this.records.length}`;
    this.timeline.querySelectorAll(".replay-tick").forEach((tick, i) => tick.toggleAttribute("aria-current", i === this.at - 1));
    replaceChildren(this.detail, this.stepView(record));
    this.handlers.onStep(this.at);
  }

  focus(): void {
    this.el.focus();
  }

  private setBar(enabled: boolean): void {
    this.scrubber.disabled = !enabled;
    this.prev.disabled = !enabled;
    this.next.disabled = !enabled;
    this.position.textContent = enabled ? this.position.textContent : "";
  }

  private stepView(r: AuditRecord): HTMLElement {
    const reflection = r.reflection;
    const state = outcomeState(r.outcome);
    const warnings = r.outcome?.warnings ?? [];
    return h(
      "article",
      { class: "replay-card", "data-state": state },
      h(
        "div",
        { class: "replay-head" },
        h("span", { class: "replay-step-title", "data-testid": "replay-title" }, `${stepTitle(r, this.runs)}: ${describeAction(actionOf(r), r.action.targetName)}`),
        r.action.risk && riskBadge(r.action.risk, "replay-risk"),
        h("span", { class: "replay-time muted", title: new Date(r.ts).toISOString() }, timeOf(r.ts)),
      ),
      h("div", { class: `replay-outcome replay-outcome-${state}`, "data-testid": "replay-outcome" }, outcomeText(r.outcome)),
      warnings.length > 0 && h("ul", { class: "output-warnings", "data-testid": "replay-warnings" }, warnings.map((w) => h("li", {}, w))),
      (r.modelRetries?.length ?? 0) > 0 &&
        h(
          "ul",
          { class: "replay-retries muted", "data-testid": "replay-retries", title: "Before the model chose this step" },
          r.modelRetries!.map((retry) => h("li", {}, retryText(retry, 0))),
        ),
      reflection &&
        h(
          "dl",
          { class: "replay-reflection", "data-testid": "replay-reflection" },
          h("dt", {}, "Previous goal"),
          h("dd", {}, reflection.evaluation_previous_goal || "—"),
          h("dt", {}, "Memory"),
          h("dd", {}, reflection.memory || "—"),
          h("dt", {}, "Next goal"),
          h("dd", {}, reflection.next_goal || "—"),
        ),
      r.confirmation &&
        h(
          "div",
          { class: "replay-confirmation", "data-testid": "replay-confirmation", "data-approved": String(r.confirmation.approved ?? "unanswered") },
          h("div", { class: "replay-confirmation-reason" }, `Mimo asked the person because ${r.confirmation.reason}.`),
          (r.confirmation.facts?.length ?? 0) > 1 && h("ul", { class: "output-warnings" }, r.confirmation.facts!.map((f) => h("li", {}, f))),
          h("div", { class: "replay-confirmation-answer" }, confirmationText(r.confirmation)),
        ),
      this.pagesView(r),
    );
  }

  private pagesView(r: AuditRecord): HTMLElement {
    const pages = h("div", { class: "replay-pages", "data-stacked": String(this.stacked) }, this.pageView("before", "Before", r.before), this.pageView("after", "After", r.after));
    const toggle = h("button", { class: "btn btn-ghost btn-sm replay-stack", type: "button", "data-testid": "replay-stack" }, "");
    const label = () => (toggle.textContent = this.stacked ? "Side by side" : "Larger, one above the other");
    label();
    toggle.addEventListener("click", () => {
      this.stacked = !this.stacked;
      pages.dataset.stacked = String(this.stacked);
      label();
    });
    return h("div", {}, toggle, pages);
  }

  private pageView(which: "before" | "after", label: string, page: AuditPage | undefined): HTMLElement {
    const body: Array<HTMLElement | string> = [];
    if (page === undefined) {
      body.push(h("p", { class: "muted" }, which === "before" ? "No page yet: the run's first step is chosen before any page." : "No page was observed after this step."));
    } else {
      body.push(
        h("div", { class: "replay-page-title", "data-testid": `replay-${which}-title` }, page.title || "(untitled)"),
        h("div", { class: "replay-page-url", "data-testid": `replay-${which}-url`, title: page.url }, page.url),
      );
      const artifactId = page.screenshotArtifactId;
      if (artifactId === undefined) body.push(h("p", { class: "muted" }, "No screenshot was taken."));
      else
        body.push(
          outlinedShot({
            url: this.artifactUrl(artifactId),
            alt: `The page ${which} the step`,
            target: page.target,
            testIds: { shot: `replay-${which}-shot`, target: `replay-${which}-target` },
            onMissing: (frame) => frame.replaceWith(h("p", { class: "muted", "data-testid": `replay-${which}-missing` }, "The screenshot is no longer stored.")),
          }),
        );
    }
    return h("section", { class: "replay-page", "data-testid": `replay-${which}` }, h("div", { class: "panel-title" }, label), ...body);
  }

  /** A download URL for the artifact, reused while it is valid (scrubbing shows each page twice). */
  private artifactUrl(artifactId: string): Promise<string> {
    const now = Date.now();
    const known = this.urls.get(artifactId);
    if (known && known.until > now) return known.url;
    const url = this.handlers.artifactUrl(artifactId);
    this.urls.set(artifactId, { url, until: now + URL_REUSE_MS });
    // A failure is not kept: the next look asks again.
    url.catch(() => this.urls.delete(artifactId));
    return url;
  }
}
