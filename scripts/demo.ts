// `make demo`: one browser task end to end, headless, with no API key — the built worker in
// workerd (Miniflare: Durable Objects, SQLite, R2), the real extension in Chromium, the fixture
// shop, and the scripted LLM server playing the model. Prints the task's event stream as it
// happens, then the cart the agent filled.
import type { EventEnvelope } from "../protocol/ts/protocol.ts";
import { pageAt, startHarness } from "../tests/browser/harness.ts";
import { newTask, WebClient } from "../tests/support/clients.ts";
import { buyTwoBlueMugs } from "../tests/support/shopper.ts";

function line(e: EventEnvelope): string | undefined {
  const seq = e.seq !== undefined ? `#${String(e.seq).padStart(3)}` : "    ";
  switch (e.type) {
    case "message":
      return `${seq} message     ${e.message.role}: ${e.message.content}`;
    case "chatDelta":
      return e.finished ? undefined : `${seq} chatDelta   ${JSON.stringify(e.delta)}`;
    case "taskStatus":
      return `${seq} taskStatus  ${e.status}${e.selectedClientId ? ` (extension ${e.selectedClientId.slice(0, 8)}…)` : ""}`;
    case "toolUsed":
      return e.phase === "start"
        ? `${seq} toolUsed    step ${e.step} start: ${JSON.stringify(e.action)} — ${e.reflection?.next_goal ?? ""}`
        : `${seq} toolUsed    step ${e.step} end:   ${e.summary ?? ""}`;
    case "pageObserved":
      return `${seq} pageObserved after step ${e.step}: ${e.title} (${e.elements} elements${e.screenshotArtifactId ? ", screenshot stored in R2" : ""})`;
    case "structuredOutput":
      return `${seq} structuredOutput ${e.status} ${JSON.stringify(e.output ?? e.error)}`;
    case "snapshotSync":
      return `${seq} snapshotSync ${e.snapshot.windows.length} windows, ${e.snapshot.tabs.length} tabs`;
    case "ready":
    case "error":
      return `${seq} ${e.type} ${JSON.stringify(e.type === "error" ? e.error : e.lastSeq)}`;
  }
}

console.log("Starting the worker in workerd, the fixture shop and Chromium with the Mimo extension…");
const h = await startHarness();
try {
  const shop = `${h.a}/shop/index.html`;
  h.mimo.llm.script(buyTwoBlueMugs(shop));
  const goal = `Open ${shop}, find the blue mug and add two to the cart`;
  const taskId = await newTask(h.mimo);
  console.log(`Worker ${h.mimo.url}, task ${taskId}\nGoal: ${goal}\n`);
  const web = await WebClient.connect(h.mimo, taskId);
  let previous: string | undefined;
  web.ws.on("message", (data) => {
    const text = line(JSON.parse(String(data)) as EventEnvelope);
    // The browser view is resent on every tab change; show it when it says something new.
    if (text !== undefined && text !== previous) console.log(text);
    previous = text;
  });
  web.send({ type: "user_message", content: goal });
  const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the task's outcome", 120_000);
  web.close();
  const cart = await pageAt(h, `${h.a}/shop/cart.html`);
  console.log(`\nThe task's tab now shows the cart: ${(await cart.locator("#cart").innerText()).replace(/\s+/g, " ")}`);
  if (outcome.type !== "structuredOutput" || outcome.status !== "ok") process.exitCode = 1;
} finally {
  await h.close();
}
