// The web app's main screens (home, a task with its steps and a confirmation, its replay) and the
// extension's side panel, at a desktop size and a phone's: no serious or critical axe-core
// violation, no horizontal scroll at 390 px with Send in reach, and a composer whose size does
// not change when Pause and Stop appear. Screenshots of each go to tests/.out/screens/ to be
// looked at.
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import { ROOT } from "../support/mimo.ts";
import { agentStep, buyTwoBlueMugs } from "../support/shopper.ts";
import { signedInApp, startHarness } from "./harness.ts";
import type { Harness } from "./harness.ts";

const AXE = path.join(ROOT, "node_modules/axe-core/axe.min.js");
const SCREENS = path.join(ROOT, "tests/.out/screens");
const SIZES = [
  { name: "desktop", width: 1280, height: 900 },
  { name: "phone", width: 390, height: 844 },
] as const;

let h: Harness;
before(async () => {
  await mkdir(SCREENS, { recursive: true });
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** axe-core's serious and critical violations on `page` as it is now, one line each. */
async function violations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the pages' Content-Security-Policy refuses inline scripts.
  await page.evaluate(await readFile(AXE, "utf8"));
  const found = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: unknown[] }> }> }> } }).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)) }));
  });
  return found.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.impact} ${v.id}: ${v.targets.join(" ")}`);
}

/**
 * Checks the screen at every size, once `ready`: a screenshot, axe, no horizontal scroll, and
 * what `check` asks of it at that size.
 */
async function checkScreen(page: Page, screen: string, ready: () => Promise<void>, check: (width: number) => Promise<void> = async () => {}): Promise<void> {
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await ready();
    await page.screenshot({ path: path.join(SCREENS, `${screen}-${size.name}.png`) });
    await check(size.width);
    assert.deepEqual(await violations(page), [], `${screen} at ${size.name}`);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= size.width, `${screen} at ${size.name}: the page is ${wide} px wide`);
  }
  await page.setViewportSize({ width: SIZES[0].width, height: SIZES[0].height });
}

const openApp = () => signedInApp(h.context, h.mimo.url, h.mimo.token);

/** Whether `selector`'s box lies within the window, horizontally. */
async function withinWidth(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).evaluate((el) => {
    const box = el.getBoundingClientRect();
    return box.left >= 0 && box.right <= window.innerWidth;
  });
}

describe("the web app's screens", () => {
  it("pass axe-core and fit a phone: home, a task at work and done, its replay", { timeout: 120_000 }, async () => {
    const app = await openApp();
    await checkScreen(app, "home", async () => {});

    const shop = `${h.a}/shop/index.html?fresh&a11y`;
    const script = buyTwoBlueMugs(shop);
    // Step 2's model call stalls: the screens are checked while the task works.
    script[1] = { ...script[1]!, stallMs: 6_000 };
    h.mimo.llm.script(script);
    await app.getByTestId("new-task").click();
    await app.waitForURL(/#\/task\//);
    const taskId = /#\/task\/([0-9a-f-]+)/.exec(app.url())![1]!;
    const composer = app.locator(".composer-box");
    const idle = await composer.boundingBox();
    await app.getByTestId("composer").fill(`Open ${shop}, find the blue mug and add two to the cart`);
    await app.getByTestId("send").click();
    await app.getByTestId("stop").waitFor();
    await app.getByTestId("pause").waitFor();
    // Pause and Stop came: the composer is where and as large as it was.
    assert.deepEqual(await composer.boundingBox(), idle);
    await app.locator('[data-testid="step"][data-step="1"]').waitFor({ timeout: 30_000 });
    await checkScreen(
      app,
      "task-working",
      async () => {},
      async () => {
        assert.ok(await withinWidth(app, '[data-testid="send"]'), "Send within the screen");
        assert.ok(await withinWidth(app, ".composer-box"), "the composer within the screen");
      },
    );
    await app.locator('[data-testid="task-status"][data-status="completed"]').waitFor({ timeout: 60_000 });
    // Resizing the window is no scrolling of the person's: the view still follows the run.
    assert.equal(await app.getByTestId("jump-to-latest").isVisible(), false);
    await checkScreen(app, "task-done", async () => {});

    // On a phone the panels are a drawer: closed, then opened from the header.
    await app.setViewportSize({ width: 390, height: 844 });
    assert.equal(await app.getByTestId("group-browser").isVisible(), false);
    await app.getByTestId("panels-toggle").click();
    await app.getByTestId("group-browser").waitFor();
    await checkScreen(app, "panels", async () => {
      await app.getByTestId("group-settings").waitFor();
    });

    await app.goto(`${h.mimo.url}/#/task/${taskId}/replay/1`);
    await checkScreen(app, "replay", async () => {
      await app.getByTestId("replay-title").waitFor();
    });
    await app.close();
  });

  it("a confirmation passes axe-core at both sizes", { timeout: 90_000 }, async () => {
    const checkout = `${h.a}/shop/index.html?fresh&a11y-confirm`;
    h.mimo.llm.script([
      // Step by step: the first step already waits for the person.
      agentStep({ navigate: { url: checkout } }),
      agentStep({ done: { success: true, text: "Done." } }),
    ]);
    const app = await openApp();
    await app.getByTestId("new-task").click();
    await app.waitForURL(/#\/task\//);
    await app.getByTestId("step-by-step").check();
    await app.getByTestId("composer").fill(`Open ${checkout} and show me the cart`);
    await app.getByTestId("send").click();
    await app.getByTestId("confirmation").first().waitFor({ timeout: 30_000 });
    await checkScreen(app, "confirmation", async () => {});
    // The same step waits in the extension's side panel too.
    const panel = await h.context.newPage();
    await panel.goto(`chrome-extension://${h.extensionId}/side_panel.html`);
    await checkScreen(panel, "side-panel-confirmation", async () => {
      await panel.getByTestId("panel-confirmation").waitFor({ timeout: 10_000 });
    });
    assert.match(await panel.getByTestId("panel-confirmation").innerText(), /Step 1: Go to http/);
    // Shown in the panel's conversation (as the panel shows the task it showed last), it asks there.
    const taskId = /#\/task\/([0-9a-f-]+)/.exec(app.url())![1]!;
    await panel.evaluate((id) => chrome.storage.session.set({ sidePanelTask: id }), taskId);
    await panel.reload();
    await checkScreen(panel, "side-panel-task", async () => {
      await panel.getByTestId("confirmation").waitFor({ timeout: 10_000 });
    });
    assert.equal(await panel.getByTestId("panel-confirmation").count(), 0, "asked once, in the conversation");
    await panel.close();
    await app.getByTestId("stop").click();
    await app.close();
  });
});

describe("the extension's side panel", () => {
  it("passes axe-core at both sizes", { timeout: 60_000 }, async () => {
    const panel = await h.context.newPage();
    await panel.goto(`chrome-extension://${h.extensionId}/side_panel.html`);
    await checkScreen(panel, "side-panel", async () => {
      await panel.locator("body").waitFor();
    });
    await panel.close();
  });
});
