// The replay of a finished task in the web app, in real Chromium: a run of the real extension on
// the fixture shop (its screenshots, its element boxes) with a step the person confirmed, then
// the replay opened from a shared link in a fresh browser that only has the token. The view is
// scrubbed step by step and photographed (REPLAY_SHOTS, /tmp by default) to be looked at.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { CHROMIUM, chromiumArgs } from "../support/chromium.ts";
import { newTask, WebClient } from "../support/clients.ts";
import { agentStep, buyTwoBlueMugs } from "../support/shopper.ts";
import { startHarness } from "./harness.ts";
import type { Harness } from "./harness.ts";

const SHOTS = process.env.REPLAY_SHOTS ?? "/tmp";

let h: Harness;
let viewer: Browser;
before(async () => {
  // "Add to cart" is irreversible here: that step waits for the person.
  h = await startHarness({ bindings: { MIMO_RISK_RULES: JSON.stringify({ irreversibleWords: ["add to cart"] }) } });
  viewer = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs() });
});
after(async () => {
  await viewer?.close();
  await h?.close();
});

/** A page of the web app at `hash` in a fresh browser context, the token entered; its script errors. */
async function webApp(hash: string): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
  const context = await viewer.newContext({ viewport: { width: 1360, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(err.message));
  await page.goto(`${h.mimo.url}/${hash}`);
  await page.getByTestId("token-input").fill(h.mimo.token);
  await page.getByTestId("token-submit").click();
  return { page, errors, close: () => context.close() };
}

/**
 * Runs navigate, search, open the mug, quantity 2, add to cart, done; the person confirms the
 * add to cart in the web app, where the page is shown with the button outlined.
 */
async function finishedTask(): Promise<string> {
  const shop = `${h.a}/shop/index.html?fresh`;
  h.mimo.llm.script([...buyTwoBlueMugs(shop).slice(0, 5), agentStep({ done: { success: true, text: "Two blue mugs are in the cart." } }, "Added them.")]);
  const taskId = await newTask(h.mimo);
  const web = await WebClient.connect(h.mimo, taskId);
  const { page, errors, close } = await webApp(`#/task/${taskId}`);
  web.send({ type: "user_message", content: `Open ${shop} and add two blue mugs to the cart` });
  await page.getByTestId("confirmation").waitFor({ timeout: 60_000 });
  await loaded(page, "confirm-screenshot");
  await page.getByTestId("confirm-target").waitFor();
  await page.getByTestId("confirm-step").click();
  assert.deepEqual(errors, []);
  const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 60_000);
  assert.ok(outcome.type === "structuredOutput" && outcome.status === "ok", JSON.stringify(outcome));
  await Promise.all([web.close(), close()]);
  return taskId;
}

async function text(page: Page, testId: string): Promise<string> {
  return (await page.getByTestId(testId).innerText()).trim();
}

/** Waits until the step shown is `at` of `of`. */
async function at(page: Page, step: number, of: number): Promise<void> {
  await page.getByTestId("replay-position").filter({ hasText: `${step} of ${of}` }).waitFor({ timeout: 5_000 });
}

/** Waits for a screenshot to have loaded (its pixels known) and returns its natural size. */
async function loaded(page: Page, testId: string): Promise<{ width: number; height: number }> {
  const shot = page.getByTestId(testId);
  await shot.waitFor();
  await page.waitForFunction((id) => ((document.querySelector(`[data-testid="${id}"]`) as HTMLImageElement | null)?.naturalWidth ?? 0) > 0, testId, { timeout: 10_000 });
  return shot.evaluate((img: HTMLImageElement) => ({ width: img.naturalWidth, height: img.naturalHeight }));
}

describe("the replay view", () => {
  it("replays a finished task step by step from a shared link, with its pages, target, reflection, risk and confirmation", { timeout: 180_000 }, async () => {
    const taskId = await finishedTask();
    // A fresh browser: no stored token, no recent tasks. The link asks for the token, then shows step 5.
    const { page, errors, close } = await webApp(`#/task/${taskId}/replay/5`);
    await at(page, 5, 6);
    assert.ok(page.url().endsWith(`#/task/${taskId}/replay/5`), page.url());

    // Step 5: the click that waited for the person.
    assert.match(await text(page, "replay-title"), /^Step 5: Click “Add to cart”$/);
    assert.equal(await page.getByTestId("replay-risk").textContent(), "high risk");
    const confirmation = page.getByTestId("replay-confirmation");
    assert.equal(await confirmation.getAttribute("data-approved"), "true");
    assert.match(await confirmation.innerText(), /Mimo asked the person because clicking \[\d+\] <button>Add to cart<\/button> looks irreversible \(“add to cart”\)[\s\S]*Confirmed in the web app at .*, \d+ s after it was asked\./);
    assert.match(await text(page, "replay-reflection"), /Memory\s+Quantity set to 2\./);
    assert.equal(await text(page, "replay-outcome"), "Done.");
    assert.match(await text(page, "replay-before-url"), /\/shop\/product\.html/);
    // The target is outlined on the page it was chosen on, within the screenshot.
    const size = await loaded(page, "replay-before-shot");
    const target = page.getByTestId("replay-before-target");
    await target.waitFor();
    const [frame, box] = await Promise.all([page.getByTestId("replay-before-shot").boundingBox(), target.boundingBox()]);
    assert.ok(frame && box && box.width > 4 && box.height > 4, JSON.stringify({ frame, box }));
    assert.ok(box.x >= frame.x && box.y >= frame.y && box.x + box.width <= frame.x + frame.width + 1 && box.y + box.height <= frame.y + frame.height + 1, JSON.stringify({ frame, box, size }));
    await loaded(page, "replay-after-shot");
    assert.equal(await page.getByTestId("replay-after-target").count(), 0, "the after page outlines nothing");
    await page.screenshot({ path: path.join(SHOTS, "replay-step5.png") });
    // Larger, one above the other: the outline stays on the target.
    await page.getByTestId("replay-stack").click();
    const wide = await page.getByTestId("replay-before-shot").boundingBox();
    assert.ok(wide && wide.width > frame.width * 1.5, JSON.stringify({ wide, frame }));
    await page.getByTestId("replay-before").screenshot({ path: path.join(SHOTS, "replay-step5-before.png") });
    await page.getByTestId("replay-stack").click();

    // Scrubbed to the start: the run's first step has no page before it.
    const scrubber = page.getByTestId("replay-scrubber");
    await scrubber.focus();
    await page.keyboard.press("Home");
    await at(page, 1, 6);
    assert.match(await text(page, "replay-title"), /^Step 1: Go to http:\/\/127\.0\.0\.1:\d+\/shop\/index\.html\?fresh$/);
    assert.equal(await page.getByTestId("replay-risk").textContent(), "low risk");
    assert.match(await text(page, "replay-before"), /No page yet/);
    assert.equal(await page.getByTestId("replay-confirmation").count(), 0);
    await loaded(page, "replay-after-shot");
    assert.ok(page.url().endsWith("/replay/1"), "the address follows the scrubber, to share the step shown");

    // The arrow keys and the buttons step through; the search typed in step 2 is shown with its field outlined.
    await page.keyboard.press("ArrowRight");
    await at(page, 2, 6);
    assert.match(await text(page, "replay-title"), /^Step 2: Type “blue mug” into “Search products” and submit$/);
    await page.getByTestId("replay-before-target").waitFor();
    await page.getByTestId("replay").screenshot({ path: path.join(SHOTS, "replay-step2.png") });
    const results = await text(page, "replay-after-url");
    assert.match(results, /\/shop\/results\.html\?q=blue\+mug/);
    await page.getByTestId("replay-next").click();
    await at(page, 3, 6);
    assert.equal(await text(page, "replay-before-url"), results, "step 3 was chosen on the page step 2 led to");
    await page.getByTestId("replay-tick").last().click();
    await at(page, 6, 6);
    assert.match(await text(page, "replay-title"), /^Step 6: Finish$/);
    assert.ok(await page.getByTestId("replay-next").isDisabled());
    assert.equal(await page.getByTestId("replay-tick").count(), 6);
    assert.equal(await page.locator('[data-testid="replay-tick"][data-risk="high"]').count(), 1, "the one risky step stands out in the timeline");
    assert.equal(await page.getByTestId("replay-tick").nth(4).getAttribute("data-confirmed"), "true", "and shows it was confirmed");

    // The evidence zip downloads from the replay.
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-zip").click()]);
    assert.equal(download.suggestedFilename(), `mimo-task-${taskId}.zip`);
    const zip = await readFile((await download.path())!);
    assert.equal(zip.subarray(0, 4).toString("binary"), "PK\x03\x04");

    // Back to the live task, and from it to its replay again.
    await page.getByTestId("replay-link").click();
    await page.waitForURL(new RegExp(`#/task/${taskId}$`));
    await page.locator('[data-testid="connection-state"][data-state="live"]').waitFor({ timeout: 10_000 });
    assert.ok(!(await page.getByTestId("replay").isVisible()));
    await page.getByTestId("replay-link").click();
    await at(page, 1, 6);
    assert.deepEqual(errors, []);
    await close();
  });
});
