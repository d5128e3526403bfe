// The real extension where WebSockets are blocked (a proxy that refuses every upgrade): it falls
// back to polling over plain requests, a whole agent task runs that way, and once sockets get
// through again it switches back to one by itself.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { EventEnvelope, FrontendEvent } from "../../protocol/ts/protocol.ts";
import { newTask, WebClient } from "../support/clients.ts";
import { startProxy } from "../support/proxy.ts";
import type { SocketBlockingProxy } from "../support/proxy.ts";
import { buyTwoBlueMugs } from "../support/shopper.ts";
import { act, extensionStorage, pageAt, startHarness } from "./harness.ts";
import type { Harness } from "./harness.ts";

let h: Harness;
let proxy: SocketBlockingProxy;
before(async () => {
  h = await startHarness();
  proxy = await startProxy(h.mimo.url);
});
after(async () => {
  await proxy?.close();
  await h?.close();
});

type Status = { state: string; transport?: string };

/** Waits until the extension publishes `online` over `transport`. */
async function onlineBy(transport: "websocket" | "polling", timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let status: Status | undefined;
  while (Date.now() < deadline) {
    status = (await extensionStorage<{ connection?: Status }>(h, ["connection"])).connection;
    if (status?.state === "online" && status.transport === transport) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.fail(`never online by ${transport}: ${JSON.stringify(status)}; requests: ${proxy.requests.join(", ")}; logs: ${h.logs.join(" | ")}`);
}

describe("a network that blocks WebSockets", () => {
  it("runs a whole task by polling, then goes back to a socket once sockets get through", async () => {
    // The extension now reaches the server only through the proxy (its credential stays).
    await h.options.evaluate((url) => chrome.storage.local.set({ serverUrl: url }), proxy.url);
    await onlineBy("polling", 30_000);
    assert.ok(proxy.refused >= 3, `sockets were tried first: ${proxy.refused}`);
    assert.equal(proxy.upgraded, 0);
    await h.options.locator("#status-detail").filter({ hasText: /by polling/ }).waitFor({ timeout: 5000 });

    const shop = `${h.a}/shop/index.html?polling`;
    h.mimo.llm.script(buyTwoBlueMugs(shop));
    const taskId = await newTask(h.mimo);
    const web = await WebClient.connect(h.mimo, taskId);
    const pollsBefore = proxy.requests.filter((r) => r === "POST /api/extension/poll").length;
    web.send({ type: "user_message", content: `Open ${shop}, find the blue mug and add two to the cart` });
    const result = await web.waitFor((e) => e.type === "structuredOutput", "the task's outcome", 90_000);
    assert.ok(result.type === "structuredOutput" && result.status === "ok", JSON.stringify(result));
    const cart = await pageAt(h, `${h.a}/shop/cart.html`);
    assert.deepEqual(await cart.locator("#cart tr:not(:first-child) td").allInnerTexts(), ["Blue mug", "2"]);
    const steps = web.received.filter((e): e is Extract<FrontendEvent, { type: "toolUsed" }> & EventEnvelope => e.type === "toolUsed" && e.phase === "end");
    assert.equal(steps.length, 7);
    assert.ok(steps.every((s) => s.result?.ok), JSON.stringify(steps));
    const polls = proxy.requests.filter((r) => r === "POST /api/extension/poll").length - pollsBefore;
    assert.ok(polls > 7, `the task's actions went over polls (${polls})`);
    assert.equal(proxy.upgraded, 0, "no socket got through");
    web.ws.close();

    // Sockets get through again: the extension's next probe takes a socket, and actions go on it.
    proxy.blockSockets = false;
    await onlineBy("websocket", 30_000);
    assert.ok(proxy.upgraded >= 1);
    const pollsThen = proxy.requests.filter((r) => r === "POST /api/extension/poll").length;
    const record = await act(h, taskId, { name: "browser_wait_for_loaded", params: {} });
    assert.equal(record.state, "succeeded", JSON.stringify(record));
    // At most the poll that was held when the socket took over ends after it.
    const pollsAfter = proxy.requests.filter((r) => r === "POST /api/extension/poll").length;
    assert.ok(pollsAfter - pollsThen <= 1, `no polling once the socket is up (${pollsAfter - pollsThen} polls)`);
  });
});
