// Step-by-step mode (seed 002 §4.1.1): each step the model chooses waits for the person's
// "Next step" before it runs; a risky step waits in either mode. Sent as `set_step_mode`; what
// the task holds comes back as `stepMode` and is shown here.
import { h } from "./dom.ts";

export class StepModePanel {
  readonly el: HTMLElement;
  private readonly box = h("input", { type: "checkbox", "data-testid": "step-by-step" });

  constructor(onChange: (stepByStep: boolean) => void) {
    this.box.addEventListener("change", () => onChange(this.box.checked));
    this.el = h(
      "section",
      { class: "panel", "data-testid": "step-mode-panel" },
      h("div", { class: "panel-head" }, h("div", { class: "panel-title" }, "Pace")),
      h("label", { class: "small" }, this.box, " Step by step: each step waits for “Next step” (here or in the extension's side panel)"),
    );
  }

  render(stepByStep: boolean): void {
    this.box.checked = stepByStep;
  }
}
