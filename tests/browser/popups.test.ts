// Popup windows end to end: a page of the task opens a window with features (a sign-in popup,
// as OAuth providers do) — it joins the task like a tab and the run goes on in it; when it closes
// itself the run goes on in the page that opened it.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { EventEnvelope, FrontendEvent } from "../../protocol/ts/protocol.ts";
import { newTask, WebClient } from "../support/clients.ts";
import type { ScriptTurn } from "../llm-server/server.ts";
import { agentStep, indexOf } from "../support/shopper.ts";
import { logged, pageAt, startHarness } from "./harness.ts";
import type { Harness } from "./harness.ts";

let h: Harness;
before(async () => (h = await startHarness()));
after(async () => {
  await h?.close();
});

type ToolUsed = Extract<FrontendEvent, { type: "toolUsed" }>;

/**
 * A model that signs in through the provider's popup, by the page it is shown. `thinkInPopupMs`:
 * it takes that long to decide, the first time it is shown the popup.
 */
function signInPolicy(start: string, thinkInPopupMs = 0): ScriptTurn[] {
  let thought = false;
  const decide = ({ userText }: { userText: string }): ScriptTurn => {
    const url = /^url: (.*)$/m.exec(userText)?.[1] ?? "";
    const elements = /<interactive_elements>\n([\s\S]*?)\n<\/interactive_elements>/.exec(userText)?.[1] ?? "";
    if (elements.includes("Sign out ann")) return agentStep({ done: { success: true, text: "Signed in as Ann." } }, "Signed in.");
    if (url.includes("popup-auth.html")) {
      const stallMs = thought ? 0 : thinkInPopupMs;
      thought = true;
      return { ...agentStep({ click: { index: indexOf(userText, "Continue as Ann") } }, "In the provider's popup."), stallMs };
    }
    if (url.includes("popup-login.html")) return agentStep({ click: { index: indexOf(userText, "Sign in with Provider") } }, "On the shop.");
    return agentStep({ navigate: { url: start } }, "Nothing done yet.");
  };
  return Array.from({ length: 12 }, () => ({ respond: decide }));
}

describe("popup windows", () => {
  for (const hops of [0, 2]) {
    it(`a sign-in popup${hops > 0 ? ` that redirects ${hops} times` : ""} joins the task; once it closes itself the run goes on in its opener`, { timeout: 90_000 }, async () => {
      const start = `${h.a}/popup-login.html?hops=${hops}`;
      h.mimo.llm.reset();
      h.mimo.llm.script(signInPolicy(start));
      const taskId = await newTask(h.mimo);
      const web = await WebClient.connect(h.mimo, taskId);
      web.send({ type: "user_message", content: `Sign in at ${start}` });
      const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the task's outcome", 60_000);
      const steps = web.received.filter((e): e is ToolUsed & EventEnvelope => e.type === "toolUsed" && e.phase === "end");
      assert.equal((outcome as { status?: string }).status, "ok", JSON.stringify(steps.map((s) => s.summary)));
      const opener = await pageAt(h, start);
      await logged(opener, "popup:signed-in:ann");
      // The popup's click was a step of the run (in the popup), and the run's next page was the opener.
      const pages = web.received.filter((e) => e.type === "pageObserved").map((e) => (e as { url: string }).url);
      assert.ok(pages.some((u) => u.includes("popup-auth.html")), pages.join("\n"));
      assert.match(pages.at(-1)!, /popup-login\.html/);
      // The model was told where the task went on.
      assert.ok(steps.some((s) => /closed itself after browser_click; the task goes on in tab \d+/.test(s.summary ?? "")), JSON.stringify(steps.map((s) => s.summary)));
      await web.close();
    });
  }

  it("a popup the person closes: the run goes on in its opener", { timeout: 90_000 }, async () => {
    const start = `${h.a}/popup-login.html?hops=0&closed`;
    h.mimo.llm.reset();
    h.mimo.llm.script(signInPolicy(start, 3_000));
    const taskId = await newTask(h.mimo);
    const web = await WebClient.connect(h.mimo, taskId);
    web.send({ type: "user_message", content: `Sign in at ${start}` });
    await web.waitFor((e) => e.type === "pageObserved" && (e as { url: string }).url.includes("popup-auth.html"), "the popup observed", 30_000);
    // While the model thinks, the person closes the popup.
    const popup = await pageAt(h, `${h.a}/popup-auth.html?hops=0`);
    await popup.close();
    const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the task's outcome", 60_000);
    assert.equal((outcome as { status?: string }).status, "ok", JSON.stringify(web.received.filter((e) => e.type === "toolUsed" && (e as { phase: string }).phase === "end").map((e) => (e as { summary?: string }).summary).concat(JSON.stringify(outcome))));
    const pages = web.received.filter((e) => e.type === "pageObserved").map((e) => (e as { url: string }).url);
    const closedAt = pages.findIndex((u) => u.includes("popup-auth.html"));
    assert.match(pages[closedAt + 1]!, /popup-login\.html/, `after the popup closed, the opener: ${pages.join("\n")}`);
    await logged(await pageAt(h, start), "popup:signed-in:ann");
    await web.close();
  });

  it("a popup the person closes while it is being looked at: the look is taken in its opener", { timeout: 90_000 }, async () => {
    // The popup is still loading (a slow frame) when the run looks at it, and the look waits
    // for the load: the person closes it meanwhile.
    const start = `${h.a}/popup-login.html?hops=0&slow=20000`;
    h.mimo.llm.reset();
    h.mimo.llm.script(signInPolicy(start));
    const taskId = await newTask(h.mimo);
    const web = await WebClient.connect(h.mimo, taskId);
    web.send({ type: "user_message", content: `Sign in at ${start}` });
    const popup = await pageAt(h, `${h.a}/popup-auth.html?hops=0&slow=20000`, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await popup.close();
    const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the task's outcome", 60_000);
    assert.equal((outcome as { status?: string }).status, "ok", JSON.stringify(outcome));
    // The slow popup was never shown to the model: the look went on in the opener.
    const pages = web.received.filter((e) => e.type === "pageObserved").map((e) => (e as { url: string }).url);
    assert.ok(!pages.some((u) => u.includes("popup-auth.html?hops=0&slow=")), pages.join("\n"));
    await logged(await pageAt(h, start), "popup:signed-in:ann");
    await web.close();
  });
});
