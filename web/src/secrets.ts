// The task's secrets panel: named values the model types by placeholder (`{{secret:name}}`),
// each bound to the domains where it may be typed. Values go to the server once, encrypted
// there; this panel lists names and domains only and never shows a value again.
import type { SecretInfo } from "../../protocol/ts/protocol.ts";
import { deleteSecret, listSecrets, putSecret } from "./api.ts";
import { h, replaceChildren } from "./dom.ts";

export type SecretsHandlers = {
  onSave: (name: string, value: string, domains: string[]) => Promise<void>;
  onDelete: (name: string) => void;
};

export class SecretsPanel {
  readonly el: HTMLElement;
  private readonly list = h("div", { class: "secret-list small", "data-testid": "secret-list" });
  private readonly error = h("p", { class: "small error-text", "data-testid": "secret-error" });
  private readonly name = h("input", { type: "text", placeholder: "name, e.g. github_pw", "aria-label": "Secret name", "data-testid": "secret-name", autocomplete: "off", spellcheck: "false" });
  private readonly value = h("input", { type: "password", placeholder: "value", "aria-label": "Secret value", "data-testid": "secret-value", autocomplete: "new-password" });
  private readonly domains = h("input", { type: "text", placeholder: "domains, e.g. github.com, *.example.org, http://127.0.0.1:8123", "aria-label": "Sites the secret may be typed on", "data-testid": "secret-domains", autocomplete: "off" });

  constructor(handlers: SecretsHandlers) {
    const form = h(
      "form",
      {
        class: "secret-form",
        onsubmit: (event: Event) => {
          event.preventDefault();
          const domains = this.domains.value.split(",").map((d) => d.trim()).filter((d) => d !== "");
          this.error.textContent = "";
          void handlers.onSave(this.name.value.trim(), this.value.value, domains).then(
            () => {
              // The value leaves the page: it is never kept or shown here.
              this.value.value = "";
              this.name.value = "";
            },
            (err: unknown) => (this.error.textContent = err instanceof Error ? err.message : String(err)),
          );
        },
      },
      this.name,
      this.value,
      this.domains,
      h("button", { class: "btn btn-sm btn-outline", type: "submit", "data-testid": "secret-save" }, "Save secret"),
    );
    this.onDelete = handlers.onDelete;
    this.el = h(
      "section",
      { class: "panel", "data-testid": "secrets-panel" },
      h("div", { class: "panel-head" }, h("div", { class: "panel-title" }, "Secrets")),
      h("p", { class: "muted small" }, "Mimo types a secret where the model writes {{secret:name}}, only on its domains. The model never sees the value."),
      this.list,
      form,
      this.error,
    );
    this.render([]);
  }

  private readonly onDelete: (name: string) => void;

  render(secrets: SecretInfo[]): void {
    if (secrets.length === 0) {
      replaceChildren(this.list, h("p", { class: "muted" }, "No secrets yet."));
      return;
    }
    replaceChildren(
      this.list,
      secrets.map((s) =>
        h(
          "div",
          { class: "secret-row", "data-testid": "secret-row" },
          h("code", {}, `{{secret:${s.name}}}`),
          h("span", { class: "muted" }, ` on ${s.domains.join(", ")}`),
          s.scope === "task"
            ? h("button", { class: "icon-btn", type: "button", title: `Delete ${s.name}`, "aria-label": `Delete ${s.name}`, onclick: () => this.onDelete(s.name) }, "✕")
            : h("span", { class: "muted" }, " (deployment)"),
        ),
      ),
    );
  }

  showError(message: string): void {
    this.error.textContent = message;
  }
}

export type SecretsDeps = {
  /** The deployment token, if the person gave one. */
  token(): string | null;
  /** The task open now, if any. */
  openTask(): string | null;
  /** Starts a task and opens it (its id, or null when none could be made). */
  newTask(): Promise<string | null>;
};

/** The secrets panel of the open task and what it asks of the server. */
export class Secrets {
  readonly panel: SecretsPanel;
  readonly #deps: SecretsDeps;

  constructor(deps: SecretsDeps) {
    this.#deps = deps;
    this.panel = new SecretsPanel({
      onSave: (name, value, domains) => this.save(name, value, domains),
      onDelete: (name) => void this.remove(name),
    });
  }

  /** The task's secrets: names and domains (shown if it is still the one open). */
  async load(taskId: string): Promise<void> {
    const token = this.#deps.token();
    if (!token) return;
    try {
      const secrets = await listSecrets(token, taskId);
      const open = this.#deps.openTask();
      if (open === taskId || open === null) this.panel.render(secrets);
    } catch (err) {
      this.panel.showError(err instanceof Error ? err.message : String(err));
    }
  }

  /** Stores a secret of the open task (starting one when none is open). */
  async save(name: string, value: string, domains: string[]): Promise<void> {
    const taskId = this.#deps.openTask() ?? (await this.#deps.newTask());
    if (taskId === null) return;
    await putSecret(this.#deps.token() ?? "", taskId, name, value, domains);
    await this.load(taskId);
  }

  async remove(name: string): Promise<void> {
    const taskId = this.#deps.openTask();
    const token = this.#deps.token();
    if (!taskId || !token) return;
    try {
      await deleteSecret(token, taskId, name);
    } catch (err) {
      this.panel.showError(err instanceof Error ? err.message : String(err));
    }
    await this.load(taskId);
  }
}
