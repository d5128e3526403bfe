// Page preparation and the HTML snapshot end to end: screenshots (CDP, any size, uploaded
// through presigned URLs), readability text and markdown (inline under the limit, artifact only
// at or over it, refused over the maximum), the page's HTML — and secrets never leaving the page.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { READABILITY_INLINE_LIMIT_BYTES, READABILITY_MAX_BYTES } from "../../protocol/ts/protocol.ts";
import type { ObserveResult, ReadabilityResult, ScreenshotResult } from "../../protocol/ts/protocol.ts";
import { imageSize } from "../../extension/src/image.ts";
import { downloadArtifact, fails, ok, pageAt, startHarness, startTask } from "./harness.ts";
import type { Harness } from "./harness.ts";

let h: Harness;
before(async () => (h = await startHarness()));
after(async () => {
  await h?.close();
});

const download = (artifactId: string) => downloadArtifact(h, artifactId);

function jpegSize(bytes: Buffer): { width: number; height: number } | undefined {
  assert.equal(bytes.readUInt16BE(0), 0xffd8, "a JPEG");
  return imageSize(bytes);
}

describe("screenshots", () => {
  it("captures the task tab through CDP (it is not the focused window) as a JPEG and uploads it", { timeout: 30_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/buttons.html?shot`);
    const viewport = await page.evaluate(() => ({ w: window.innerWidth, h: window.innerHeight, dpr: devicePixelRatio }));
    // Wider than 1280 image pixels, it is scaled down to 1280.
    const scale = Math.min(1, 1280 / (viewport.w * viewport.dpr));
    const { result, warnings } = await ok<ScreenshotResult>(h, taskId, { name: "browser_screenshot", params: {} });
    assert.deepEqual(warnings, []);
    assert.equal(result.width, Math.round(viewport.w * viewport.dpr * scale));
    assert.equal(result.height, Math.round(viewport.h * viewport.dpr * scale));
    const res = await fetch(result.url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "image/jpeg");
    assert.deepEqual(jpegSize(Buffer.from(await res.arrayBuffer())), { width: result.width, height: result.height });

    const full = await ok<ScreenshotResult>(h, taskId, { name: "browser_screenshot", params: { fullPage: true } });
    const docHeight = await page.evaluate(() => document.documentElement.scrollHeight);
    assert.equal(full.result.height, Math.round(docHeight * viewport.dpr * scale));
    assert.notEqual(full.result.artifactId, result.artifactId);
    const bytes = Buffer.from(await (await download(full.result.artifactId)).arrayBuffer());
    assert.equal(jpegSize(bytes)?.height, full.result.height);
  });
});

describe("readability", () => {
  let taskId: string;
  before(async () => {
    ({ taskId } = await startTask(h, `${h.a}/article.html`));
  });

  it("extracts the article as text and markdown, inline and as an artifact", { timeout: 30_000 }, async () => {
    const { result, warnings } = await ok<ReadabilityResult>(h, taskId, { name: "browser_readability_extract", params: {} });
    assert.deepEqual(warnings, []);
    assert.equal(result.title, "The Quiet Harbour");
    assert.equal(result.truncated, false);
    assert.match(result.text!, /The harbour was quiet that morning\./);
    assert.match(result.text!, /Nobody noticed the stranger/);
    assert.doesNotMatch(result.text!, /Footer text|News/, "the page's chrome is left out");
    assert.match(result.markdown!, /^## The market$/m);
    assert.match(result.markdown!, /\*\*mackerel\*\*/);
    assert.match(result.markdown!, /^\s*[-*]\s+Mackerel: 4 a kilo$/m);
    assert.equal(result.contentLengthBytes, Buffer.byteLength(result.text!, "utf8"));
    assert.ok(!JSON.stringify(result).includes("article-password-value"));
    const stored = await download(result.artifactId!);
    assert.match(stored.headers.get("content-type")!, /^text\/markdown/);
    assert.equal(await stored.text(), result.markdown);
  });

  it("returns only the artifact at or over the inline limit, and refuses text over the maximum", { timeout: 60_000 }, async () => {
    const kb = Math.ceil(READABILITY_INLINE_LIMIT_BYTES / 1024) + 20;
    await ok(h, taskId, { name: "browser_navigate", params: { url: `${h.a}/text?kb=${kb}` } });
    const { result } = await ok<ReadabilityResult>(h, taskId, { name: "browser_readability_extract", params: {} });
    assert.equal(result.truncated, true);
    assert.equal(result.text, undefined);
    assert.equal(result.markdown, undefined);
    assert.ok(result.contentLengthBytes >= READABILITY_INLINE_LIMIT_BYTES);
    assert.ok(result.contentLengthBytes <= READABILITY_MAX_BYTES);
    const stored = await (await download(result.artifactId!)).text();
    assert.ok(Buffer.byteLength(stored) >= READABILITY_INLINE_LIMIT_BYTES);

    await ok(h, taskId, { name: "browser_navigate", params: { url: `${h.a}/text?kb=${Math.ceil(READABILITY_MAX_BYTES / 1024) + 50}` } });
    const tooLarge = await fails(h, taskId, { name: "browser_readability_extract", params: {} }, "READABILITY_TOO_LARGE");
    assert.equal(tooLarge.retryable, false);
  });
});

describe("readable text of a page that did not change", () => {
  it("is given again, and read anew after any change a person could see: its text, a class, a hover, the window", { timeout: 60_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/changing-text.html`);
    const read = async () => {
      const { result, record } = await ok<ReadabilityResult>(h, taskId, { name: "browser_readability_extract", params: {} });
      const stages = (record.outcome?.timings ?? []).map((t) => t.stage);
      return { text: result.text!, markdown: result.markdown!, artifactId: result.artifactId!, reused: stages.includes("text.unchanged"), read: stages.includes("text.read") };
    };
    const first = await read();
    assert.ok(first.read && !first.reused);
    assert.match(first.text, /nine to five/);
    assert.match(first.text, /fresh mackerel/);
    assert.match(first.text, /ferry timetable/);
    assert.doesNotMatch(first.text, /returns desk/, "a menu that is not open is not seen");
    // Nothing changed: the same text, without taking the page apart again.
    const again = await read();
    assert.ok(again.reused, "an unchanged page is not read again");
    assert.equal(again.text, first.text);
    // Nor is its text stored again: the artifact that holds it is given again.
    assert.equal(again.artifactId, first.artifactId);
    assert.equal(await (await download(again.artifactId)).text(), first.markdown);
    // A change a person cannot read (an attribute): read anew, the same text, the same artifact.
    await page.evaluate(() => (document.body.dataset.seen = "1"));
    const same = await read();
    assert.ok(same.read && !same.reused);
    assert.equal(same.artifactId, first.artifactId);
    // Another task on the same page never shares this task's artifact.
    const other = await startTask(h, `${h.a}/changing-text.html`);
    const theirs = await ok<ReadabilityResult>(h, other.taskId, { name: "browser_readability_extract", params: {} });
    assert.equal(theirs.result.text, first.text);
    assert.notEqual(theirs.result.artifactId, first.artifactId);
    assert.ok(theirs.result.artifactId!.startsWith(other.taskId), theirs.result.artifactId);

    // The page's own text changes.
    await page.evaluate(() => (document.getElementById("hours")!.textContent = "Open from ten to six."));
    const changed = await read();
    assert.ok(changed.read && !changed.reused);
    assert.notEqual(changed.artifactId, first.artifactId, "other text is stored anew");
    assert.match(await (await download(changed.artifactId)).text(), /ten to six/);
    assert.match(changed.text, /ten to six/);
    assert.doesNotMatch(changed.text, /nine to five/);
    assert.ok((await read()).reused);

    // A class hides a part: what a person no longer sees is no longer the page's text.
    await page.evaluate(() => (document.getElementById("notice")!.className = "gone"));
    assert.doesNotMatch((await read()).text, /fresh mackerel/);

    // A narrower window hides what only a wide one shows (a media query): nothing in the
    // document changes.
    assert.ok((await read()).reused);
    await page.setViewportSize({ width: 500, height: 700 });
    const narrow = await read();
    assert.ok(narrow.read, "a resized window is read anew");
    assert.doesNotMatch(narrow.text, /ferry timetable/);

    // The pointer opens a menu (`:hover`): nothing in the document changes either, yet it shows.
    await page.hover("#menu");
    const hovered = await read();
    assert.ok(hovered.read, "a hover is read anew");
    assert.match(hovered.text, /returns desk/);
  });
});

describe("an observation", () => {
  it("waits for the page, then takes its screenshot, readable text and element list in one action", { timeout: 30_000 }, async () => {
    const { taskId } = await startTask(h, `${h.a}/article.html?observe`);
    const { result, warnings } = await ok<ObserveResult>(h, taskId, { name: "browser_observe", params: {} });
    assert.deepEqual(warnings, []);
    assert.equal(result.notLoaded, undefined);
    const shot = result.screenshot.result!;
    assert.equal(jpegSize(Buffer.from(await (await download(shot.artifactId)).arrayBuffer()))?.width, shot.width);
    const text = result.readability.result!;
    assert.equal(text.title, "The Quiet Harbour");
    assert.match(text.markdown!, /^## The market$/m);
    assert.equal(await (await download(text.artifactId!)).text(), text.markdown);
    const index = result.domIndex.result!;
    assert.ok(index.elements.length > 0 && index.text.includes(`[${index.elements[0]!.clickId}]`), index.text);
    assert.match(index.url, /article\.html\?observe$/);
    // Each part is what its own action gives.
    const alone = await ok<ReadabilityResult>(h, taskId, { name: "browser_readability_extract", params: {} });
    assert.equal(alone.result.markdown, text.markdown);
  });

  it("keeps the parts that worked when one fails", { timeout: 60_000 }, async () => {
    const { taskId } = await startTask(h, `${h.a}/article.html?observe-large`);
    await ok(h, taskId, { name: "browser_navigate", params: { url: `${h.a}/text?kb=${Math.ceil(READABILITY_MAX_BYTES / 1024) + 50}` } });
    const { result } = await ok<ObserveResult>(h, taskId, { name: "browser_observe", params: {} });
    assert.equal(result.readability.error?.code, "READABILITY_TOO_LARGE");
    assert.equal(result.readability.result, undefined);
    assert.ok(result.screenshot.result?.artifactId);
    assert.equal(result.domIndex.result?.title, "Long read");
  });
});

describe("the HTML snapshot", () => {
  it("uploads the page's HTML with what fields hold, secrets masked, or one element's", { timeout: 30_000 }, async () => {
    const { taskId } = await startTask(h, `${h.a}/form.html?html`);
    const page = await pageAt(h, `${h.a}/form.html?html`);
    await ok(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='name']", text: "Typed name" } });
    await ok(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='password']", text: "typed-password" } });
    await page.locator("#agree").check();
    const { result } = await ok<{ artifactId: string; url: string }>(h, taskId, { name: "browser_get_html", params: {} });
    const res = await fetch(result.url);
    assert.match(res.headers.get("content-type")!, /^text\/html/);
    const html = await res.text();
    assert.match(html, /^<!DOCTYPE html>/);
    assert.match(html, /<input id="name" name="name" type="text" placeholder="Your name"[^>]* value="Typed name">/);
    assert.match(html, /id="agree"[^>]* checked/);
    for (const secret of ["typed-password", "hunter2-initial", "4111111111111111", "my-secret-note"]) assert.ok(!html.includes(secret), `${secret} leaked`);
    assert.ok(html.includes("••••"));
    assert.ok(!html.includes("mimo-overlay-host"), "the overlay is not part of the page");

    const one = await ok<{ artifactId: string; url: string }>(h, taskId, { name: "browser_get_html", params: { xpath: "//*[@id='email']" } });
    // Stored evidence holds no personal data by default (MIMO_REDACT_EVIDENCE).
    assert.equal(await (await fetch(one.result.url)).text(), '<input id="email" name="email" type="email" value="[email redacted]">');
    await fails(h, taskId, { name: "browser_get_html", params: { xpath: "//*[" } }, "INVALID_TARGET");
    await fails(h, taskId, { name: "browser_get_html", params: { xpath: "//nothing" } }, "TARGET_NOT_FOUND");
  });
});
