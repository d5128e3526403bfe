// Drives a Mimo task from a script with the script API (seed 002 §8): Mimo's agent decides each
// step, this script carries it out in a browser of its own (Playwright) and reports what it saw —
// the page's address and title, its text, a screenshot stored as the task's evidence, and the
// list of elements the agent names by index. A step that needs the person is approved or
// declined by `approve` (declined with a reason by default).
//
//   MIMO_URL=http://127.0.0.1:8787 MIMO_API_TOKEN=<token> node examples/script-api.ts \
//     "Put a blue mug in the cart at http://127.0.0.1:8791/shop/product.html"
//
// CHROMIUM names the browser to run (default: /usr/bin/chromium). The test
// tests/browser/script-example.test.ts runs this file against the worker and a page of its own.
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";

/** An action as `next` gives it. */
type Action = {
  taskId: string;
  actionId: string;
  type: string;
  target?: { by: string; value: string };
  params: Record<string, unknown>;
  risk: string;
  requiresConfirmation: boolean;
};

/** What the script saw, as `report` takes it. */
type Observation = {
  url: string;
  title: string;
  visibleTextSnippet: string;
  extracted: unknown;
  artifacts: { screenshots?: string[] };
  errors: Array<{ code: string; message: string }>;
};

export type RunOptions = {
  server: string;
  token: string;
  goal: string;
  browser: Browser;
  /** Whether to run a step that waits for the person (it says what and why). */
  approve?: (action: Action) => boolean;
  log?: (line: string) => void;
};

/** The attribute this script numbers the page's elements with (the agent's `index`). */
const INDEX_ATTR = "data-script-index";

/** Runs the task to its end; answers with its final status (`SUCCEEDED`, `FAILED`, `CANCELED`). */
export async function runTask(options: RunOptions): Promise<{ taskId: string; status: string }> {
  const log = options.log ?? console.log;
  const call = async <T>(route: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${options.server}${route}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${options.token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await res.json()) as T & { code?: string; message?: string };
    if (!res.ok) throw new Error(`${route}: ${answer.code}: ${answer.message}`);
    return answer;
  };
  const started = await call<{ taskId: string; status: string; nextAction: Action | null }>("/api/agent/start", { goal: options.goal, waitMs: 20_000 });
  const { taskId } = started;
  log(`task ${taskId}: ${options.goal}`);
  const context = await options.browser.newContext();
  let page: Page | null = null;
  let next: { action: Action | null; status: string } = { action: started.nextAction, status: started.status };
  let since: string | undefined;
  try {
    for (;;) {
      if (["SUCCEEDED", "FAILED", "CANCELED"].includes(next.status)) return { taskId, status: next.status };
      const action = next.action;
      if (action !== null && action.requiresConfirmation) {
        const approved = options.approve?.(action) ?? false;
        log(`step waits for the person: ${action.type} ${JSON.stringify(action.params)} (${action.risk} risk): ${approved ? "approved" : "declined"}`);
        await call("/api/agent/confirm", { taskId, actionId: action.actionId, approved, ...(approved ? {} : { reason: "the script's owner did not allow it" }) });
      } else if (action !== null) {
        page ??= await context.newPage();
        const observation = await carryOut(page, action, call);
        log(`${action.type}${action.target ? ` ${action.target.by}=${action.target.value}` : ""}: ${observation.errors[0]?.message ?? "done"}`);
        await call("/api/agent/report", { taskId, actionId: action.actionId, observation });
        since = action.actionId;
      }
      next = await call("/api/agent/next", { taskId, ...(since !== undefined ? { sinceActionId: since } : {}), waitMs: 20_000 });
    }
  } finally {
    await context.close();
  }
}

async function carryOut(page: Page, action: Action, call: <T>(route: string, body?: unknown) => Promise<T>): Promise<Observation> {
  const seen = async (extracted: unknown, artifacts: Observation["artifacts"] = {}): Promise<Observation> => ({
    url: page.url(),
    title: await page.title(),
    visibleTextSnippet: (await page.locator("body").innerText().catch(() => "")).slice(0, 500),
    extracted,
    artifacts,
    errors: [],
  });
  const element = () => {
    const t = action.target;
    if (t === undefined) throw new Failure("TARGET_NOT_FOUND", `${action.type} names no element`);
    if (t.by === "index") return page.locator(`[${INDEX_ATTR}="${t.value}"]`);
    if (t.by === "selector") return page.locator(t.value);
    if (t.by === "xpath") return page.locator(`xpath=${t.value}`);
    return page.getByText(t.value, { exact: false });
  };
  const p = action.params;
  try {
    switch (action.type) {
      case "task_start":
        if (typeof p.url === "string") await page.goto(p.url);
        return seen({ tabId: 1, windowId: 1, url: page.url() });
      case "navigate":
        await page.goto(String(p.url));
        return seen({ url: page.url() });
      case "wait_for_loaded":
        await page.waitForLoadState("load");
        return seen({ status: "complete" });
      case "screenshot": {
        // Stored as the task's evidence, as the extension's are.
        const png = await page.screenshot();
        const grant = await call<{ artifactId: string; uploadUrl: string }>("/api/artifacts/presign", { taskId: action.taskId, kind: "screenshot", contentType: "image/png", contentLength: png.byteLength, actionId: action.actionId });
        const put = await fetch(grant.uploadUrl, { method: "PUT", headers: { "content-type": "image/png", "if-none-match": "*" }, body: new Uint8Array(png) });
        if (!put.ok) throw new Failure("INTERNAL_ERROR", `the screenshot was not stored: HTTP ${put.status}`);
        const size = page.viewportSize() ?? { width: 0, height: 0 };
        return seen({ artifactId: grant.artifactId, url: page.url(), width: size.width, height: size.height }, { screenshots: [grant.artifactId] });
      }
      case "readability_extract": {
        const text = await page.locator("body").innerText();
        return seen({ text, title: await page.title(), contentLengthBytes: text.length, truncated: false });
      }
      case "dom_index":
        return seen(await indexPage(page));
      case "click":
        await element().first().click();
        return seen({ clicked: true });
      case "type":
        await element().first().fill(String(p.text ?? ""));
        if (p.submit === true) await element().first().press("Enter");
        return seen({ typed: true });
      case "press_key":
        await page.keyboard.press(String(p.key));
        return seen({ pressed: true });
      case "scroll":
        await page.mouse.wheel(0, p.direction === "up" ? -600 : 600);
        return seen({ scrolled: true });
      default:
        throw new Failure("SCHEMA_VALIDATION_FAILED", `this script does not carry out ${action.type}`);
    }
  } catch (error) {
    const { code, message } = error instanceof Failure ? error : { code: "TARGET_NOT_FOUND", message: String(error) };
    return { ...(await seen(null)), errors: [{ code, message }] };
  }
}

/** An action this script could not carry out, with the error code the agent is told. */
class Failure extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** The page's controls, numbered for the agent: `[3]<button>Add to cart</button>`, one per line. */
async function indexPage(page: Page): Promise<unknown> {
  return page.evaluate((attr) => {
    const controls = Array.from(document.querySelectorAll("a[href], button, input:not([type=hidden]), select, textarea, [role=button]"));
    const elements = [];
    const lines = [];
    let n = 0;
    for (const el of controls) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      n += 1;
      el.setAttribute(attr, String(n));
      const tag = el.localName;
      const text = (el.getAttribute("aria-label") || (el as HTMLElement).innerText || el.getAttribute("placeholder") || el.closest("label")?.textContent || "").replace(/\s+/g, " ").trim().slice(0, 80);
      elements.push({ clickId: n, tag, text, frameId: 0, bbox: { x: Math.round(box.x), y: Math.round(box.y), w: Math.round(box.width), h: Math.round(box.height) } });
      lines.push(`[${n}]<${tag}>${text}</${tag}>`);
    }
    return { elements, text: lines.join("\n"), url: location.href, title: document.title, scrollX: scrollX, scrollY: scrollY };
  }, INDEX_ATTR);
}

// Run directly: the goal is the argument, the server and token from the environment.
if (import.meta.url === `file://${process.argv[1]}`) {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
  try {
    const { status } = await runTask({ server: process.env.MIMO_URL ?? "http://127.0.0.1:8787", token: process.env.MIMO_API_TOKEN ?? "", goal: process.argv.slice(2).join(" "), browser });
    console.log(status);
    process.exitCode = status === "SUCCEEDED" ? 0 : 1;
  } finally {
    await browser.close();
  }
}
