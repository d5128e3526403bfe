// MCP clients: the tokens an MCP client (Claude Code, the MCP Inspector, an IDE) uses to drive
// the person's browser through `/mcp`. Each client gets its own, shown once when it is made and
// revocable on its own; the list never shows a secret.
import type { McpTokenCreated, McpTokenInfo } from "../../protocol/ts/protocol.ts";
import { h, replaceChildren } from "./dom.ts";

export type McpTokenHandlers = {
  list: () => Promise<McpTokenInfo[]>;
  /** Makes a token; rejects with the server's reason. */
  create: (name: string) => Promise<McpTokenCreated>;
  revoke: (id: string) => Promise<void>;
};

export class McpTokensPanel {
  readonly el: HTMLElement;
  private readonly list = h("ul", { class: "small", "data-testid": "mcp-token-list" });
  private readonly made = h("div", { class: "small", "data-testid": "mcp-token-made" });
  private readonly error = h("p", { class: "small error-text", "data-testid": "mcp-token-error" });
  private readonly name = h("input", { type: "text", placeholder: "client name, e.g. Claude Code", "aria-label": "MCP client name", "data-testid": "mcp-token-name", maxlength: "100" });
  private readonly handlers: McpTokenHandlers;

  constructor(handlers: McpTokenHandlers) {
    this.handlers = handlers;
    const form = h(
      "form",
      {
        class: "secret-form",
        onsubmit: (event: Event) => {
          event.preventDefault();
          void this.create();
        },
      },
      this.name,
      h("button", { class: "btn btn-sm btn-outline", type: "submit", "data-testid": "mcp-token-create" }, "Make a token"),
    );
    this.el = h(
      "section",
      { class: "panel", "data-testid": "mcp-panel" },
      h("div", { class: "panel-head" }, h("div", { class: "panel-title" }, "MCP clients")),
      h("p", { class: "muted small" }, `Let an MCP client drive this browser through ${location.origin}/mcp, with its own token (shown once).`),
      this.list,
      form,
      this.made,
      this.error,
    );
  }

  async load(): Promise<void> {
    try {
      this.render(await this.handlers.list());
    } catch (err) {
      this.showError(err);
    }
  }

  private async create(): Promise<void> {
    this.error.textContent = "";
    try {
      const made = await this.handlers.create(this.name.value.trim());
      this.name.value = "";
      const header = `Authorization: Bearer ${made.token}`;
      replaceChildren(
        this.made,
        h("p", {}, `Token for ${made.name} (shown only now):`),
        h("code", { class: "mcp-secret", "data-testid": "mcp-token-secret" }, made.token),
        h("p", { class: "muted" }, "Claude Code:"),
        h("code", { class: "mcp-secret" }, `claude mcp add --transport http mimo ${location.origin}/mcp --header "${header}"`),
      );
      await this.load();
    } catch (err) {
      this.showError(err);
    }
  }

  private render(tokens: McpTokenInfo[]): void {
    replaceChildren(
      this.list,
      ...tokens.map((t) =>
        h(
          "li",
          { "data-testid": "mcp-token" },
          `${t.name} · made ${new Date(t.createdAt).toLocaleDateString()} `,
          h(
            "button",
            {
              class: "btn btn-sm btn-outline",
              type: "button",
              "data-testid": "mcp-token-revoke",
              title: "Revoke: the client can no longer use this browser",
              onclick: () => void this.handlers.revoke(t.id).then(() => this.load(), (err: unknown) => this.showError(err)),
            },
            "Revoke",
          ),
        ),
      ),
    );
  }

  private showError(err: unknown): void {
    this.error.textContent = err instanceof Error ? err.message : String(err);
  }
}
