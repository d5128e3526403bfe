// The README's example script (examples/script-api.ts), run as a person would run it: against the
// worker in Miniflare with the scripted model, carrying out the agent's actions in a Chromium of
// its own on a page of its own (the fixture shop). The task ends SUCCEEDED, the page shows what
// the agent did, and the script's screenshots are the task's evidence.
import assert from "node:assert/strict";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";
import { runTask } from "../../examples/script-api.ts";
import { api } from "../support/clients.ts";
import { CHROMIUM } from "../support/chromium.ts";
import { startMimo } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";
import { agentStep, onElement } from "../support/shopper.ts";
import { startFixtures } from "./harness.ts";

let mimo: Mimo;
let pages: Server;
let browser: Browser;
before(async () => {
  [mimo, pages, browser] = await Promise.all([startMimo(), startFixtures(""), chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] })]);
});
after(async () => {
  await browser?.close();
  await mimo?.dispose();
  await new Promise((resolve) => pages?.close(resolve));
});

describe("the example script", () => {
  it("runs a task with the script API in a browser of its own", { timeout: 90_000 }, async () => {
    const product = `http://127.0.0.1:${(pages.address() as AddressInfo).port}/shop/product.html`;
    mimo.llm.script([
      agentStep({ navigate: { url: product } }, "Nothing done yet.", "Opening the mug's page."),
      onElement("Add to cart", (index) => ({ click: { index } }), "On the mug's page."),
      onElement("Cart (1)", (index) => ({ click: { index } }), "Added one."),
      agentStep({ done: { success: true, text: "A blue mug is in the cart." } }, "In the cart."),
    ]);
    const lines: string[] = [];
    const { taskId, status } = await runTask({ server: mimo.url, token: mimo.token, goal: `Put a blue mug in the cart at ${product}`, browser, log: (line) => lines.push(line) });
    assert.equal(status, "SUCCEEDED", lines.join("\n"));
    assert.ok(lines.some((l) => /^click index=\d+: done$/.test(l)), lines.join("\n"));

    // What the script reported is the task's record: the model was shown the page it indexed…
    const requests = mimo.llm.requests().map((r) => JSON.stringify(r.body));
    assert.ok(requests.some((body) => body.includes("Add to cart")), "the model saw the script's element list");
    // …and the screenshots it took are stored as the task's evidence, downloadable.
    const records = (await (await api(mimo, `/api/task/${taskId}/actions`)).json()) as Array<{ command: { name: string }; state: string; outcome?: { result?: { artifactId?: string } } }>;
    const shot = records.find((r) => r.command.name === "browser_screenshot" && r.state === "succeeded");
    assert.ok(shot?.outcome?.result?.artifactId, JSON.stringify(records.map((r) => [r.command.name, r.state])));
    const download = (await (await api(mimo, `/api/artifacts/${shot.outcome.result.artifactId}`)).json()) as { downloadUrl: string };
    const png = new Uint8Array(await (await fetch(download.downloadUrl)).arrayBuffer());
    assert.deepEqual([...png.slice(1, 4)], [0x50, 0x4e, 0x47], "a PNG");
    // What the script saw after each step (the seed's observation) is in the audit log.
    const audit = (await (await api(mimo, `/api/task/${taskId}/audit.jsonl`)).text()).trim().split("\n").map((l) => JSON.parse(l) as { action: { type: string }; outcome?: { extracted?: { observation?: { url?: string; title?: string; visibleTextSnippet?: string } } } });
    const added = audit.find((r) => r.action.type === "click")?.outcome?.extracted?.observation;
    assert.ok(added !== undefined && added.url?.endsWith("/shop/product.html") === true, JSON.stringify(audit.map((r) => r.outcome)));
    assert.equal(added.title, "Product — Mug Shop");
    assert.match(added.visibleTextSnippet ?? "", /Quantity\s+Add to cart/);
  });
});
