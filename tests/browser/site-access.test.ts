// Site access end to end: Mimo acts only on sites the person allowed. The browser runs headed on
// Xvfb so that Chrome's own permission dialog is real, and the test answers it with the keyboard
// as a person would (../support/chrome-dialog.ts). Nothing is allowed at the start.
//   - an action on a site nobody allowed fails with PERMISSION_DENIED, saying how to allow it,
//     and the side panel offers "Allow Mimo on <site>"
//   - allowing the site there (Chrome's dialog, Allow) makes actions work on it, and only on it:
//     a cross-origin frame of another site is not read, navigating to another site is refused
//   - revoking the site in the side panel makes actions fail again, though the content script
//     is still in the page
//   - "Allow Mimo on all sites" in the options lets Mimo act anywhere; unticking it stops it
//   - an agent run whose step needs a site nobody allowed waits for the person
//     (`waiting_permission`, said in the web app with where to click) and goes on by itself once
//     they allow it in the side panel: the step runs once, and the run finishes
/// <reference types="chrome" />
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import type { DomIndexResult } from "../../protocol/ts/protocol.ts";
import { api, newTask, WebClient } from "../support/clients.ts";
import { agentStep } from "../support/shopper.ts";
import { allowInChromeDialog } from "../support/chrome-dialog.ts";
import { allowAllSites, fails, logged, ok, pageAt, signedInApp, startHarness, startTask } from "./harness.ts";
import type { ActionRecord, Harness } from "./harness.ts";

let h: Harness;
/** The side panel's page, opened in a tab (its content is what the side panel shows). */
let panel: Page;
before(async () => {
  h = await startHarness({}, { headed: true, allSites: false });
  panel = await h.context.newPage();
  await panel.goto(`chrome-extension://${h.extensionId}/side_panel.html`);
});
after(async () => {
  await h?.close();
});

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

function text(index: DomIndexResult, needle: string): boolean {
  return index.elements.some((e) => e.text?.includes(needle));
}

describe("site access", () => {
  let taskId: string;

  it("refuses a site nobody allowed, says how to allow it, and the side panel offers it", { timeout: 30_000 }, async () => {
    const refused = await newTask(h.mimo);
    const start = await fails(h, refused, { name: "task_start", params: { url: `${h.a}/buttons.html` } }, "PERMISSION_DENIED");
    assert.match(start.message, new RegExp(`side panel.*"Allow Mimo on ${escape(h.a)}"`));
    assert.equal(start.retryable, false);
    assert.ok(!h.context.pages().some((p) => p.url().startsWith(h.a)), "no tab was opened on the site");
    // A task may start on a blank tab; going to the site from there is refused the same way.
    await ok(h, refused, { name: "task_start", params: {} });
    const navigate = await fails(h, refused, { name: "browser_navigate", params: { url: `${h.b}/buttons.html` } }, "PERMISSION_DENIED");
    assert.match(navigate.message, new RegExp(`Allow Mimo on ${escape(h.b)}`));
    for (const site of [h.a, h.b]) await panel.getByRole("button", { name: `Allow Mimo on ${site}` }).waitFor();
    assert.deepEqual(await panel.locator("#site-granted li").allInnerTexts(), ["None"]);
  });

  it("allows a site from the side panel through Chrome's dialog; actions then work there and only there", { timeout: 60_000 }, async () => {
    const allow = panel.getByRole("button", { name: `Allow Mimo on ${h.a}` });
    await allowInChromeDialog(h.display, panel, () => allow.click(), [`${h.a}/*`]);
    await panel.locator("#site-granted").getByText(h.a, { exact: false }).waitFor();
    await allow.waitFor({ state: "detached" });
    assert.equal(await panel.getByRole("button", { name: `Allow Mimo on ${h.b}` }).count(), 1, "the other site is still offered");

    let page: Page;
    ({ taskId, page } = await startTask(h, `${h.a}/buttons.html`));
    const { result } = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: {} });
    const buy = result.elements.find((e) => e.text === "Add to cart")!;
    await ok(h, taskId, { name: "browser_click", params: { clickId: buy.clickId } });
    await logged(page, "click:buy:trusted=true");

    // A page of the allowed site with a frame of the other: the frame is not read.
    const url = `${h.a}/frames.html?other=${new URL(h.b).port}`;
    await ok(h, taskId, { name: "browser_navigate", params: { url } });
    page = await pageAt(h, url);
    await page.frameLocator("#cross").locator("#frame-btn").waitFor();
    const framed = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: {} });
    assert.ok(text(framed.result, "Top button") && text(framed.result, "Button in same"));
    assert.ok(!text(framed.result, "Button in cross"), framed.result.text);
    assert.match(framed.warnings.join("; "), new RegExp(`not indexed: Mimo is not allowed on ${escape(h.b)}`));
    await fails(h, taskId, { name: "browser_navigate", params: { url: `${h.b}/buttons.html` } }, "PERMISSION_DENIED");
  });

  it("revoking the site in the side panel makes actions there fail again", { timeout: 30_000 }, async () => {
    await panel.getByRole("button", { name: `Revoke ${h.a}` }).click();
    await panel.getByRole("button", { name: `Revoke ${h.a}` }).waitFor({ state: "detached" });
    // The content script is still in the page; Mimo refuses all the same.
    const index = await fails(h, taskId, { name: "browser_dom_index", params: {} }, "PERMISSION_DENIED");
    assert.match(index.message, new RegExp(`Allow Mimo on ${escape(h.a)}`));
    await fails(h, taskId, { name: "browser_click", params: { xpath: "//button[@id='top-btn']" } }, "PERMISSION_DENIED");
    await panel.getByRole("button", { name: `Allow Mimo on ${h.a}` }).waitFor();
  });

  it("allowing all sites in the options lets Mimo act on every site; unticking it takes that back", { timeout: 60_000 }, async () => {
    await allowAllSites(h.display, h.options);
    await panel.locator("#site-all:checked").waitFor();
    const framed = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: {} });
    assert.ok(text(framed.result, "Button in cross") && text(framed.result, "Button in cross-nested"), framed.result.text);
    await ok(h, taskId, { name: "browser_navigate", params: { url: `${h.b}/buttons.html` } });
    await ok(h, taskId, { name: "browser_dom_index", params: {} });
    // Nothing is waiting for the person any more.
    await panel.locator("#site-requests li", { hasText: "None" }).waitFor();
    assert.equal(await panel.locator("#site-requests button").count(), 0);

    await h.options.locator("#site-all").click();
    await h.options.locator("#site-all:not(:checked)").waitFor();
    await fails(h, taskId, { name: "browser_dom_index", params: {} }, "PERMISSION_DENIED");
  });

  it("an agent run waits for a site nobody allowed and goes on once the person allows it", { timeout: 90_000 }, async () => {
    // Nothing is allowed now (the test before took all sites back).
    const url = `${h.b}/buttons.html`;
    h.mimo.llm.script([agentStep({ navigate: { url } }), agentStep({ done: { success: true, text: "The page is open." } })]);
    const taskId = await newTask(h.mimo);
    const web = await WebClient.connect(h.mimo, taskId);
    web.send({ type: "user_message", content: `Open ${url}` });
    const needed = await web.waitFor((e) => e.type === "siteAccessNeeded", "the run asks for the site", 30_000);
    assert.equal((needed as { site?: string }).site, h.b);
    await web.waitFor((e) => e.type === "taskStatus" && e.status === "waiting_permission", "the task waits", 10_000);
    assert.ok(!web.received.some((e) => e.type === "structuredOutput"), "the run did not end");

    // The web app says what waits and where to click.
    let app = await signedInApp(h.context, `${h.mimo.url}/#/task/${taskId}`, h.mimo.token);
    const card = () => app.getByTestId("site-access");
    await card().waitFor();
    assert.match(await card().innerText(), new RegExp(`Allow Mimo on ${escape(h.b)}`));
    await app.locator('[data-testid="task-status"][data-status="waiting_permission"]').waitFor();
    // (Closed while Chrome's dialog is answered: the dialog is found by how it dims the panel.)
    await app.close();

    // The person allows it in the side panel: the run goes on by itself and finishes.
    await allowInChromeDialog(h.display, panel, () => panel.getByRole("button", { name: `Allow Mimo on ${h.b}` }).click(), [`${h.b}/*`]);
    const output = await web.waitFor((e) => e.type === "structuredOutput", "the task's outcome", 60_000);
    assert.equal((output as { status?: string }).status, "ok", JSON.stringify(web.received.filter((e) => e.type !== "snapshotSync")));
    app = await signedInApp(h.context, `${h.mimo.url}/#/task/${taskId}`, h.mimo.token);
    await card().getByText("Allowed: the task goes on.").waitFor();
    await app.close();
    // The refused attempt and the one that ran are two actions; each ran at most once.
    const records = (await (await api(h.mimo, `/api/task/${taskId}/actions`)).json()) as ActionRecord[];
    const starts = records.filter((r) => r.command.name === "task_start");
    assert.deepEqual(starts.map((r) => r.state), ["failed", "succeeded"]);
    assert.notEqual(starts[0]!.actionId, starts[1]!.actionId);
    await pageAt(h, url);
    await web.close();
  });
});
