// A SKILL.md's name, read by the skills panel to know where to store it (the server reads and
// checks the whole file).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { skillName } from "../src/skills.ts";

describe("a SKILL.md's name", () => {
  it("is the name of its front matter, quoted or not, with or without a comment", () => {
    const shipped = readFileSync(new URL("../../tests/fixtures/skills/file-expense/SKILL.md", import.meta.url), "utf8");
    assert.equal(skillName(shipped), "file-expense");
    assert.equal(skillName("---\r\ndescription: d\r\nname: 'mug-shop' # the shop\r\n---\r\nsteps"), "mug-shop");
    assert.equal(skillName('\uFEFF---\nname: "a"\n---\n'), "a");
  });

  it("is missing without front matter, or when only the steps name one", () => {
    assert.equal(skillName("name: x\nsteps"), null);
    assert.equal(skillName("---\ndescription: d\n---\nname: x"), null);
    assert.equal(skillName("---\nname: x\nno end"), null);
  });
});
