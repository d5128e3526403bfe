// The web app's Webhooks panel in real Chromium against the built worker in Miniflare: a
// receiver refused with the server's reason, a webhook made with its secret shown once, a
// task's creation delivered and checked with `standardwebhooks`, the delivery log and its
// "Send again" (same webhook-id), a rotated secret, and the webhook deleted.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { chromium } from "playwright-core";
import type { Browser, BrowserContext } from "playwright-core";
import { CHROMIUM, chromiumArgs } from "../support/chromium.ts";
import { newTask } from "../support/clients.ts";
import { startMimo } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";
import { Receiver, verify } from "../support/webhooks.ts";
import { signedInApp } from "./harness.ts";

let mimo: Mimo;
let browser: Browser;
let context: BrowserContext;
const receiver = new Receiver();

before(async () => {
  await receiver.start();
  mimo = await startMimo({ bindings: { WEBHOOK_ALLOWED_HOSTS: "hooks.example.com", WEBHOOK_ALLOW_LOOPBACK: "true" } });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs() });
  context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
});

after(async () => {
  await context?.close();
  await browser?.close();
  await mimo?.dispose();
  await receiver.close();
});

it("makes a webhook in the web app, shows its log, sends a delivery again, rotates and deletes it", { timeout: 60_000 }, async () => {
  const app = await signedInApp(context, `${mimo.url}/`, mimo.token);
  const panel = app.getByTestId("webhooks-panel");

  // A private address is refused, with the server's reason, and nothing is listed.
  await panel.getByTestId("webhook-url").fill("http://10.0.0.1/hook");
  await panel.getByTestId("webhook-create").click();
  await panel.getByTestId("webhook-error").filter({ hasText: "webhook receiver refused" }).waitFor();
  assert.equal(await panel.getByTestId("webhook").count(), 0);

  await panel.getByTestId("webhook-url").fill(receiver.url);
  await panel.getByTestId("webhook-event-task.created").check();
  await panel.getByTestId("webhook-create").click();
  const secret = (await panel.getByTestId("webhook-secret").textContent()) ?? "";
  assert.match(secret, /^whsec_/);
  const item = panel.getByTestId("webhook").filter({ hasText: receiver.url });
  await item.filter({ hasText: "created" }).waitFor();
  assert.equal(await panel.getByTestId("webhook-error").textContent(), "");

  const taskId = await newTask(mimo);
  await receiver.waitFor("the task's creation", () => receiver.delivered().length === 1);
  const first = receiver.requests[0]!;
  assert.equal(first.payload.type, "task.created");
  assert.equal(first.payload.data.taskId, taskId);
  verify(secret, first);

  // The log: delivered at the first attempt; "Send again" sends the same id once more.
  await item.getByTestId("webhook-deliveries").click();
  const row = item.getByTestId("webhook-delivery").first();
  await row.getByTestId("delivery-status").filter({ hasText: "delivered" }).waitFor();
  assert.equal(await row.getByTestId("delivery-attempts").textContent(), "1");
  await row.getByTestId("delivery-resend").click();
  await receiver.waitFor("the delivery sent again", () => receiver.requests.length === 2);
  assert.equal(receiver.requests[1]!.id, first.id);
  await row.getByTestId("delivery-attempts").filter({ hasText: "2" }).waitFor();

  // Rotated: a new secret, shown once; both sign the next delivery.
  await item.getByTestId("webhook-rotate").click();
  await panel.getByTestId("webhook-secret").filter({ hasNotText: secret }).waitFor();
  const rotated = (await panel.getByTestId("webhook-secret").textContent()) ?? "";
  assert.match(rotated, /^whsec_/);
  await item.filter({ hasText: "old secret valid until" }).waitFor();
  await newTask(mimo);
  await receiver.waitFor("the second task's creation", () => receiver.requests.length === 3);
  verify(rotated, receiver.requests[2]!);
  verify(secret, receiver.requests[2]!);

  await item.getByTestId("webhook-delete").click();
  await item.waitFor({ state: "detached" });
  assert.equal(await panel.getByTestId("webhook").count(), 0);
});
