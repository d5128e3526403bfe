// The deployment's skills: SKILL.md files that say how a site is used ("to file an expense on
// our portal, …"). A run's model is given those matching its goal and page, and offered only the
// actions they allow. This panel lists them, finds them by their words, stores one from a file
// or pasted text, and deletes them.
import type { Skill } from "../../protocol/ts/protocol.ts";
import { deleteSkill, listSkills, putSkill, searchSkills } from "./api.ts";
import { h, replaceChildren } from "./dom.ts";

export type SkillsHandlers = {
  /** Stores a SKILL.md; rejects with the server's reason when it is not one. */
  onSave: (text: string) => Promise<void>;
  onDelete: (name: string) => void;
  /** The words searched for changed (empty: list them all). */
  onSearch: (words: string) => void;
};

/** A skill as listed: found by a search, it says where its text matched. */
export type ListedSkill = { skill: Skill; snippet?: string };

const TEMPLATE = `---
name: file-expense
description: File an expense claim on our portal.
sites: [https://expenses.example.com/*]
allowed-tools: [navigate, click, type, upload_file]
risk: Submitting is final; check the amount first.
---
1. Open https://expenses.example.com/claims/new
2. …`;

/** The name in a SKILL.md's front matter, which names it on the server (that checks the rest). */
export function skillName(text: string): string | null {
  const front = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text)?.[1];
  if (front === undefined) return null;
  return /^name:[ \t]*["']?([^"'\s#]+)["']?[ \t]*(?:#.*)?$/m.exec(front)?.[1] ?? null;
}

export class SkillsPanel {
  readonly el: HTMLElement;
  private readonly list = h("div", { class: "skill-list small", "data-testid": "skill-list" });
  private readonly error = h("p", { class: "small error-text", "data-testid": "skill-error" });
  private readonly search = h("input", { type: "search", class: "skill-search", placeholder: "search skills", "aria-label": "Search skills", "data-testid": "skill-search", autocomplete: "off" });
  private readonly text = h("textarea", { rows: 6, class: "skill-text", placeholder: TEMPLATE, "aria-label": "SKILL.md", "data-testid": "skill-text", spellcheck: "false" });
  private readonly file = h("input", { type: "file", accept: ".md,text/markdown,text/plain", "aria-label": "Upload a SKILL.md", "data-testid": "skill-file" });
  private readonly handlers: SkillsHandlers;

  constructor(handlers: SkillsHandlers) {
    this.handlers = handlers;
    this.search.addEventListener("input", () => handlers.onSearch(this.search.value.trim()));
    this.file.addEventListener("change", () => {
      const file = this.file.files?.[0];
      this.file.value = "";
      if (file !== undefined) void file.text().then((text) => this.save(text, () => undefined));
    });
    const form = h(
      "form",
      {
        class: "secret-form",
        onsubmit: (event: Event) => {
          event.preventDefault();
          this.save(this.text.value, () => (this.text.value = ""));
        },
      },
      this.text,
      h("button", { class: "btn btn-sm btn-outline", type: "submit", "data-testid": "skill-save" }, "Save skill"),
      h("label", { class: "muted small" }, "or upload a SKILL.md: ", this.file),
    );
    this.el = h(
      "section",
      { class: "panel", "data-testid": "skills-panel" },
      h("div", { class: "panel-head" }, h("div", { class: "panel-title" }, "Skills")),
      h("p", { class: "muted small" }, "How your sites are used, written down: runs on a skill's sites, or with a goal it matches, follow its steps and use only its allowed actions."),
      this.search,
      this.list,
      form,
      this.error,
    );
    this.render([], false);
  }

  /** Stores `text` as a skill; `saved` runs once it is. */
  private save(text: string, saved: () => void): void {
    this.error.textContent = "";
    void this.handlers.onSave(text).then(saved, (err: unknown) => this.showError(err instanceof Error ? err.message : String(err)));
  }

  /** The words searched for now. */
  get words(): string {
    return this.search.value.trim();
  }

  render(skills: ListedSkill[], searching: boolean): void {
    if (skills.length === 0) {
      replaceChildren(this.list, h("p", { class: "muted" }, searching ? "No skill matches." : "No skills yet."));
      return;
    }
    replaceChildren(
      this.list,
      skills.map(({ skill, snippet }) =>
        h(
          "div",
          { class: "skill-row", "data-testid": "skill-row", "data-skill": skill.name },
          h(
            "div",
            { class: "skill-head" },
            h("strong", {}, skill.name),
            h("button", { class: "icon-btn", type: "button", title: `Delete ${skill.name}`, "aria-label": `Delete ${skill.name}`, onclick: () => this.handlers.onDelete(skill.name) }, "✕"),
          ),
          h("div", {}, skill.description),
          snippet !== undefined && h("div", { class: "muted", "data-testid": "skill-snippet" }, snippet),
          h("div", { class: "muted" }, skill.sites.length > 0 ? `Sites: ${skill.sites.join(", ")}` : "Any site"),
          skill.allowedTools.length > 0 && h("div", { class: "muted" }, `Actions: ${skill.allowedTools.join(", ")}`),
          h("details", {}, h("summary", {}, "Steps"), skill.risk.map((risk) => h("p", { class: "skill-risk" }, `Risk: ${risk}`)), h("pre", { class: "skill-body" }, skill.body)),
        ),
      ),
    );
  }

  showError(message: string): void {
    this.error.textContent = message;
  }
}

/** The skills panel and what it asks of the server, under the person's token. */
export class Skills {
  readonly panel: SkillsPanel;
  readonly #token: () => string | null;

  constructor(token: () => string | null) {
    this.#token = token;
    this.panel = new SkillsPanel({
      onSave: (text) => this.save(text),
      onDelete: (name) => void this.remove(name),
      onSearch: () => void this.load(),
    });
  }

  /** Every skill, or those the panel's words find. */
  async load(): Promise<void> {
    const token = this.#token();
    if (!token) return;
    const words = this.panel.words;
    try {
      const listed = words === "" ? (await listSkills(token)).map((skill) => ({ skill })) : (await searchSkills(token, words)).results;
      // The words may have changed meanwhile: their own answer shows then.
      if (words === this.panel.words) this.panel.render(listed, words !== "");
    } catch (err) {
      this.panel.showError(err instanceof Error ? err.message : String(err));
    }
  }

  /** Stores a SKILL.md under the name its front matter gives. */
  async save(text: string): Promise<void> {
    const name = skillName(text);
    if (name === null) throw new Error("A SKILL.md begins with front matter between two --- lines that names it (name: my-skill).");
    await putSkill(this.#token() ?? "", name, text);
    await this.load();
  }

  async remove(name: string): Promise<void> {
    const token = this.#token();
    if (!token) return;
    try {
      await deleteSkill(token, name);
    } catch (err) {
      this.panel.showError(err instanceof Error ? err.message : String(err));
    }
    await this.load();
  }
}
