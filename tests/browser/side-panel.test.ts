// The side panel as a place to work (issue 30 §3), in Chromium with the real extension and the
// worker in Miniflare, the model scripted:
//   - the person starts a task from the side panel on the page they are looking at: the run
//     acts on that very tab; the panel streams the conversation and shows each step with the
//     page the model saw; Pause, Take over (the page's overlay gives the person control) and
//     Resume work from it, and the final answer is shown once
//   - the same task is live in the web app (its steps as they run, its answer)
//   - "New task" starts another on the current tab, and Stop ends it
//   - the task tab's indicator (working, taken over) never lies over the page's controls: the
//     person reaches each of them with a real click
// The panel's page is opened in a window of its own, as Chrome's side panel is beside the page,
// not one of its tabs.
/// <reference types="chrome" />
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import { api, sleep } from "../support/clients.ts";
import { agentStep, onElement } from "../support/shopper.ts";
import { ROOT } from "../support/mimo.ts";
import { act, logged, overlayPlaced, serviceWorker, signedInApp, startHarness, startTask } from "./harness.ts";
import type { Harness } from "./harness.ts";

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Screenshots to look at, kept as the test run's artifacts. */
const SHOTS = path.join(ROOT, "tests/.out/screens");

async function shoot(page: Page, name: string): Promise<void> {
  await mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `side-panel-${name}.png`) });
}

/** The side panel's page, in a popup window of its own beside the person's window. */
async function openPanel(): Promise<Page> {
  const opened = h.context.waitForEvent("page", (p) => p.url().endsWith("/side_panel.html"));
  await (await serviceWorker(h)).evaluate((url) => chrome.windows.create({ url, type: "popup", width: 420, height: 900 }).then(() => undefined), `chrome-extension://${h.extensionId}/side_panel.html`);
  const panel = await opened;
  // A side panel's size (the context's pages otherwise share one viewport).
  await panel.setViewportSize({ width: 400, height: 900 });
  await panel.getByTestId("composer").waitFor();
  return panel;
}

async function serverStatus(taskId: string): Promise<string> {
  return ((await (await api(h.mimo, `/api/task/${taskId}`)).json()) as { status: string }).status;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await check()); await sleep(100)) assert.ok(Date.now() < deadline, what);
}

/** The task the side panel shows (it keeps it in the session's storage). */
async function shownTask(panel: Page): Promise<string> {
  let taskId: unknown = null;
  await until("the panel shows a task", async () => {
    taskId = await panel.evaluate(() => chrome.storage.session.get("sidePanelTask").then((s) => s.sidePanelTask));
    return typeof taskId === "string";
  });
  return taskId as unknown as string;
}

const status = (panel: Page, value: string) => panel.locator(`[data-testid="panel-task-status"][data-status="${value}"]`);

describe("the side panel", () => {
  it("starts a task on the current tab and runs it there: streamed, with each step's page, paused, taken over, resumed, answered once; live in the web app too", { timeout: 150_000 }, async () => {
    const shop = `${h.a}/shop/index.html?panel`;
    const page = await h.context.newPage();
    await page.goto(shop);
    h.mimo.llm.script([
      // As the model is told for a run on the person's tab: look at it first.
      agentStep({ wait_for: { url: "/shop/index.html" } }, "Nothing done yet.", "Looking at the shop you have open."),
      onElement("Search products", (index) => ({ type: { index, text: "blue mug", submit: true } }), "Shop open."),
      // Stalled: the person pauses meanwhile.
      { ...onElement("Blue mug", (index) => ({ click: { index } }), "Results show the blue mug."), stallMs: 4_000 },
      // Stalled: the person takes over meanwhile.
      { ...onElement("Quantity", (index) => ({ type: { index, text: "2" } }), "On the blue mug's page."), stallMs: 4_000 },
      onElement("Add to cart", (index) => ({ click: { index } }), "Quantity set to 2."),
      agentStep({ done: { success: true, text: "Two blue mugs are in the cart." } }, "Added."),
    ]);
    const panel = await openPanel();
    await page.bringToFront();
    await panel.getByTestId("composer").fill("Put two blue mugs in the cart");
    await panel.getByTestId("send").click();
    const taskId = await shownTask(panel);

    // The person's own tab: the run searched right there, it opened no tab of its own.
    await page.waitForURL(/\/shop\/results\.html/, { timeout: 30_000 });
    const app = await signedInApp(h.context, `${h.mimo.url}/#/task/${taskId}`, h.mimo.token);
    await panel.getByTestId("message-user").filter({ hasText: "Put two blue mugs in the cart" }).waitFor();
    await panel.getByTestId("message-assistant").filter({ hasText: "Looking at the shop you have open." }).waitFor({ timeout: 15_000 });
    const search = panel.locator('[data-testid="step"][data-step="2"]');
    await search.and(panel.locator('[data-state="ok"]')).waitFor({ timeout: 30_000 });
    assert.match(await search.innerText(), /Type “blue mug”/);
    const shot = search.getByTestId("step-screenshot");
    await shot.waitFor();
    await panel.waitForFunction((img) => img !== null && (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth > 100, await shot.elementHandle(), { timeout: 10_000 });

    // Pause while the next step's model call is out: it finishes, nothing new starts.
    await panel.getByTestId("pause").click();
    await status(panel, "paused").waitFor({ timeout: 10_000 });
    assert.equal(await serverStatus(taskId), "paused");
    await app.locator('[data-testid="task-status"][data-status="paused"]').waitFor();
    await shoot(panel, "paused");
    await sleep(5_000);
    assert.match(page.url(), /\/shop\/results\.html/, "no step ran while paused");
    await panel.getByTestId("resume").click();
    await page.waitForURL(/\/shop\/product\.html/, { timeout: 30_000 });

    // Take over: the tab is the person's (the overlay says so) until they resume in the panel.
    await panel.getByTestId("take-over").click();
    await status(panel, "takeover").waitFor({ timeout: 10_000 });
    await page.locator('#mimo-overlay-host[data-state="takeover"]').waitFor({ state: "attached", timeout: 10_000 });
    await panel.getByTestId("resume").click();
    await panel.locator('[data-testid="structured-output"]').waitFor({ timeout: 60_000 });
    await status(panel, "completed").waitFor();
    await shoot(panel, "answered");
    // The answer once: the final message, not again in a step or a card of raw data.
    assert.equal(await panel.getByText("Two blue mugs are in the cart.").count(), 1, await panel.locator(".messages").innerText());
    assert.match(page.url(), /\/shop\/cart\.html|\/shop\/product\.html/);

    // The web app followed the same run, step by step, to its answer.
    await app.locator('[data-testid="task-status"][data-status="completed"]').waitFor({ timeout: 10_000 });
    assert.equal(await app.locator('[data-testid="step"][data-state="ok"]').count(), await panel.locator('[data-testid="step"][data-state="ok"]').count());
    await app.getByText("Two blue mugs are in the cart.").first().waitFor();
    await app.close();

    // A new task on the current tab, stopped from the panel.
    h.mimo.llm.script([{ ...agentStep({ scroll: { direction: "down" } }), stallMs: 20_000 }]);
    await panel.getByTestId("panel-new-task").click();
    await panel.getByTestId("composer").fill("Scroll down");
    await panel.getByTestId("send").click();
    await until("a second task", async () => (await shownTask(panel)) !== taskId);
    const second = await shownTask(panel);
    await status(panel, "running").waitFor({ timeout: 10_000 });
    await panel.getByTestId("stop").click();
    await until("the second task is canceled", async () => (await serverStatus(second)) === "canceled");
    await status(panel, "canceled").waitFor();
    assert.equal(await serverStatus(taskId), "completed", "the first task is untouched");
    await panel.close();
    await page.close();
  });

  it("keeps the task tab's indicator off the page's controls, working and taken over", { timeout: 60_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/corners.html`);
    const overlay = () => page.evaluate(() => document.getElementById("mimo-overlay-host")?.dataset.state ?? "none");
    /** What a person's click at each control's centre reaches: the control, not the overlay. */
    const reachable = () =>
      page.evaluate(() =>
        ["shop", "account", "chat"].filter((id) => {
          const r = document.getElementById(id)!.getBoundingClientRect();
          return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)?.id !== id;
        }),
      );
    const running = act(h, taskId, { name: "browser_wait_for", params: { text: "never there", timeoutMs: 3_000 } });
    await page.waitForFunction(() => document.getElementById("mimo-overlay-host")?.dataset.state === "ongoing", null, { timeout: 10_000 });
    await overlayPlaced(page);
    assert.deepEqual(await reachable(), [], "the working label covers no control");
    // The person takes over with a click on the page's own control: it works, and so do the others.
    const chat = await page.locator("#chat").boundingBox();
    await page.mouse.click(chat!.x + chat!.width / 2, chat!.y + chat!.height / 2);
    await page.waitForFunction(() => document.getElementById("mimo-overlay-host")?.dataset.state === "takeover", null, { timeout: 10_000 });
    await running;
    await overlayPlaced(page);
    assert.deepEqual(await reachable(), [], "the takeover bar covers no control");
    await page.mouse.wheel(0, 400);
    await sleep(300);
    assert.deepEqual(await reachable(), [], "nor after a scroll");
    await page.locator("#shop").click();
    await page.locator("#account").click();
    for (const id of ["chat", "shop", "account"]) await logged(page, `click:${id}:trusted=true`);
    await shoot(page, "indicator-takeover");
    assert.equal(await overlay(), "takeover");
  });
});
