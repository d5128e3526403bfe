// The first screen's guide for a new user: every step from the token to a first task, in order,
// each ticked off as the server sees it done — the extension loaded (it connected once), the
// browser paired (online), where sites are allowed, and a task to try: the demo when the server
// has one (`make dev` with the scripted model), an example goal otherwise. It stands in the
// empty conversation until a paired browser is online and a task was asked something.

import type { ExtensionInfo, SetupInfo } from "../../protocol/ts/protocol.ts";
import { h, replaceChildren } from "./dom.ts";
import { loadExtensionSteps, pairingFields } from "./view.ts";

export type GuideHandlers = {
  /** Ask the server for a pairing code (shown here and under Browser). */
  onPair: () => void;
  /** Start a new task with `goal`. */
  onTry: (goal: string) => void;
};

type Step = { key: string; title: string; done: boolean; body: Node[] };

export class GettingStarted {
  readonly el: HTMLElement;
  private readonly handlers: GuideHandlers;
  private extensions: ExtensionInfo[] | null = null;
  private setup: SetupInfo | null = null;
  private hasTasks = false;
  private pairing: { code: string; expiresAt: number } | null = null;

  constructor(handlers: GuideHandlers) {
    this.handlers = handlers;
    this.el = h("section", { class: "guide", "data-testid": "getting-started", "aria-label": "Getting started", hidden: true });
  }

  setExtensions(list: ExtensionInfo[]): void {
    this.extensions = list;
    // A browser paired meanwhile used the code: it is not shown any more.
    if (this.paired() !== undefined) this.pairing = null;
    this.render();
  }

  setSetup(setup: SetupInfo): void {
    this.setup = setup;
    this.render();
  }

  setHasTasks(hasTasks: boolean): void {
    this.hasTasks = hasTasks;
    this.render();
  }

  showPairingCode(code: string, expiresAt: number): void {
    this.pairing = { code, expiresAt };
    this.render();
  }

  private paired(): ExtensionInfo | undefined {
    return this.extensions?.find((x) => x.paired && x.online);
  }

  private render(): void {
    // Shown once the browser list is known, until the person has a browser and a task.
    const paired = this.paired();
    this.el.hidden = this.extensions === null || (paired !== undefined && this.hasTasks);
    if (this.el.hidden) return;
    const loaded = (this.extensions ?? []).length > 0;
    const demo = this.setup?.demo;
    const steps: Step[] = [
      { key: "token", title: "Sign in to this server", done: true, body: [h("span", {}, `Signed in to ${location.origin}.`)] },
      { key: "load", title: "Load the extension", done: loaded, body: loaded ? [h("span", {}, "Chrome has the Mimo extension.")] : loadExtensionSteps() },
      {
        key: "pair",
        title: "Pair your browser",
        done: paired !== undefined,
        body:
          paired !== undefined
            ? [h("span", {}, `Paired: ${paired.name || paired.clientId}.`)]
            : this.pairing !== null
              ? [h("p", {}, "In the extension's options (they open when it is loaded), enter:"), ...pairingFields(this.pairing.code, this.pairing.expiresAt, "guide-pairing")]
              : [h("p", {}, "Mimo acts in the browser you pair with this server."), h("button", { class: "btn btn-sm btn-outline", type: "button", "data-testid": "guide-show-code", onclick: () => this.handlers.onPair() }, "Show a pairing code")],
      },
      {
        key: "sites",
        title: "Allow the sites Mimo may act on",
        done: false,
        body: [
          h("span", {}, "Mimo acts only on sites you allow. When a task needs one it waits and says so here: click Mimo's icon in Chrome's toolbar to open its side panel and press “Allow Mimo on …”. Or tick “Allow Mimo on all sites” in its options."),
        ],
      },
      {
        key: "try",
        title: demo !== undefined ? "Try the demo task" : "Try a task",
        done: this.hasTasks,
        body:
          demo !== undefined
            ? [
                h("p", {}, `Mimo opens a demo shop (${demo.url}), finds the blue mug and puts two in the cart — with the scripted model, no key needed.`),
                h("button", { class: "btn btn-sm btn-primary", type: "button", "data-testid": "guide-demo", disabled: paired === undefined, onclick: () => this.handlers.onTry(demo.goal) }, "Try the demo task"),
              ]
            : [h("span", {}, "Say what you want done in the box below, e.g. “Open wikipedia.org and find the population of Lisbon”.")],
      },
    ];
    const model = this.setup === null ? null : demo !== undefined ? scriptedNote() : h("p", { class: "guide-model muted" }, `The model: ${this.setup.model || "not configured"}.`);
    replaceChildren(
      this.el,
      h("h3", {}, "Getting started"),
      h(
        "ol",
        { class: "guide-steps" },
        steps.map((step) =>
          h(
            "li",
            { class: step.done ? "guide-step done" : "guide-step", "data-testid": `guide-${step.key}`, "data-done": String(step.done) },
            h("div", { class: "guide-step-title" }, h("span", { class: "guide-check", "aria-hidden": "true" }, step.done ? "✓" : ""), step.title, step.done && h("span", { class: "visually-hidden" }, " (done)")),
            h("div", { class: "guide-step-body" }, step.body),
          ),
        ),
      ),
      model,
    );
  }
}

/** The scripted stand-in answers with no key: what it does, and how to use a real model. */
function scriptedNote(): HTMLElement {
  return h(
    "p",
    { class: "guide-model muted", "data-testid": "guide-model" },
    "No model key is configured: a scripted stand-in answers (it runs the demo and echoes anything else). For a real model put ",
    h("code", {}, "MIMO_LLM_PROVIDER"),
    ", ",
    h("code", {}, "MIMO_LLM_MODEL"),
    " and ",
    h("code", {}, "MIMO_LLM_API_KEY"),
    " in ",
    h("code", {}, ".dev.vars"),
    " and start ",
    h("code", {}, "make dev"),
    " again (README: “Configuration”).",
  );
}
