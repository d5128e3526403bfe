// The web app's session list in real Chromium against the built worker in Miniflare: the list is
// the server's (`GET /api/tasks`), so a browser whose storage was cleared lists every task
// again once the token is entered — titles, statuses, the most recently active first — finds
// them by words of their titles, Chinese included, reopens one, and follows its changes.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { CHROMIUM, chromiumArgs } from "../support/chromium.ts";
import { newTask, sleep, WebClient } from "../support/clients.ts";
import { ROOT, startMimo } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";

let mimo: Mimo;
let browser: Browser;
let page: Page;
const errors: string[] = [];

before(async () => {
  // The worker serves web/dist: build it from the sources under test.
  execFileSync(process.execPath, [path.join(ROOT, "web/build.mjs")], { cwd: ROOT, stdio: "inherit" });
  mimo = await startMimo();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs() });
  page = await (await browser.newContext({ viewport: { width: 1360, height: 820 } })).newPage();
  page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
});

after(async () => {
  await browser?.close();
  await mimo?.dispose();
});

/** Sends `content` to the task through its socket and waits until the task completed. */
async function converse(taskId: string, content: string): Promise<void> {
  const web = await WebClient.connect(mimo, taskId);
  await web.waitFor((e) => e.type === "ready", "ready");
  const from = web.received.length;
  web.send({ type: "user_message", content });
  await web.waitFor((e) => e.type === "taskStatus" && e.status === "completed", "completed", 15_000, from);
  await web.close();
}

/** The sessions listed, in order, as `title [status]`. */
async function listed(): Promise<string[]> {
  return page.locator('[data-testid="task-item"]').evaluateAll((items) =>
    items.map((item) => {
      const title = item.querySelector(".recent-title")?.textContent ?? "";
      const status = item.querySelector('[data-testid="task-item-status"]')?.getAttribute("data-status") ?? "";
      return `${title} [${status}]`;
    }),
  );
}

/** Waits until the list shows exactly `expected`, in order. */
async function waitListed(expected: string[]): Promise<void> {
  let shown: string[] = [];
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
    shown = await listed();
    if (JSON.stringify(shown) === JSON.stringify(expected)) return;
  }
  assert.deepEqual(shown, expected, "the sessions listed");
}

async function enterToken(): Promise<void> {
  await page.getByTestId("token-input").fill(mimo.token);
  await page.getByTestId("token-submit").click();
  await page.getByTestId("new-task").waitFor();
}

describe("the session list", () => {
  let lisbon = "";
  let untitled = "";

  it("is the server's: a browser with its storage cleared lists every task again", async () => {
    untitled = await newTask(mimo);
    lisbon = await newTask(mimo);
    const chinese = await newTask(mimo);
    await converse(lisbon, "Find the cheapest flight to Lisbon");
    await converse(chinese, "查找最便宜的航班");

    await page.goto(`${mimo.url}/`);
    await enterToken();
    const all = ["查找最便宜的航班 [completed]", "Find the cheapest flight to Lisbon [completed]", "Untitled task [created]"];
    await waitListed(all);

    // Everything the browser kept is gone: the token is asked for again, and the list is the same.
    await page.evaluate(() => localStorage.clear());
    await page.reload();
    await enterToken();
    await waitListed(all);
    assert.deepEqual(
      await page.evaluate(() => Object.keys(localStorage)),
      ["mimo.token"],
      "the browser keeps only the token",
    );
    const activity = await page.locator('[data-testid="task-item"]').first().getByTestId("task-activity").textContent();
    assert.match(activity ?? "", /just now|s ago/);
  });

  it("finds sessions by words of their titles, Chinese too", async () => {
    const search = page.getByTestId("task-search");
    await search.fill("航班");
    await waitListed(["查找最便宜的航班 [completed]"]);
    await search.fill("LISBON");
    await waitListed(["Find the cheapest flight to Lisbon [completed]"]);
    await search.fill("lisbon train");
    await waitListed([]);
    await page.getByText("No session's title has these words.").waitFor();
    await search.fill("");
    await waitListed(["查找最便宜的航班 [completed]", "Find the cheapest flight to Lisbon [completed]", "Untitled task [created]"]);
  });

  it("reopens a session from the list, and follows the open task's changes", async () => {
    await page.locator('[data-testid="task-item"]', { hasText: "Find the cheapest flight to Lisbon" }).getByTestId("task-open").click();
    await page.waitForURL(new RegExp(`#/task/${lisbon}$`));
    await page.getByTestId("message-user").filter({ hasText: "Find the cheapest flight to Lisbon" }).waitFor();
    await page.locator(`[data-testid="task-item"].current[data-task-id="${lisbon}"]`).waitFor();

    // The untitled one, opened and given its first message here: titled, and on top.
    await page.locator('[data-testid="task-item"]', { hasText: "Untitled task" }).getByTestId("task-open").click();
    await page.waitForURL(new RegExp(`#/task/${untitled}$`));
    await page.locator('[data-testid="connection-state"][data-state="live"]').waitFor({ timeout: 10_000 });
    const composer = page.getByTestId("composer");
    await composer.fill("Water the plants");
    await composer.press("Enter");
    await page.locator('[data-testid="task-status"][data-status="completed"]').waitFor({ timeout: 15_000 });
    await waitListed(["Water the plants [completed]", "查找最便宜的航班 [completed]", "Find the cheapest flight to Lisbon [completed]"]);
    await page.locator(`[data-testid="task-item"].current[data-task-id="${untitled}"]`).waitFor();
    assert.deepEqual(errors, []);
  });

  it("+ New task on a task still blank keeps it: no empty sessions pile up", async () => {
    const before = page.url();
    await page.getByTestId("new-task").click();
    await page.waitForURL((url) => url.toString() !== before && /#\/task\/[0-9a-f-]+$/.test(url.toString()));
    const blank = page.url();
    await page.locator('[data-testid="connection-state"][data-state="live"]').waitFor({ timeout: 10_000 });
    await waitListed(["Untitled task [created]", "Water the plants [completed]", "查找最便宜的航班 [completed]", "Find the cheapest flight to Lisbon [completed]"]);
    await page.getByTestId("new-task").click();
    await page.getByTestId("new-task").click();
    await sleep(1_000);
    assert.equal(page.url(), blank, "the same task");
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-testid")), "composer");
    await waitListed(["Untitled task [created]", "Water the plants [completed]", "查找最便宜的航班 [completed]", "Find the cheapest flight to Lisbon [completed]"]);
  });
});
