// Chaos, measured: seeded end-to-end agent tasks (the real worker in workerd, the real
// extension in Chromium, the scripted LLM) while faults strike at random moments — the
// extension's service worker stopped, its socket dropped, its frames sent late and twice, the
// web app's socket dropped, the coordinator evicted, the runtime restarted, the page blocked by
// a long script or by a confirm() dialog, the page opening a sign-in popup window (which the
// model answers, or the person closes), the LLM stalling or answering 429/500.
//
// Every run buys two blue mugs at the fixture shop. Afterwards it counts, from the server's
// records, the extension's own action log and the page's cart:
// - lost: an action asked for that never ended (not done, not failed);
// - doubled: a page-changing action run twice (two runs in the extension's log, or more mugs in
//   the cart than the task put there);
// - unclear: a task that ended neither completed nor with a clear error (or did not end);
// - silent: the watchdog — the longest time the running task went without an event in its
//   history (by the server's clock), from the goal to the outcome; over 30 s fails the run.
// A failing run prints its seed; `CHAOS_SEED=<seed> CHAOS_RUNS=1 make chaos` replays it.
import type { ActionOutcome, EventEnvelope, FrontendEvent, FrontendMessage } from "../../protocol/ts/protocol.ts";
import { ACTION_TRAITS } from "../../protocol/ts/protocol.ts";
import type { ScriptTurn } from "../llm-server/server.ts";
import { seeded } from "../../extension/src/random.ts";
import { api, newTask, sleep, WebClient } from "../support/clients.ts";
import { twoBlueMugsPolicy } from "../support/shopper.ts";
import { extensionStorage, serviceWorker, startHarness, stopServiceWorker } from "../browser/harness.ts";
import type { ActionRecord, Harness } from "../browser/harness.ts";

type Fault = "stop_worker" | "drop_extension_socket" | "drop_web_socket" | "evict_coordinator" | "restart_runtime" | "long_script" | "dialog" | "popup" | "mangle_frames";
const FAULTS: Fault[] = ["stop_worker", "drop_extension_socket", "drop_web_socket", "evict_coordinator", "restart_runtime", "long_script", "dialog", "popup", "mangle_frames"];

/** The longest a running task may go without an event (issue 26: no silent stall). */
const WATCHDOG_MS = 30_000;
/** A run quiet for longer than this prints its events (the web app says what it waits for from 10 s). */
const QUIET_TOLD_MS = 10_000;

/** Codes that end a task with an answer a person can act on. */
const CLEAR_ERRORS = new Set(["PLUGIN_OFFLINE", "PAGE_PREP_FAILED", "STEP_LIMIT_EXCEEDED", "LOOP_DETECTED", "BUDGET_EXCEEDED", "LLM_ERROR", "PLUGIN_TIMEOUT_EXEC", "PLUGIN_TIMEOUT_ACK", "TASK_TAB_CLOSED", "TIMEOUT"]);

export type RunReport = {
  seed: number;
  faults: string[];
  status: "ok" | "error" | "none";
  code?: string;
  lost: string[];
  doubled: string[];
  unclear: string | undefined;
  /** The task's events (seq@seconds:type), for a failing run or one quiet for long. */
  story?: string;
  /** The longest gap between the task's events from its goal to its outcome, and after which event. */
  quiet: { ms: number; after: string };
  actions: number;
  ms: number;
};

type Output = Extract<FrontendEvent, { type: "structuredOutput" }>;

/**
 * The model's turns with provider trouble mixed in: a 429, a 500 or a stall before some steps.
 * The model decides from the page it is shown, so a call re-run after a restart or retried
 * answers for the page as it is.
 */
function turnsWithTrouble(shop: string, random: () => number, faults: string[]): ScriptTurn[] {
  const turns: ScriptTurn[] = [];
  for (const [i, turn] of twoBlueMugsPolicy(shop).entries()) {
    if (i >= 7) {
      turns.push(turn);
      continue;
    }
    const roll = random();
    if (roll < 0.08) {
      turns.push({ error: { status: 429, message: "Rate limit reached", retryAfter: 0 } });
      faults.push("llm_429");
    } else if (roll < 0.14) {
      turns.push({ error: { status: 500, message: "Internal error" } });
      faults.push("llm_500");
    } else if (roll < 0.2) {
      turns.push({ ...turn, stallMs: 1_500 + Math.floor(random() * 2_000) });
      faults.push("llm_stall");
      continue;
    }
    turns.push(turn);
  }
  return turns;
}

/** The shop's cart in the browser (localStorage of the fixture origin). */
async function cartOf(h: Harness): Promise<Record<string, number>> {
  const page = await h.context.newPage();
  try {
    await page.goto(`${h.a}/shop/cart.html`);
    return await page.evaluate(() => JSON.parse(localStorage.getItem("cart") ?? "{}") as Record<string, number>);
  } finally {
    await page.close();
  }
}

async function emptyCart(h: Harness): Promise<void> {
  const page = await h.context.newPage();
  await page.goto(`${h.a}/shop/cart.html`);
  await page.evaluate(() => localStorage.removeItem("cart"));
  await page.close();
}

async function chaosHooks(h: Harness, call: "dropSocket" | "chaos", arg?: unknown): Promise<void> {
  const worker = await serviceWorker(h);
  await worker.evaluate(
    ({ call, arg }) => {
      const hooks = (globalThis as unknown as { __mimoTest?: Record<string, (a?: unknown) => void> }).__mimoTest;
      hooks?.[call]?.(arg);
    },
    { call, arg },
  );
}

/** The web app's side of a run: its socket, and the goal it sent (with its own message id). */
/** `earlier`: what the sockets it replaced received (the new one resumes after their last event). */
type WebSide = { socket: WebClient; goal: FrontendMessage; earlier: EventEnvelope[] };

/**
 * Connects again from the last event seen, as the web app does, and sends the goal again: the
 * first one may have died with the old socket, and the server stores a message id once.
 */
async function reconnect(h: Harness, taskId: string, web: WebSide): Promise<void> {
  // The outcome may have come just before the old socket closed: the new one never sees it again.
  web.earlier.push(...(web.socket.received as EventEnvelope[]));
  web.socket = await WebClient.connect(h.mimo, taskId, web.socket.lastSeq());
  web.socket.send(web.goal);
}

/**
 * The person's answers to the dialogs a page shows, each after its delay (in the order struck).
 * One listener per page: a second dialog struck while the first is open is answered too, not
 * left to hold the page (two `once` listeners would both take the first).
 */
const dialogAnswers = new WeakMap<import("playwright-core").Page, number[]>();
function answerDialogs(page: import("playwright-core").Page): number[] {
  let delays = dialogAnswers.get(page);
  if (delays === undefined) {
    const queue: number[] = [];
    dialogAnswers.set(page, (delays = queue));
    page.on("dialog", (dialog) => void setTimeout(() => void dialog.dismiss().catch(() => undefined), queue.shift() ?? 1_000));
  }
  return delays;
}

/** Whether `quiet()` holds within `ms` (polled). */
async function idle(quiet: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!quiet()) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

/** Strikes one fault. The web socket is passed by reference so a dropped one can be replaced. */
async function strike(h: Harness, fault: Fault, taskId: string, web: WebSide, random: () => number): Promise<void> {
  switch (fault) {
    case "stop_worker":
      await stopServiceWorker(h).catch(() => undefined);
      // Chrome starts it again for the next event; the options page's wake does it now.
      await sleep(200);
      await h.options.reload().catch(() => undefined);
      return;
    case "drop_extension_socket":
      return chaosHooks(h, "dropSocket").catch(() => undefined);
    case "drop_web_socket":
      await web.socket.close();
      return reconnect(h, taskId, web);
    case "evict_coordinator":
      // The runtime evicts an idle object: none busy with a request, and none waiting on I/O of
      // its own (a model's answer, or the pause before a model call is tried again).
      // miniflare's eviction would cut such a wait too, and leave the old instance running it
      // out (until the model call's timeout) while the task's sockets and messages wait for
      // the new one: no deployment does that (a restart, which kills a busy object, is
      // `restart_runtime`). So it strikes once no model call is open or due, or not at all; a
      // call that starts just as it strikes is still cut (that run goes quiet until the call's
      // timeout, 20 s, within the watchdog's bound). Not running (hibernated already) is as
      // evicted as it gets.
      const pausing = () => web.socket.received.some((e) => e.type === "modelRetry" && e.at + e.delayMs + 500 > Date.now());
      if (!(await idle(() => h.mimo.llm.open() === 0 && !pausing(), 5_000))) return;
      return h.mimo.evictTask(taskId).catch((e: unknown) => {
        if (!/not currently running|still has active references/.test(String(e))) throw e;
      });
    case "restart_runtime":
      await h.mimo.restart();
      return reconnect(h, taskId, web);
    case "long_script": {
      const page = h.context.pages().find((p) => p.url().startsWith(`${h.a}/shop/`));
      // Not awaited: the page's main thread is busy for a while, as under a heavy script.
      void page?.evaluate((ms) => {
        const end = Date.now() + ms;
        while (Date.now() < end);
      }, 1_000 + Math.floor(random() * 2_000)).catch(() => undefined);
      return;
    }
    case "dialog": {
      // The page opens a confirm() that the person answers a few seconds later; meanwhile the
      // page is blocked, and whatever input reaches it waits.
      const page = h.context.pages().find((p) => p.url().startsWith(`${h.a}/shop/`));
      if (page === undefined) return;
      answerDialogs(page).push(1_000 + Math.floor(random() * 3_000));
      void page.evaluate(() => confirm("Leave this page?")).catch(() => undefined);
      return;
    }
    case "popup": {
      // The shop opens a sign-in window the way OAuth providers do (window features, a redirect
      // or two first). It joins the task and the task goes on in it: the model answers it
      // (its button closes it), or the person closes it first; either way the task goes on in
      // the shop.
      const page = h.context.pages().find((p) => p.url().startsWith(`${h.a}/shop/`));
      if (page === undefined) return;
      const hops = Math.floor(random() * 3);
      const closeAfter = random() < 0.5 ? 500 + Math.floor(random() * 3_000) : undefined;
      if (closeAfter !== undefined) {
        // The window this page opens: not whichever page opens next (the task's own tab, when
        // the task starts meanwhile, which the person would then have closed).
        void page
          .waitForEvent("popup", { timeout: 5_000 })
          .then((popup) => setTimeout(() => void popup.close().catch(() => undefined), closeAfter))
          .catch(() => undefined);
      }
      void page.evaluate((hops) => void window.open(`/popup-auth.html?hops=${hops}`, "provider", "popup,width=480,height=600"), hops).catch(() => undefined);
      return;
    }
    case "mangle_frames":
      return chaosHooks(h, "chaos", { seed: Math.floor(random() * 2 ** 31), duplicate: 0.3, maxDelayMs: 150 });
  }
}

/** One seeded run: the purchase under faults, then the counts. */
export async function chaosRun(h: Harness, seed: number): Promise<RunReport> {
  const started = Date.now();
  const random = seeded(seed);
  const faults: string[] = [];
  await emptyCart(h);
  const shop = `${h.a}/shop/index.html`;
  h.mimo.llm.reset();
  h.mimo.llm.script(turnsWithTrouble(shop, random, faults));
  const taskId = await newTask(h.mimo);
  const goal: FrontendMessage = { type: "user_message", content: `Open ${shop}, find the blue mug and add two to the cart`, clientMessageId: `goal-${seed}` };
  const web: WebSide = { socket: await WebClient.connect(h.mimo, taskId), goal, earlier: [] };
  web.socket.send(goal);

  // Two to four faults at random moments of the run (it takes a few seconds).
  const strikes = 2 + Math.floor(random() * 3);
  const plan = Array.from({ length: strikes }, () => ({ at: random() * 6_000, fault: FAULTS[Math.floor(random() * FAULTS.length)]! })).sort((a, b) => a.at - b.at);
  let output: (Output & EventEnvelope) | undefined;
  const finished = () => [...web.earlier, ...web.socket.received].find((e) => e.type === "structuredOutput") as (Output & EventEnvelope) | undefined;
  for (const { at, fault } of plan) {
    const wait = started + at - Date.now();
    if (wait > 0) await sleep(wait);
    if ((output = finished()) !== undefined) break;
    faults.push(fault);
    await strike(h, fault, taskId, web, random);
  }
  // The outcome, replayed from the history if the socket that saw it was replaced.
  const deadline = Date.now() + 90_000;
  while ((output = finished()) === undefined && Date.now() < deadline) {
    if (web.socket.closed) await reconnect(h, taskId, web).catch(() => undefined);
    await sleep(250);
  }
  await chaosHooks(h, "chaos", null).catch(() => undefined);
  // Let late frames land before counting.
  await sleep(1_000);
  const records = (await (await api(h.mimo, `/api/task/${taskId}/actions`)).json()) as ActionRecord[];
  const { "actions.index": index = [] } = await extensionStorage<{ "actions.index"?: Array<{ key: string; taskId: string; name: string; status: ActionOutcome["status"] }> }>(h, ["actions.index"]);
  const cart = await cartOf(h);
  await web.socket.close();

  const lost = records.filter((r) => !["succeeded", "failed", "timed_out", "canceled"].includes(r.state)).map((r) => `${r.command.name} ${r.actionId} left ${r.state}`);
  const doubled: string[] = [];
  for (const r of records) {
    if (ACTION_TRAITS[r.command.name].rerun === "read_only") continue;
    const ran = index.filter((e) => e.key.startsWith(`${r.actionId}#`) && e.status !== "error");
    if (ran.length > 1) doubled.push(`${r.command.name} ${r.actionId} ran ${ran.length} times`);
  }
  const history = (await (await api(h.mimo, `/api/task/${taskId}/export`)).json()) as { events: Array<{ type: string; at: number; message?: { role: string } }> };
  // The watchdog: the longest the task went without an event, from the goal to the outcome.
  const quiet = { ms: 0, after: "none" };
  const first = history.events.findIndex((e) => e.type === "message" && e.message?.role === "user");
  const last = history.events.findIndex((e) => e.type === "structuredOutput");
  const running = history.events.slice(Math.max(0, first), last < 0 ? undefined : last + 1);
  for (const [i, e] of running.entries()) {
    const gap = (running[i + 1]?.at ?? (last < 0 ? Date.now() : e.at)) - e.at;
    if (gap > quiet.ms) Object.assign(quiet, { ms: gap, after: e.type });
  }
  const goals = history.events.filter((e) => e.type === "message" && e.message?.role === "user").length;
  if (goals > 1) doubled.push(`the goal was stored ${goals} times`);
  const mugs = cart["blue-mug"] ?? 0;
  if (mugs > 2) doubled.push(`the cart holds ${mugs} blue mugs, the task added 2`);
  let unclear: string | undefined;
  if (output === undefined) unclear = "the task did not end within 90 s";
  else if (output.status === "ok" && mugs !== 2) unclear = `the task says it is done but the cart holds ${mugs} blue mugs`;
  else if (output.status === "error" && !CLEAR_ERRORS.has(output.error?.code ?? "")) unclear = `ended with ${JSON.stringify(output.error)}`;
  else if (quiet.ms > WATCHDOG_MS) unclear = `silent for ${(quiet.ms / 1000).toFixed(1)} s after ${quiet.after}`;
  // What the task's history says, to start the diagnosis from: for a failing run, one that
  // ended with an error (clear, but why?), and one that went quiet for long (within the
  // watchdog's bound, but a person would wonder).
  let story: string | undefined;
  if (unclear !== undefined || lost.length > 0 || doubled.length > 0 || quiet.ms > QUIET_TOLD_MS || output?.status === "error") {
    const exported = (await (await api(h.mimo, `/api/task/${taskId}/export`)).json()) as { task: { status: string }; events: Array<{ seq: number; at: number; type: string; status?: string; error?: unknown; phase?: string; reason?: string }> };
    const start = exported.events[0]?.at ?? 0;
    const events = exported.events.map((e) => `${e.seq}@${((e.at - start) / 1000).toFixed(1)}:${e.type}${e.status ? `=${e.status}` : ""}${e.phase ? `/${e.phase}` : ""}${e.error ? ` ${JSON.stringify(e.error)}` : ""}${e.reason ? `(${e.reason})` : ""}`);
    const failures = records.flatMap((r) => (r.outcome?.error ? [`${r.command.name}@tab${r.tabId ?? "?"}: ${r.outcome.error.code} ${r.outcome.error.message.slice(0, 160)}`] : []));
    story = `[task ${exported.task.status}; events ${events.join(" ")}${failures.length > 0 ? `; failed actions: ${failures.join(" | ")}` : ""}]`;
  }
  return {
    seed,
    faults,
    status: output === undefined ? "none" : output.status === "ok" ? "ok" : "error",
    code: output?.error?.code,
    lost,
    doubled,
    unclear,
    story,
    quiet,
    actions: records.length,
    ms: Date.now() - started,
  };
}

export type Summary = {
  runs: number;
  completed: number;
  clearErrors: number;
  lost: number;
  doubled: number;
  unclear: number;
  /** The watchdog: runs silent for over 30 s, and the longest silence of any run (ms). */
  silent: number;
  longestQuietMs: number;
  failingSeeds: number[];
  faults: Record<string, number>;
};

/** Runs `runs` seeded runs from `firstSeed` on one harness; prints each failing run. */
export async function chaos(runs: number, firstSeed: number, log: (line: string) => void = console.log): Promise<Summary> {
  const h = await startHarness();
  const summary: Summary = { runs: 0, completed: 0, clearErrors: 0, lost: 0, doubled: 0, unclear: 0, silent: 0, longestQuietMs: 0, failingSeeds: [], faults: {} };
  try {
    for (let i = 0; i < runs; i++) {
      const seed = firstSeed + i;
      // A run that throws (a fault the harness could not strike, say) is a failing run with
      // its seed, not the end of the series.
      const report = await chaosRun(h, seed).catch(
        (error: unknown): RunReport => ({ seed, faults: [], status: "none", lost: [], doubled: [], unclear: `the run failed: ${String(error)}`, quiet: { ms: 0, after: "none" }, actions: 0, ms: 0 }),
      );
      summary.runs++;
      if (report.status === "ok") summary.completed++;
      else if (report.unclear === undefined) summary.clearErrors++;
      summary.lost += report.lost.length;
      summary.doubled += report.doubled.length;
      if (report.unclear !== undefined) summary.unclear++;
      if (report.quiet.ms > WATCHDOG_MS) summary.silent++;
      summary.longestQuietMs = Math.max(summary.longestQuietMs, report.quiet.ms);
      for (const f of report.faults) summary.faults[f] = (summary.faults[f] ?? 0) + 1;
      const failed = report.lost.length > 0 || report.doubled.length > 0 || report.unclear !== undefined;
      if (failed) summary.failingSeeds.push(report.seed);
      log(
        `run ${i + 1}/${runs} seed ${report.seed}: ${report.status}${report.code ? ` ${report.code}` : ""}, ${report.actions} actions, ${(report.ms / 1000).toFixed(1)} s, longest silence ${(report.quiet.ms / 1000).toFixed(1)} s (after ${report.quiet.after}), faults ${report.faults.join(" ") || "none"}` +
          (failed ? ` — FAILED: ${[...report.lost, ...report.doubled, report.unclear ?? ""].filter(Boolean).join("; ")}` : "") +
          (report.story !== undefined ? ` ${report.story}` : ""),
      );
    }
  } finally {
    await h.close();
  }
  return summary;
}
