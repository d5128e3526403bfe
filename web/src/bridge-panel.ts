// Files and commands on this computer (the local bridge, seed 004): whether the task's browser
// has a bridge connected (and the folder it serves), whether this task may use it, and whether
// its writes, edits and commands wait for a confirmation. Sent as `set_bridge`; what the task
// holds comes back as `bridgeMode`, the bridge itself with the browser's snapshot.
import type { BridgeInfo } from "../../protocol/ts/protocol.ts";
import { h } from "./dom.ts";

export class BridgePanel {
  readonly el: HTMLElement;
  private readonly allow = h("input", { type: "checkbox", "data-testid": "bridge-allow" });
  private readonly confirm = h("input", { type: "checkbox", "data-testid": "bridge-confirm" });
  private readonly state = h("div", { class: "small", "data-testid": "bridge-state" });

  constructor(onChange: (allow: boolean, confirm: boolean) => void) {
    const changed = () => onChange(this.allow.checked, this.confirm.checked);
    this.allow.addEventListener("change", changed);
    this.confirm.addEventListener("change", changed);
    this.el = h(
      "section",
      { class: "panel", "data-testid": "bridge-panel" },
      h("div", { class: "panel-head" }, h("div", { class: "panel-title" }, "Files and commands on this computer")),
      this.state,
      h("label", { class: "small" }, this.allow, " Let this task read and change files in the shared folder and run its allowed commands"),
      h("label", { class: "small" }, this.confirm, " Ask me before each write, edit or command"),
    );
    this.render({ allow: false, confirm: true });
    this.renderBridge(undefined);
  }

  render(mode: { allow: boolean; confirm: boolean }): void {
    this.allow.checked = mode.allow;
    this.confirm.checked = mode.confirm;
  }

  /** The bridge the task's browser is connected to, if any. */
  renderBridge(bridge: BridgeInfo | undefined): void {
    this.state.textContent =
      bridge === undefined
        ? "No bridge connected: run mimo-bridge on this computer and set it in the extension's options."
        : `Connected: ${bridge.root}${bridge.strict || bridge.allow.length > 0 ? ` (commands: ${bridge.allow.join(", ") || "none"})` : ""}`;
  }
}
