// Guard rails with the real extension, end to end: secrets typed by placeholder (the value only
// ever in the page it was typed into) and personal data kept out of stored evidence. Every byte
// that leaves the extension (its socket frames, recorded by its test hooks; its uploads, in R2;
// its own storage) and the coordinator (events, export, action records, the model's requests)
// is searched for the values.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { EventEnvelope, FrontendEvent, ObserveResult } from "../../protocol/ts/protocol.ts";
import type { Page } from "playwright-core";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { api, newTask, WebClient } from "../support/clients.ts";
import { unzip } from "../support/unzip.ts";
import { agentStep, onElement } from "../support/shopper.ts";
import { downloadArtifact, fails, fixtureRequests, ok, pageAt, pixels, putSecret, serviceWorker, startHarness, startTask } from "./harness.ts";
import type { Harness } from "./harness.ts";

/** A password with characters that HTML and JSON escape, and a memorable word. */
const PW = `Tr0ub4dor&3-"horse"<x>`;
const WORD = "marmalade-Quokka-91";
const MASK = [60, 60, 70];

let h: Harness;
before(async () => {
  h = await startHarness({ bindings: { MIMO_SECRETS_KEY: "browser-test-secrets-key-0123456789", MIMO_AGENT_CONFIRM_RISKY: "false" } });
});
after(async () => {
  await h?.close();
});

type Output = Extract<FrontendEvent, { type: "structuredOutput" }>;

/** Every object in the artifact bucket (under `prefix`), with its bytes. */
async function r2Objects(prefix = "tasks/"): Promise<Array<{ key: string; bytes: Buffer }>> {
  type Bucket = {
    list(o: { prefix: string; cursor?: string }): Promise<{ objects: Array<{ key: string }>; truncated: boolean; cursor?: string }>;
    get(key: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer> } | null>;
  };
  const bucket = (await h.mimo.mf.getR2Bucket("ARTIFACTS")) as unknown as Bucket;
  const out: Array<{ key: string; bytes: Buffer }> = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, ...(cursor ? { cursor } : {}) });
    for (const o of page.objects) {
      const body = await bucket.get(o.key);
      if (body !== null) out.push({ key: o.key, bytes: Buffer.from(await body.arrayBuffer()) });
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor !== undefined);
  return out;
}

async function startRecording(): Promise<void> {
  await (await serviceWorker(h)).evaluate(() => ((globalThis as unknown as { __mimoTest: { record: string[] | null } }).__mimoTest.record = []));
}

async function recorded(): Promise<string[]> {
  return (await serviceWorker(h)).evaluate(() => (globalThis as unknown as { __mimoTest: { record: string[] } }).__mimoTest.record);
}

/** `text` with percent-escapes, HTML character references and JSON string escapes decoded, as far as they decode. */
function decoded(text: string): string {
  const percent = (s: string) => s.replace(/(?:%[0-9a-fA-F]{2})+/g, (m) => {
    try {
      return decodeURIComponent(m);
    } catch {
      return m;
    }
  });
  const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
  const html = (s: string) =>
    s.replace(/&(?:#(\d+)|#[xX]([0-9a-fA-F]+)|(amp|lt|gt|quot|apos));/g, (m, dec?: string, hex?: string, name?: string) =>
      dec !== undefined ? String.fromCodePoint(Number(dec)) : hex !== undefined ? String.fromCodePoint(parseInt(hex, 16)) : (named[name!] ?? m),
    );
  const json = (s: string) => s.replace(/\\u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))).replace(/\\(["\\/])/g, "$1");
  let out = text;
  for (let i = 0; i < 2; i++) out = percent(html(json(out)));
  return out;
}

/**
 * Whether `haystack` holds `value` in a form it may take in what is sent: raw, JSON-escaped,
 * HTML-escaped, percent-encoded (as a URL component or a form, either case of hex, mixed with
 * raw characters as a URL parser leaves it), any mix of these (searched for in the text with
 * every escape decoded), or base64 (padded, not, base64url).
 */
function holds(haystack: string, value: string): string | undefined {
  const b64 = Buffer.from(value, "utf8").toString("base64");
  const forms = [value, new URLSearchParams({ v: value }).toString().slice(2), b64.replace(/=+$/, ""), Buffer.from(value, "utf8").toString("base64url")];
  for (const text of [haystack, decoded(haystack)]) {
    const form = forms.find((f) => text.includes(f));
    if (form !== undefined) return form;
  }
  return undefined;
}

function assertAbsent(where: string, haystack: string | Buffer, values: string[]): void {
  const text = typeof haystack === "string" ? haystack : haystack.toString("utf8");
  for (const value of values) {
    const form = holds(text, value);
    assert.ok(form === undefined, `${JSON.stringify(form)} (${value}) is in ${where}`);
  }
}

/** Points across a field's box (inside its border), in CSS pixels of the viewport. */
async function across(page: Page, selector: string): Promise<Array<{ x: number; y: number }>> {
  const box = (await page.locator(selector).boundingBox())!;
  const y = box.y + box.height / 2;
  return [0.1, 0.3, 0.5, 0.7, 0.9].map((f) => ({ x: box.x + box.width * f, y }));
}

const near = (rgb: number[], want: number[]) => rgb.every((c, i) => Math.abs(c - want[i]!) <= 30);

/** A screenshot of the task's tab through the extension, downloaded from R2. */
async function screenshot(taskId: string): Promise<Buffer> {
  const { result } = await ok<{ artifactId: string }>(h, taskId, { name: "browser_screenshot", params: {} });
  return Buffer.from(await (await downloadArtifact(h, result.artifactId)).arrayBuffer());
}

describe("secrets by placeholder", () => {
  it("a model types {{secret:…}} into a login form: the page gets the values, nothing else ever does", { timeout: 120_000 }, async () => {
    const taskId = await newTask(h.mimo);
    // The fixtures are served over plain http: the rule names it (a rule without a scheme is https).
    await putSecret(h, taskId, "pw", PW, [h.a]);
    await putSecret(h, taskId, "word", WORD, [h.a]);
    await startRecording();
    const before = h.mimo.llm.requests().length;
    h.mimo.llm.script([
      agentStep({ navigate: { url: `${h.a}/login.html` } }, "Nothing done yet."),
      onElement("username", (index) => ({ type: { index, text: "jane@example.com" } }), "On the sign-in page."),
      onElement("type=password", (index) => ({ type: { index, text: "{{secret:pw}}" } }), "Email typed."),
      onElement("Memorable", (index) => ({ type: { index, text: "{{secret:word}}" } }), "Password typed."),
      onElement("Sign in</button>", (index) => ({ click: { index } }), "Memorable word typed."),
      agentStep({ done: { success: true, text: "Signed in as jane@example.com." } }, "Signed in."),
    ]);
    const web = await WebClient.connect(h.mimo, taskId);
    web.send({ type: "user_message", content: `Sign in at ${h.a}/login.html as jane@example.com with my password and memorable word` });
    const result = (await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 90_000)) as Output & EventEnvelope;
    assert.equal(result.status, "ok", JSON.stringify(result));

    // The page — and the site behind it — got the real values.
    const posted = fixtureRequests.findLast((r) => r.path === "/login");
    assert.deepEqual([posted?.form.username, posted?.form.password, posted?.form.memorable], ["jane@example.com", PW, WORD]);
    await pageAt(h, `${h.a}/login`);

    // The model saw the names and wrote placeholders; the type results echo no value.
    const requests = JSON.stringify(h.mimo.llm.requests().slice(before).map((r) => r.body));
    assert.match(requests, /\{\{secret:pw\}\}/);
    const steps = web.received.filter((e) => e.type === "toolUsed" && e.phase === "end");
    assert.equal(steps.length, 6);
    assert.ok(steps.every((s) => s.type === "toolUsed" && s.result?.ok), JSON.stringify(steps));

    // Not a byte with a value: the extension's socket frames, its uploads (every R2 object),
    // its storage; the coordinator's events, export and action records; the model's requests.
    const frames = await recorded();
    assert.ok(frames.some((f) => f.includes('"action_result"')), "frames were recorded");
    assertAbsent("the extension's socket frames", frames.join("\n"), [PW, WORD]);
    const objects = await r2Objects();
    assert.ok(objects.some((o) => o.key.includes("/readability/")), "page text was stored");
    for (const o of objects) assertAbsent(`R2 object ${o.key}`, o.bytes, [PW, WORD]);
    assertAbsent("the extension's storage", JSON.stringify(await h.options.evaluate(() => chrome.storage.local.get(null))), [PW, WORD]);
    assertAbsent("the model's requests", requests, [PW, WORD]);
    assertAbsent("the web app's events", JSON.stringify(web.received), [PW, WORD]);
    assertAbsent("the export", await (await api(h.mimo, `/api/task/${taskId}/export`)).text(), [PW, WORD]);
    assertAbsent("the action records", await (await api(h.mimo, `/api/task/${taskId}/actions`)).text(), [PW, WORD]);
    web.close();
  });

  it("a secret is refused on a page of another domain or over plain http without a rule saying so (PERMISSION_DENIED), and an unknown name is TARGET_NOT_FOUND", { timeout: 60_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.b}/login.html`);
    await putSecret(h, taskId, "pw", PW, [h.a]);
    const refused = await fails(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='password']", text: "{{secret:pw}}" } }, "PERMISSION_DENIED");
    assert.doesNotMatch(refused.message, new RegExp(new URL(h.a).host.replace(/\./g, "\\.")), "the secret's domains are not told");
    assert.equal(await page.locator("#password").inputValue(), "", "nothing was typed");
    // The page's own host and port, but no scheme in the rule: https only, and this page is http.
    await putSecret(h, taskId, "tls", PW, [new URL(h.b).host]);
    const plain = await fails(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='password']", text: "{{secret:tls}}" } }, "PERMISSION_DENIED");
    assert.match(plain.message, /may not be typed on http:\/\/127\.0\.0\.1:\d+/);
    assert.equal(await page.locator("#password").inputValue(), "", "nothing was typed");
    const unknown = await fails(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='password']", text: "{{secret:nope}}" } }, "TARGET_NOT_FOUND");
    assert.doesNotMatch(unknown.message, /\bpw\b|\btls\b/, "no other secret is named");
    assertAbsent("the refusals", JSON.stringify([refused, plain, unknown]), [PW]);
  });

  it("a field a secret was typed into is masked in screenshots and hidden in HTML, page text and the element list", { timeout: 60_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/login.html`);
    await putSecret(h, taskId, "word", WORD, [h.a]);
    await startRecording();
    const { result: typed, warnings } = await ok<{ value: string }>(h, taskId, { name: "browser_type", params: { xpath: "//*[@id='memorable']", text: "{{secret:word}}" } });
    assert.equal(await page.locator("#memorable").inputValue(), WORD);
    assert.equal(typed.value, "••••");
    assert.deepEqual(warnings, []);
    await page.locator("#username").fill("jane@example.com");

    // The screenshot: the field is covered, the e-mail field too (personal data), while the
    // mask is gone from the page right after.
    const jpeg = await screenshot(taskId);
    const width = await page.evaluate(() => innerWidth);
    const memorable = await pixels(h, jpeg, width, await across(page, "#memorable"));
    assert.ok(memorable.every((p) => near(p, MASK)), `the memorable word's field is not masked: ${JSON.stringify(memorable)}`);
    const email = await pixels(h, jpeg, width, await across(page, "#username"));
    assert.ok(email.every((p) => near(p, MASK)), `the e-mail field is not masked: ${JSON.stringify(email)}`);
    assert.equal(await page.locator("#__mimo_capture_mask").count(), 0);
    // An empty field is not masked (the mask is not just everywhere).
    const empty = await pixels(h, jpeg, width, await across(page, "#password"));
    assert.ok(empty.some((p) => !near(p, MASK)), `an empty field is masked: ${JSON.stringify(empty)}`);

    // HTML, page text and the element list show the placeholder.
    const { result: html } = await ok<{ artifactId: string }>(h, taskId, { name: "browser_get_html", params: {} });
    const htmlText = await (await downloadArtifact(h, html.artifactId)).text();
    assert.match(htmlText, /id="memorable"[^>]*value="••••"/);
    const { result: index } = await ok<{ text: string }>(h, taskId, { name: "browser_dom_index", params: {} });
    assert.match(index.text, /memorable[^\n]*value=.?••••/);
    await ok(h, taskId, { name: "browser_readability_extract", params: {} });
    // The same in one observation (the agent's look after each step, its three captures at
    // once): the field covered in its screenshot, masked in its element list.
    const { result: seen } = await ok<ObserveResult>(h, taskId, { name: "browser_observe", params: {} });
    assert.match(seen.domIndex.result!.text, /memorable[^\n]*value=.?••••/);
    const observed = Buffer.from(await (await downloadArtifact(h, seen.screenshot.result!.artifactId)).arrayBuffer());
    const covered = await pixels(h, observed, width, await across(page, "#memorable"));
    assert.ok(covered.every((p) => near(p, MASK)), `the observation's screenshot shows the field: ${JSON.stringify(covered)}`);
    assert.ok(seen.readability.result?.artifactId, JSON.stringify(seen.readability));
    for (const o of await r2Objects(`tasks/${taskId}/`)) assertAbsent(`R2 object ${o.key}`, o.bytes, [WORD]);
    assertAbsent("the extension's socket frames", (await recorded()).join("\n"), [WORD]);
    assertAbsent("the action records", await (await api(h.mimo, `/api/task/${taskId}/actions`)).text(), [WORD]);
  });

  it("a page that echoes a typed secret in its address, text, a field, its title and base64: no spelling of it reaches the events, the export, the archive, the model or a screenshot", { timeout: 120_000 }, async () => {
    const taskId = await newTask(h.mimo);
    await putSecret(h, taskId, "pw", PW, [h.a]);
    await startRecording();
    const before = h.mimo.llm.requests().length;
    h.mimo.llm.script([
      agentStep({ navigate: { url: `${h.a}/echo.html` } }, "Nothing done yet."),
      onElement("Search for", (index) => ({ type: { index, text: "{{secret:pw}}", submit: true } }), "On the search page."),
      agentStep({ done: { success: true, text: "Searched." } }, "Results shown."),
    ]);
    const web = await WebClient.connect(h.mimo, taskId);
    web.send({ type: "user_message", content: `Search ${h.a}/echo.html for my password` });
    const result = (await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 90_000)) as Output & EventEnvelope;
    assert.equal(result.status, "ok", JSON.stringify(result));

    // The page did echo it: percent-encoded in its address, raw in its text and a field.
    const page = await pageAt(h, `${h.a}/echo.html?${new URLSearchParams({ q: PW })}`);
    assert.equal(await page.locator("#echo").textContent(), `You searched for ${PW}`);
    assert.equal(await page.locator("#copy").inputValue(), PW);

    // A screenshot now, as evidence: the elements showing the value are covered, the rest not.
    const jpeg = await screenshot(taskId);
    const width = await page.evaluate(() => innerWidth);
    for (const id of ["#echo", "#token", "#copy"]) {
      const got = await pixels(h, jpeg, width, await across(page, id));
      assert.ok(got.every((p) => near(p, MASK)), `${id} is not masked: ${JSON.stringify(got)}`);
    }
    const heading = await pixels(h, jpeg, width, await across(page, "h1"));
    assert.ok(heading.some((p) => !near(p, MASK)), `the heading is masked: ${JSON.stringify(heading)}`);
    assert.equal(await page.locator("#__mimo_capture_mask").count(), 0);
    await ok(h, taskId, { name: "browser_get_html", params: {} });

    // Nothing holds any spelling of it: the extension's frames (tab events, the browser's
    // snapshot, results), R2, the events, the model's requests (<page>, <browser_tabs>), the
    // action records, the export, the audit log and every file of the evidence archive.
    const frames = (await recorded()).join("\n");
    assert.match(frames, /echo\.html\?q=\{\{secret:pw\}\}/, "the tab's address went out with the placeholder");
    assertAbsent("the extension's socket frames", frames, [PW]);
    for (const o of await r2Objects(`tasks/${taskId}/`)) assertAbsent(`R2 object ${o.key}`, o.bytes, [PW]);
    const requests = JSON.stringify(h.mimo.llm.requests().slice(before).map((r) => r.body));
    assert.match(requests, /echo\.html\?q=\{\{secret:pw\}\}/, "the model was shown the address with the placeholder");
    assertAbsent("the model's requests", requests, [PW]);
    assertAbsent("the web app's events", JSON.stringify(web.received), [PW]);
    assertAbsent("the action records", await (await api(h.mimo, `/api/task/${taskId}/actions`)).text(), [PW]);
    assertAbsent("the export", await (await api(h.mimo, `/api/task/${taskId}/export`)).text(), [PW]);
    const audit = await (await api(h.mimo, `/api/task/${taskId}/audit.jsonl`)).text();
    assertAbsent("the audit log", audit, [PW]);
    const work = await mkdtemp(path.join(tmpdir(), "mimo-echo-"));
    try {
      const zip = path.join(work, "evidence.zip");
      await writeFile(zip, Buffer.from(await (await api(h.mimo, `/api/task/${taskId}/export.zip`)).arrayBuffer()));
      const names = unzip(zip, path.join(work, "files"));
      assert.ok(names.some((n) => n.startsWith("screenshots/")), names.join(", "));
      for (const name of names) assertAbsent(`${name} of the archive`, await readFile(path.join(work, "files", name)), [PW]);
      // The agent's own screenshot of the results page covers the echo too.
      type Shown = { url: string; screenshotArtifactId?: string };
      const shown = audit.trimEnd().split("\n").flatMap((l) => {
        const r = JSON.parse(l) as { before?: Shown; after?: Shown };
        return [r.before, r.after];
      });
      const results = shown.find((p) => p?.url.includes("?q=") === true && p.screenshotArtifactId !== undefined);
      assert.ok(results !== undefined, audit);
      const shot = await readFile(path.join(work, "files", `screenshots/${results.screenshotArtifactId}.jpg`));
      const echo = await pixels(h, shot, width, await across(page, "#echo"));
      assert.ok(echo.every((p) => near(p, MASK)), `#echo is not masked in the agent's screenshot: ${JSON.stringify(echo)}`);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    web.close();
  });
});

describe("personal data in evidence", () => {
  it("is kept out of stored page text, HTML and screenshots while the model still reads the e-mail", { timeout: 120_000 }, async () => {
    const taskId = await newTask(h.mimo);
    const before = h.mimo.llm.requests().length;
    h.mimo.llm.script([
      agentStep({ navigate: { url: `${h.a}/profile.html` } }, "Nothing done yet."),
      agentStep({ done: { success: true, text: "Receipts go to the address on the page." } }, "Read it."),
    ]);
    const web = await WebClient.connect(h.mimo, taskId);
    web.send({ type: "user_message", content: `Which e-mail address do receipts go to? See ${h.a}/profile.html` });
    const result = (await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 90_000)) as Output & EventEnvelope;
    assert.equal(result.status, "ok", JSON.stringify(result));
    const page = await pageAt(h, `${h.a}/profile.html`);
    // HTML and a screenshot of the same page, as evidence.
    const { result: html } = await ok<{ artifactId: string }>(h, taskId, { name: "browser_get_html", params: {} });
    const jpeg = await screenshot(taskId);

    // The model read the page with the e-mail address (its own setting: off by default).
    const requests = JSON.stringify(h.mimo.llm.requests().slice(before).map((r) => r.body));
    assert.ok(requests.includes("jane.doe@example.com"), "the model saw the e-mail address");

    // Stored evidence holds none of it.
    const personal = ["jane.doe@example.com", "+1 (555) 123-4567", "555) 123-4567", "4111 1111 1111 1111", "sk-live-4f9Kx2mQ8vN3bR7tY1uP6wZ0"];
    const objects = await r2Objects(`tasks/${taskId}/`);
    const texts = objects.filter((o) => /\/(readability|html)\//.test(o.key));
    assert.ok(texts.length >= 2, `page text and HTML were stored: ${objects.map((o) => o.key).join(", ")}`);
    for (const o of objects) assertAbsent(`R2 object ${o.key}`, o.bytes, personal);
    const htmlText = await (await downloadArtifact(h, html.artifactId)).text();
    assert.match(htmlText, /\[email redacted\]/);
    assert.match(htmlText, /\[card redacted\]/);
    assert.match(htmlText, /\[phone redacted\]/);
    assert.match(htmlText, /\[token redacted\]/);
    // What is not personal data stays: order number, date, tracking number, the nickname.
    for (const kept of ["2024-000123", "2024-01-15", "1Z999AA10123456784", 'value="JD"']) assert.ok(htmlText.includes(kept), `${kept} was filtered out`);

    // The screenshot covers the fields holding personal data, not the others.
    const width = await page.evaluate(() => innerWidth);
    for (const id of ["#email", "#phone"]) {
      const got = await pixels(h, jpeg, width, await across(page, id));
      assert.ok(got.every((p) => near(p, MASK)), `${id} is not masked: ${JSON.stringify(got)}`);
    }
    const nick = await pixels(h, jpeg, width, await across(page, "#nick"));
    assert.ok(nick.some((p) => !near(p, MASK)), "the nickname field is masked");
    web.close();
  });
});
