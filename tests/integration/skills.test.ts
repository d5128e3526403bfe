// Skills against the built worker in Miniflare: SKILL.md files stored through the API (the
// library's SQLite and its FTS5 index), found by their words, refused when they are not skills,
// and a run whose model is given the skill of its goal and page (`<skills>`), offered only the
// actions the skill allows, and whose steps name the skill that guided them.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import type { BrowserAction, EventEnvelope, Skill, SkillList, SkillSearch } from "../../protocol/ts/protocol.ts";
import { api, ExtensionClient, newTask, WebClient } from "../support/clients.ts";
import { ownRuntime, ROOT } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";
import { agentStep } from "../support/shopper.ts";

let mimo: Mimo;
ownRuntime({}, (m) => (mimo = m));

/** A shipped example skill's SKILL.md. */
function example(name: string): Promise<string> {
  return readFile(path.join(ROOT, "tests/fixtures/skills", name, "SKILL.md"), "utf8");
}

function request(method: string, route: string, body?: string, token: string | null = mimo.token): Promise<Response> {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  if (body !== undefined) headers["content-type"] = "text/markdown";
  return fetch(`${mimo.url}${route}`, { method, headers, body });
}

async function search(words: string): Promise<SkillSearch> {
  const res = await api(mimo, `/api/skills/search?q=${encodeURIComponent(words)}`);
  assert.equal(res.status, 200);
  return (await res.json()) as SkillSearch;
}

describe("the skill library", () => {
  it("stores SKILL.md files, lists, finds them by their words, and refuses what is not one", async () => {
    // Uploaded as it is written: 201 when new, with the skill as read.
    const created = await request("PUT", "/api/skills/file-expense", await example("file-expense"));
    assert.equal(created.status, 201, await created.clone().text());
    const skill = (await created.json()) as Skill;
    assert.equal(skill.name, "file-expense");
    assert.deepEqual(skill.sites, ["https://expenses.example.com/*"]);
    assert.deepEqual(skill.allowedTools, ["navigate", "click", "type", "select_option", "upload_file", "scroll", "wait_for"]);
    assert.equal(skill.risk.length, 2);
    assert.match(skill.body, /^1\. Open https:\/\/expenses\.example\.com\/claims\/new/);
    assert.equal((await request("PUT", "/api/skills/careful-payments", await example("careful-payments"))).status, 201);
    // Stored again: replaced (200), still one.
    assert.equal((await request("PUT", "/api/skills/file-expense", await example("file-expense"))).status, 200);

    const list = (await (await api(mimo, "/api/skills")).json()) as SkillList;
    assert.deepEqual(list.skills.map((s) => s.name), ["careful-payments", "file-expense"]);
    const one = await api(mimo, "/api/skills/file-expense");
    assert.equal(one.status, 200);
    const got = (await one.json()) as Skill;
    assert.deepEqual({ ...got, updatedAt: 0 }, { ...skill, updatedAt: 0 });
    assert.ok(got.updatedAt >= skill.updatedAt, "the time it was stored again");

    // A word of its steps finds it ("receipts" the stem of "receipt"), with where it matched.
    const found = await search("where do the receipts go?");
    assert.deepEqual(found.results.map((r) => r.skill.name), ["file-expense"]);
    assert.match(found.results[0]!.snippet, /\[receipt\]/);
    // Any word matches; the skill named or described by it first.
    const both = await search("expense IBAN");
    assert.deepEqual(both.results.map((r) => r.skill.name), ["file-expense", "careful-payments"]);
    assert.deepEqual((await search("")).results, []);
    assert.deepEqual((await search("\" OR NEAR(")).results, [], "query syntax is never passed through");

    // Not a skill: the reason, and nothing stored.
    const noFrontMatter = await request("PUT", "/api/skills/broken", "1. Just steps.");
    assert.equal(noFrontMatter.status, 400);
    const error = (await noFrontMatter.json()) as { code: string; message: string };
    assert.equal(error.code, "SCHEMA_VALIDATION_FAILED");
    assert.match(error.message, /front matter/);
    const badYaml = await request("PUT", "/api/skills/broken", "---\nname: broken\ndescription: [unclosed\n---\nSteps.");
    assert.equal(badYaml.status, 400);
    assert.match(((await badYaml.json()) as { message: string }).message, /does not parse: line 2/);
    const badTool = await request("PUT", "/api/skills/broken", "---\nname: broken\ndescription: d\nallowed-tools: [click, teleport]\n---\nSteps.");
    assert.match(((await badTool.json()) as { message: string }).message, /"teleport", which is not an action/);
    const otherName = await request("PUT", "/api/skills/broken", "---\nname: fixed\ndescription: d\n---\nSteps.");
    assert.match(((await otherName.json()) as { message: string }).message, /stored as "broken"/);
    const badName = await request("PUT", "/api/skills/Bad_Name", await example("file-expense"));
    assert.equal(badName.status, 400);
    const tooLarge = await request("PUT", "/api/skills/huge", `---\nname: huge\ndescription: d\n---\n${"x".repeat(20_000)}`);
    assert.equal(tooLarge.status, 413);
    assert.equal((await api(mimo, "/api/skills/broken")).status, 422);
    assert.equal(((await (await api(mimo, "/api/skills/broken")).json()) as { code: string }).code, "TARGET_NOT_FOUND");
    assert.equal(((await (await api(mimo, "/api/skills")).json()) as SkillList).skills.length, 2);

    // The deployment's token is needed.
    assert.equal((await request("GET", "/api/skills", undefined, null)).status, 401);
    assert.equal((await request("PUT", "/api/skills/x", "---\nname: x\ndescription: d\n---\ns", "wrong")).status, 401);

    // Deleted: gone from the list and from search.
    assert.equal((await request("DELETE", "/api/skills/careful-payments")).status, 204);
    assert.equal((await request("DELETE", "/api/skills/careful-payments")).status, 422);
    assert.deepEqual((await search("IBAN")).results, []);
  });
});

/** Answers every action as an extension would, the pages at `url`. */
function standIn(ext: ExtensionClient, url: string): void {
  ext.ws.on("message", (data) => {
    const frame = JSON.parse(String(data)) as { type: string; action?: BrowserAction };
    if (frame.type !== "browser_action" || frame.action === undefined) return;
    const action = frame.action;
    const base = { actionId: action.actionId, attempt: action.attempt, taskId: action.taskId };
    ext.send({ type: "action_ack", ...base });
    const result: unknown = {
      task_start: { tabId: 11, windowId: 3, url },
      // No screenshot: the page is read as text.
      browser_observe: {
        screenshot: { error: { code: "CDP_UNAVAILABLE", message: "the screenshot is not played", retryable: false }, partial: false, warnings: [] },
        readability: { result: { text: "New claim. Category, date, amount, purpose.", title: "New claim", contentLengthBytes: 43, truncated: false }, partial: false, warnings: [] },
        domIndex: { result: { elements: [{ clickId: 1, tag: "select", text: "Category", frameId: 0 }], text: "[1]<select>Category</select>", url, title: "New claim", scrollX: 0, scrollY: 0 }, partial: false, warnings: [] },
      },
    }[action.name as string];
    if (result === undefined) {
      ext.send({ type: "action_result", outcome: { ...base, status: "error", error: { code: "CDP_UNAVAILABLE", message: `${action.name} is not played`, retryable: false }, warnings: [] } });
    } else {
      ext.send({ type: "action_result", outcome: { ...base, status: "ok", result, warnings: [] } });
    }
  });
}

type OpenAiRequest = {
  messages: Array<{ role: string; content: string }>;
  tools: Array<{ function: { parameters: { properties: { action: { oneOf: Array<{ required: string[] }> } } } } }>;
};

/** The actions a recorded model request offers. */
function offered(body: OpenAiRequest): string[] {
  return body.tools[0]!.function.parameters.properties.action.oneOf.map((variant) => variant.required[0]!);
}

function skillsBlock(body: OpenAiRequest): string | undefined {
  return body.messages.find((m) => m.role === "system" && m.content.startsWith("<skills>"))?.content;
}

describe("a run guided by a skill", () => {
  it("puts the skill of its goal and page into the prompt, offers only its actions and names it on each step", async () => {
    assert.equal((await request("PUT", "/api/skills/file-expense", await example("file-expense"))).status < 300, true);
    assert.equal((await request("PUT", "/api/skills/mug-shop", await example("mug-shop"))).status, 201);
    const claimPage = "https://expenses.example.com/claims/new";
    const ext = await ExtensionClient.connect(mimo, "stand-in-skills");
    standIn(ext, claimPage);
    mimo.llm.reset();
    mimo.llm.script([
      agentStep({ navigate: { url: claimPage } }, "Opening the portal."),
      agentStep({ done: { success: true, text: "The claim form is open." } }, "The form is open."),
    ]);
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    await web.waitFor((e) => e.type === "taskStatus" && e.selectedClientId === ext.clientId, "bound to the stand-in");
    web.send({ type: "user_message", content: "File my taxi expense of 23.50 from yesterday" });
    const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 20_000);
    assert.ok(outcome.type === "structuredOutput" && outcome.status === "ok", JSON.stringify(outcome));

    // Both model calls (before any page: found by the goal's words; on the portal: by its site)
    // had the skill, and offered only its actions and done — not scroll_to, say, nor click_at.
    const bodies = mimo.llm.requests().map((r) => r.body as OpenAiRequest);
    assert.equal(bodies.length, 2);
    for (const body of bodies) {
      const block = skillsBlock(body) ?? "";
      assert.ok(block.includes('<skill name="file-expense">'), JSON.stringify(body.messages.map((m) => [m.role, (m.content ?? "").slice(0, 300)])));
      assert.ok(block.includes("Attach the receipt with upload_file"));
      assert.ok(!block.includes("mug-shop"), "not the shop's skill");
      assert.deepEqual(offered(body).sort(), ["click", "done", "navigate", "scroll", "select_option", "type", "upload_file", "wait_for"]);
    }

    // Each step names the skill that guided it, in the history and in the audit log.
    const steps = web.received.filter((e): e is Extract<EventEnvelope, { type: "toolUsed" }> => e.type === "toolUsed" && e.phase === "start");
    assert.deepEqual(steps.map((s) => [s.action, s.skill]), [
      [{ navigate: { url: claimPage } }, "file-expense"],
      [{ done: { success: true, text: "The claim form is open." } }, "file-expense"],
    ]);
    const audit = (await (await api(mimo, `/api/task/${taskId}/audit.jsonl`)).text()).trim().split("\n").map((l) => JSON.parse(l) as { action: { skill?: string } });
    assert.deepEqual(audit.map((r) => r.action.skill), ["file-expense", "file-expense"]);
    await Promise.all([ext.close(), web.close()]);
  });

  it("refuses an action the skill does not allow, and leaves runs on other sites unguided", async () => {
    const shopPage = "http://127.0.0.1:8123/shop/index.html";
    const ext = await ExtensionClient.connect(mimo, "stand-in-shop");
    standIn(ext, shopPage);
    mimo.llm.reset();
    mimo.llm.script([
      agentStep({ navigate: { url: shopPage } }, "Opening the shop."),
      // click_at is not among mug-shop's actions: refused before anything is sent.
      agentStep({ click_at: { x: 10, y: 10 } }, "Clicking blindly."),
      agentStep({ done: { success: true, text: "Done." } }, "Done."),
    ]);
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    await web.waitFor((e) => e.type === "taskStatus" && e.selectedClientId === ext.clientId, "bound to the stand-in");
    web.send({ type: "user_message", content: "Look around" });
    await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 20_000);

    const bodies = mimo.llm.requests().map((r) => r.body as OpenAiRequest);
    // "Look around" matches no skill: the first call has none and offers every action; on the
    // shop's page its skill comes in.
    assert.equal(skillsBlock(bodies[0]!), undefined);
    assert.ok(offered(bodies[0]!).includes("click_at"));
    assert.ok(skillsBlock(bodies[1]!)?.includes('<skill name="mug-shop">'));
    assert.ok(!offered(bodies[1]!).includes("click_at"));
    const refused = web.received.find((e) => e.type === "toolUsed" && e.phase === "end" && e.action !== undefined && "click_at" in e.action);
    assert.ok(refused?.type === "toolUsed");
    assert.equal(refused.result?.error?.code, "PERMISSION_DENIED");
    assert.match(refused.result!.error!.message, /skills in use \(mug-shop\) allow/);
    const clicks = ext.received.filter((m) => m.type === "browser_action" && m.action.name === "browser_click_at");
    assert.deepEqual(clicks, [], "nothing was sent");
    const steps = web.received.filter((e) => e.type === "toolUsed" && e.phase === "start").map((e) => (e.type === "toolUsed" ? e.skill : null));
    assert.deepEqual(steps, [undefined, undefined, "mug-shop"]);
    await Promise.all([ext.close(), web.close()]);
  });
});
