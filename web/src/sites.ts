// The task's own sites: where its runs may go (allowed) and may never go (blocked), kept by the
// server and the extension as well as the deployment's rules. Sent as `set_domains`; what the
// task holds comes back as `taskDomains` and is shown here.
import { h } from "./dom.ts";

function rules(input: HTMLInputElement): string[] {
  return input.value.split(",").map((r) => r.trim()).filter((r) => r !== "");
}

export class SitesPanel {
  readonly el: HTMLElement;
  private readonly allowed = h("input", { type: "text", placeholder: "allowed, e.g. shop.example, *.docs.example (empty: any)", "aria-label": "Allowed sites", "data-testid": "sites-allowed", autocomplete: "off", spellcheck: "false" });
  private readonly blocked = h("input", { type: "text", placeholder: "blocked, e.g. ads.example", "aria-label": "Blocked sites", "data-testid": "sites-blocked", autocomplete: "off", spellcheck: "false" });
  private readonly current = h("p", { class: "muted small", "data-testid": "sites-current" });

  constructor(onSave: (allowed: string[], blocked: string[]) => void) {
    const form = h(
      "form",
      {
        class: "secret-form",
        onsubmit: (event: Event) => {
          event.preventDefault();
          onSave(rules(this.allowed), rules(this.blocked));
        },
      },
      this.allowed,
      this.blocked,
      h("button", { class: "btn btn-sm btn-outline", type: "submit", "data-testid": "sites-save" }, "Save sites"),
    );
    this.el = h(
      "section",
      { class: "panel", "data-testid": "sites-panel" },
      h("div", { class: "panel-head" }, h("div", { class: "panel-title" }, "Sites")),
      h("p", { class: "muted small" }, "Where this task may go, on top of the deployment's rules. A host covers its subdomains; host:port only that port."),
      this.current,
      form,
    );
    this.render([], []);
  }

  render(allowed: string[], blocked: string[]): void {
    this.allowed.value = allowed.join(", ");
    this.blocked.value = blocked.join(", ");
    const parts = [allowed.length > 0 ? `only ${allowed.join(", ")}` : "any site", blocked.length > 0 ? `never ${blocked.join(", ")}` : ""];
    this.current.textContent = `This task goes to ${parts.filter((p) => p !== "").join("; ")}.`;
  }
}
