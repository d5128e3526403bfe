// Webhooks: an integrator's server hears the tasks' events (created, each finished step,
// confirmations, pause and resume, the ending), signed the Standard Webhooks way. Each webhook's
// secret is shown once, when it is made or rotated; its delivery log shows where each event
// stands (status, attempts, next try), and any delivery can be sent again.
import type { WebhookCreate, WebhookDelivery, WebhookEventType, WebhookInfo, WebhookSecret } from "../../protocol/ts/protocol.ts";
import { h, replaceChildren } from "./dom.ts";

export type WebhookHandlers = {
  list: () => Promise<WebhookInfo[]>;
  /** Makes a webhook; rejects with the server's reason (a refused host among them). */
  create: (create: WebhookCreate) => Promise<WebhookSecret>;
  remove: (id: string) => Promise<void>;
  rotate: (id: string) => Promise<WebhookSecret>;
  deliveries: (id: string) => Promise<WebhookDelivery[]>;
  resend: (deliveryId: number) => Promise<void>;
};

/** Every event, as people read it (a Record, so a new event type must be named here). */
const EVENTS: Record<WebhookEventType, string> = {
  "task.created": "created",
  "task.step_finished": "step finished",
  "task.confirmation_requested": "confirmation asked",
  "task.confirmation_answered": "confirmation answered",
  "task.paused": "paused",
  "task.resumed": "resumed",
  "task.completed": "completed",
  "task.failed": "failed",
  "task.canceled": "canceled",
};

export class WebhooksPanel {
  readonly el: HTMLElement;
  private readonly list = h("ul", { class: "small", "data-testid": "webhook-list" });
  private readonly made = h("div", { class: "small", "data-testid": "webhook-made" });
  private readonly error = h("p", { class: "small error-text", "data-testid": "webhook-error" });
  private readonly url = h("input", { type: "url", placeholder: "https://hooks.example.com/mimo", "aria-label": "Receiver URL", "data-testid": "webhook-url", maxlength: "2048" });
  private readonly task = h("input", { type: "text", placeholder: "only this task id (optional)", "aria-label": "Only this task", "data-testid": "webhook-task" });
  private readonly boxes = Object.keys(EVENTS).map((type) => h("input", { type: "checkbox", value: type, "data-testid": `webhook-event-${type}` }));
  private readonly handlers: WebhookHandlers;
  /** The webhook whose log is open, if one is. */
  private open: string | undefined;
  /** A reload of the open log while some of its deliveries are pending. */
  private refresh: ReturnType<typeof setTimeout> | undefined;

  constructor(handlers: WebhookHandlers) {
    this.handlers = handlers;
    const events = h(
      "fieldset",
      { class: "small" },
      h("legend", {}, "Events (none checked: all)"),
      ...this.boxes.map((box) => h("label", {}, box, ` ${EVENTS[box.value as WebhookEventType]} `)),
    );
    const form = h(
      "form",
      {
        class: "secret-form",
        onsubmit: (event: Event) => {
          event.preventDefault();
          void this.create();
        },
      },
      this.url,
      this.task,
      events,
      h("button", { class: "btn btn-sm btn-outline", type: "submit", "data-testid": "webhook-create" }, "Add webhook"),
    );
    this.el = h(
      "section",
      { class: "panel", "data-testid": "webhooks-panel" },
      h("div", { class: "panel-head" }, h("div", { class: "panel-title" }, "Webhooks")),
      h("p", { class: "muted small" }, "Tell your server about tasks: signed with Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature), retried for a day, in order per task."),
      this.list,
      form,
      this.made,
      this.error,
    );
  }

  async load(): Promise<void> {
    try {
      await this.render(await this.handlers.list());
    } catch (err) {
      this.showError(err);
    }
  }

  private async create(): Promise<void> {
    this.error.textContent = "";
    const create: WebhookCreate = {
      url: this.url.value.trim(),
      events: this.boxes.filter((b) => b.checked).map((b) => b.value as WebhookEventType),
    };
    const task = this.task.value.trim();
    if (task) create.taskId = task;
    try {
      this.showSecret(await this.handlers.create(create));
      this.url.value = "";
      this.task.value = "";
      for (const box of this.boxes) box.checked = false;
      await this.load();
    } catch (err) {
      this.showError(err);
    }
  }

  private showSecret(made: WebhookSecret): void {
    replaceChildren(
      this.made,
      h("p", {}, `Signing secret for ${made.webhook.url} (shown only now):`),
      h("code", { class: "mcp-secret", "data-testid": "webhook-secret" }, made.secret),
    );
  }

  private async render(hooks: WebhookInfo[]): Promise<void> {
    const items = await Promise.all(hooks.map((w) => this.item(w)));
    replaceChildren(this.list, ...items);
  }

  private async item(w: WebhookInfo): Promise<HTMLElement> {
    const act = (label: string, testid: string, title: string, run: () => Promise<void>) =>
      h("button", { class: "btn btn-sm btn-outline", type: "button", "data-testid": testid, title, onclick: () => void run().catch((err: unknown) => this.showError(err)) }, label);
    const events = w.events.length ? w.events.map((e) => EVENTS[e]).join(", ") : "all events";
    const scope = w.taskId ? ` · task ${w.taskId.slice(0, 8)}` : "";
    const overlap = w.previousSecretUntil ? ` · old secret valid until ${new Date(w.previousSecretUntil).toLocaleString()}` : "";
    const li = h(
      "li",
      { "data-testid": "webhook", "data-webhook-id": w.id },
      h("span", { "data-testid": "webhook-target" }, `${w.url} · ${events}${scope}${overlap} `),
      act(this.open === w.id ? "Hide deliveries" : "Deliveries", "webhook-deliveries", "The delivery log", async () => {
        this.open = this.open === w.id ? undefined : w.id;
        await this.load();
      }),
      act("Rotate secret", "webhook-rotate", "A new secret; the old one still signs for a day", async () => {
        this.showSecret(await this.handlers.rotate(w.id));
        await this.load();
      }),
      act("Delete", "webhook-delete", "Stop sending to this receiver", async () => {
        await this.handlers.remove(w.id);
        await this.load();
      }),
    );
    if (this.open === w.id) {
      const deliveries = await this.handlers.deliveries(w.id);
      li.append(this.log(deliveries));
      // Pending ones change as they are tried: look again shortly, while the log is open.
      clearTimeout(this.refresh);
      if (deliveries.some((d) => d.status === "pending")) this.refresh = setTimeout(() => void this.load(), 1000);
    }
    return li;
  }

  private log(deliveries: WebhookDelivery[]): HTMLElement {
    const when = (ms: number | null) => (ms === null ? "—" : new Date(ms).toLocaleTimeString());
    const rows = deliveries.map((d) =>
      h(
        "tr",
        { "data-testid": "webhook-delivery", "data-status": d.status },
        h("td", {}, d.type),
        h("td", {}, `${d.taskId.slice(0, 8)} #${d.seq}`),
        h("td", { "data-testid": "delivery-status" }, d.status),
        h("td", { "data-testid": "delivery-attempts" }, String(d.attempts)),
        h("td", {}, d.status === "pending" ? when(d.nextAttemptAt) : "—"),
        h("td", {}, d.lastError ?? (d.responseStatus === null ? "" : `HTTP ${d.responseStatus}`)),
        h(
          "td",
          {},
          h(
            "button",
            {
              class: "btn btn-sm btn-outline",
              type: "button",
              "data-testid": "delivery-resend",
              title: "Send it again (same webhook-id)",
              onclick: () => void this.handlers.resend(d.id).then(() => this.load(), (err: unknown) => this.showError(err)),
            },
            "Send again",
          ),
        ),
      ),
    );
    return h(
      "table",
      { class: "small", "data-testid": "webhook-log" },
      h("thead", {}, h("tr", {}, ...["event", "task", "status", "attempts", "next try", "last answer", ""].map((c) => h("th", {}, c)))),
      h("tbody", {}, ...rows),
    );
  }

  private showError(err: unknown): void {
    this.error.textContent = err instanceof Error ? err.message : String(err);
  }
}
