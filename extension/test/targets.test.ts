import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ambiguity, best, matchQuality, rank, roleOf, targetProblem, targetWays } from "../src/targets.ts";

/** Enough of an element for `roleOf`. */
function el(localName: string, attrs: Record<string, string> = {}) {
  return {
    localName,
    getAttribute: (name: string) => attrs[name] ?? null,
    hasAttribute: (name: string) => name in attrs,
  };
}

describe("targets named one way", () => {
  it("takes each way alone, and a label beside a role as its name", () => {
    assert.deepEqual(targetWays({ clickId: 3 }), ["clickId"]);
    assert.deepEqual(targetWays({ selector: "#go" }), ["selector"]);
    assert.deepEqual(targetWays({ label: "Save" }), ["label"]);
    assert.deepEqual(targetWays({ role: "button", label: "Save" }), ["role"]);
    for (const t of [{ clickId: 3 }, { xpath: "//a" }, { selector: "#go" }, { label: "Save" }, { role: "link" }, { role: "button", label: "Save" }]) {
      assert.equal(targetProblem(t), undefined, JSON.stringify(t));
    }
  });

  it("refuses none, two ways, and empty ones, naming the rule", () => {
    assert.match(targetProblem({})!, /exactly one way: clickId, xpath, selector, label, or role/);
    assert.match(targetProblem({ clickId: 1, label: "Save" })!, /gives clickId and label$/);
    assert.match(targetProblem({ selector: "#a", role: "button", label: "Save" })!, /gives selector and role$/);
    assert.equal(targetProblem({ label: "  " }), "the label is empty");
    assert.equal(targetProblem({ role: "button", label: "" }), "the label is empty");
    assert.equal(targetProblem({ xpath: "" }), "the xpath is empty");
  });
});

describe("matching a label", () => {
  it("ignores case and spacing, and tells exact from partial", () => {
    assert.equal(matchQuality(["  Sign\n  in "], "sign in"), "exact");
    assert.equal(matchQuality(["Sign in with Google"], "SIGN IN"), "partial");
    assert.equal(matchQuality(["", "Email address"], "email"), "partial");
    assert.equal(matchQuality(["Email", "you@example.com"], "email"), "exact");
    assert.equal(matchQuality(["Password"], "email"), undefined);
  });

  it("ranks exact before partial, a control before text, enabled before disabled", () => {
    const order = [rank("exact", true, false), rank("exact", true, true), rank("exact", false, false), rank("partial", true, false), rank("partial", false, true)];
    assert.deepEqual([...order].sort((a, b) => a - b), order);
    assert.ok(rank("exact", false, true) < rank("partial", true, false));
  });

  it("keeps only the best, and leaves out what holds an equal match when asked to", () => {
    const inside = (outer: string, inner: string) => inner.startsWith(outer) && inner !== outer;
    assert.deepEqual(best([{ item: "a", rank: 2 }, { item: "b", rank: 0 }, { item: "c", rank: 1 }], inside), ["b"]);
    assert.deepEqual(best([{ item: "a", rank: 0 }, { item: "ab", rank: 0 }], inside), ["ab"]);
    assert.deepEqual(best([{ item: "a", rank: 0 }, { item: "ab", rank: 0 }]), ["a", "ab"]);
    assert.deepEqual(best([{ item: "a", rank: 0 }, { item: "b", rank: 0 }], inside), ["a", "b"]);
    assert.deepEqual(best([], inside), []);
  });

  it("names the candidates of an ambiguity, and how many more", () => {
    const two = ambiguity('label "Delete"', 2, [
      { tag: "button", text: "Delete", role: "button" },
      { tag: "a", text: "Delete", role: "link" },
    ]);
    assert.equal(two, '2 elements fit label "Delete" equally well: <button> "Delete" (button), <a> "Delete" (link). Name one more precisely (a longer label, a role with a label, or a selector)');
    const many = ambiguity("role listitem", 8, Array.from({ length: 8 }, (_, i) => ({ tag: "li", text: `item ${i}` })));
    assert.match(many, /<li> "item 4", and 3 more\./);
    assert.doesNotMatch(many, /item 5/);
  });
});

describe("ARIA roles", () => {
  it("reads the role attribute first, its first token", () => {
    assert.equal(roleOf(el("div", { role: "Button" })), "button");
    assert.equal(roleOf(el("span", { role: "switch checkbox" })), "switch");
    assert.equal(roleOf(el("a", { href: "/", role: "tab" })), "tab");
  });

  it("knows the roles HTML gives", () => {
    assert.equal(roleOf(el("a", { href: "/x" })), "link");
    assert.equal(roleOf(el("a")), undefined);
    assert.equal(roleOf(el("button")), "button");
    assert.equal(roleOf(el("input", { type: "submit" })), "button");
    assert.equal(roleOf(el("input")), "textbox");
    assert.equal(roleOf(el("input", { type: "EMAIL" })), "textbox");
    assert.equal(roleOf(el("input", { type: "password" })), "textbox");
    assert.equal(roleOf(el("input", { type: "text", list: "cities" })), "combobox");
    assert.equal(roleOf(el("input", { type: "search" })), "searchbox");
    assert.equal(roleOf(el("input", { type: "checkbox" })), "checkbox");
    assert.equal(roleOf(el("input", { type: "radio" })), "radio");
    assert.equal(roleOf(el("input", { type: "hidden" })), undefined);
    assert.equal(roleOf(el("input", { type: "file" })), undefined);
    assert.equal(roleOf(el("textarea")), "textbox");
    assert.equal(roleOf(el("select")), "combobox");
    assert.equal(roleOf(el("select", { multiple: "" })), "listbox");
    assert.equal(roleOf(el("select", { size: "4" })), "listbox");
    assert.equal(roleOf(el("h3")), "heading");
    assert.equal(roleOf(el("img", { alt: "" })), "presentation");
    assert.equal(roleOf(el("img", { alt: "Logo" })), "img");
    assert.equal(roleOf(el("div")), undefined);
  });
});
