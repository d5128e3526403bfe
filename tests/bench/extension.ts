// `make bench`, the extension's part: figures measured in one run in real Chromium with the
// real extension and the built worker in Miniflare.
//   - DOM index time and serialized size (bytes, and tokens estimated at 4 bytes each) for a
//     10,000-element page and for a mid-size page, viewport and whole-document scope (a whole
//     document too large for one message is also uploaded whole as an artifact: that time counts)
//   - the observation's parts one by one and at once, and the readable text of a page that has
//     not changed since it was read (given again) beside a changed page's
//   - the round trip of a CDP click: server → extension → page → back, through the worker
//   - the agent's step overhead without the LLM: from the model's tool call complete (the
//     scripted LLM server wrote its last frame) to the next LLM request, for click steps on the
//     750-element page — the click, the page preparation (load, screenshot, readability, index)
//     and the prompt, with the screenshot read from R2 for the model — beside the bare click
//     round trip measured in the same run
//   - the same run with MIMO_AGENT_VISION on and off, in one bench run: the screenshot bytes
//     sent to the model per step, the whole request per step, and the step overhead, side by side
//     (the element list itself is the same either way: no marks are drawn on the screenshot)
import type { ActionCommand, DomElement, DomIndexResult, EventEnvelope } from "../../protocol/ts/protocol.ts";
import { act, ok, startHarness, startTask } from "../browser/harness.ts";
import type { ActionRecord, Harness } from "../browser/harness.ts";
import { api, newTask, WebClient } from "../support/clients.ts";
import { agentStep, onElement } from "../support/shopper.ts";
import { median, percentile, sized } from "./figures.ts";

const RUNS = sized(5, 1);
const CLICKS = sized(30, 3);

async function indexFigures(h: Harness, label: string, url: string) {
  const { taskId } = await startTask(h, url);
  for (const scope of ["viewport", "document"] as const) {
    const times: number[] = [];
    const records: TimedRecord[] = [];
    let result: DomIndexResult | undefined;
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      const done = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: { scope } }, { partial: true });
      const total = performance.now() - started;
      times.push(total);
      result = done.result;
      records.push({ ...(done.record as TimedRecord), total });
    }
    const bytes = Buffer.byteLength(JSON.stringify(result));
    const textBytes = Buffer.byteLength(result!.text);
    console.log(
      `  ${label.padEnd(28)} ${scope.padEnd(8)} ${median(times).toFixed(0).padStart(5)} ms   ` +
        `${result!.elements.length.toString().padStart(5)} elements   ${(bytes / 1024).toFixed(1).padStart(7)} KiB   ` +
        `text form ${(textBytes / 1024).toFixed(1)} KiB ≈ ${Math.round(textBytes / 4)} tokens` +
        (result!.artifactId !== undefined ? "   (cut to fit one message; the whole index went to R2 as an artifact)" : ""),
    );
    console.log(`${" ".repeat(39)}of which (medians, ms): ${breakdown(records)}`);
  }
}

async function clickRoundTrip(h: Harness) {
  const { taskId } = await startTask(h, `${h.a}/buttons.html`);
  const { result } = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: { scope: "viewport" } });
  const button = result.elements.find((e: DomElement) => e.tag === "button");
  if (!button) throw new Error("the fixture has no button");
  await act(h, taskId, { name: "browser_debugger_attach", params: {} });
  const times: number[] = [];
  const records: TimedRecord[] = [];
  for (let i = 0; i < CLICKS; i++) {
    const started = performance.now();
    const { record } = await ok(h, taskId, { name: "browser_click", params: { clickId: button.clickId, strategy: "cdp_mouse" } });
    const total = performance.now() - started;
    times.push(total);
    records.push({ ...(record as TimedRecord), total });
  }
  console.log(`  CDP click, server → page → server: median ${median(times).toFixed(1)} ms   p90 ${percentile(times, 90).toFixed(1)} ms (${CLICKS} clicks)`);
  console.log(`  of which (medians, ms): ${breakdown(records)}`);
  return median(times);
}

type TimedRecord = ActionRecord & { sentAt?: number; finishedAt?: number; total?: number };

/**
 * Where attempts' time went, stage by stage (medians): the API call and the task's object
 * before and after (`server`), the way to the extension and back through the registry and the
 * socket, with the extension's write of the outcome to its action log (`transport`), then each
 * stage the extension timed (`ActionOutcome.timings`).
 */
function breakdown(records: TimedRecord[]): string {
  const spans = new Map<string, number[]>();
  const add = (stage: string, ms: number) => spans.set(stage, [...(spans.get(stage) ?? []), ms]);
  for (const r of records) {
    if (r.sentAt === undefined || r.finishedAt === undefined) continue;
    const span = r.finishedAt - r.sentAt;
    const stages = r.outcome?.timings ?? [];
    if (r.total !== undefined) add("server", r.total - span);
    // A part (`outer.part`) ran beside others within its stage: its time is in that stage's.
    add("transport", span - stages.filter((s) => !s.stage.includes(".")).reduce((sum, s) => sum + s.ms, 0));
    for (const s of stages) add(s.stage, s.ms);
  }
  return [...spans].map(([stage, ms]) => `${stage} ${median(ms).toFixed(1)}`).join(", ");
}

/**
 * The page's observation after a step (`browser_observe`: the three captures at once) beside
 * its captures one action each, on the same page, sent → result as the server sees it.
 */
async function observeFigures(h: Harness) {
  // Its own address: the index figures left a tab open on /big?rows=150, and the page changed
  // before each run must be this task's.
  const { taskId, page } = await startTask(h, `${h.a}/big?rows=150&observe`);
  /** `changed`: the page changes before each run (readable text of an unchanged page is given again). */
  const time = async (command: ActionCommand, changed = true) => {
    const times: number[] = [];
    const acts: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      if (changed) await page.evaluate((run) => (document.body.dataset.benchRun = String(run)), i);
      const { record } = await ok<unknown>(h, taskId, command, { partial: true });
      const timed = record as TimedRecord;
      times.push(timed.finishedAt! - timed.sentAt!);
      acts.push(timed.outcome?.timings?.find((t) => t.stage === "act")?.ms ?? 0);
    }
    return { ms: median(times), act: median(acts) };
  };
  const shot = await time({ name: "browser_screenshot", params: {} });
  const text = await time({ name: "browser_readability_extract", params: {} });
  const unchanged = await time({ name: "browser_readability_extract", params: {} }, false);
  const index = await time({ name: "browser_dom_index", params: {} });
  const look = await time({ name: "browser_observe", params: {} });
  const apart = shot.ms + text.ms + index.ms;
  console.log(
    `  one by one: screenshot ${shot.ms.toFixed(0)} ms (act ${shot.act.toFixed(1)}), readable text ${text.ms.toFixed(0)} ms (act ${text.act.toFixed(1)}), ` +
      `element list ${index.ms.toFixed(0)} ms (act ${index.act.toFixed(1)}): ${apart.toFixed(0)} ms`,
  );
  console.log(`  browser_observe, all three at once: ${look.ms.toFixed(0)} ms (act ${look.act.toFixed(1)}; ${(look.ms / apart).toFixed(2)}× one by one)`);
  console.log(`  readable text of the page unchanged since it was read: ${unchanged.ms.toFixed(0)} ms (act ${unchanged.act.toFixed(1)}; ${(unchanged.ms / text.ms).toFixed(2)}× a changed page's)`);
}

const STEPS = sized(50, 3);

type StepFigures = { overheadMs: number; requestBytes: number; shotBytes: number };

async function stepOverhead(h: Harness, clickMedian: number): Promise<StepFigures> {
  const page = `${h.a}/big?rows=150`;
  const from = h.mimo.llm.requests().length;
  h.mimo.llm.script([
    agentStep({ navigate: { url: page } }),
    // The first button still saying Buy: a clicked one says Added, so each step clicks another.
    ...Array.from({ length: STEPS }, () => onElement("<button>Buy ", (index) => ({ click: { index } }))),
    agentStep({ done: { success: true, text: "Clicked." } }),
  ]);
  const taskId = await newTask(h.mimo);
  const web = await WebClient.connect(h.mimo, taskId);
  web.send({ type: "user_message", content: `Open ${page} and click the first ${STEPS} Buy buttons` });
  const outcome = (await web.waitFor((e) => e.type === "structuredOutput", "the run's end", 600_000)) as EventEnvelope & { status: string };
  web.close();
  if (outcome.status !== "ok") throw new Error(`the run failed: ${JSON.stringify(outcome)}`);
  // Request k+1 follows the tool call of request k; requests 2…51 follow click steps.
  const requests = h.mimo.llm.requests().slice(from);
  const overhead = requests.slice(2, 2 + STEPS).map((r, i) => r.at - requests[i + 1]!.answeredAt!);
  const m = median(overhead);
  console.log(`  tool call → next LLM request, click step: median ${m.toFixed(0)} ms   p90 ${percentile(overhead, 90).toFixed(0)} ms (${STEPS} steps; ${(m / clickMedian).toFixed(1)}× the bare click)`);
  const records = (await (await api(h.mimo, `/api/task/${taskId}/actions`)).json()) as TimedRecord[];
  const byAction = new Map<string, number[]>();
  for (const r of records) {
    if (r.sentAt === undefined || r.finishedAt === undefined) continue;
    byAction.set(r.command.name, [...(byAction.get(r.command.name) ?? []), r.finishedAt - r.sentAt]);
  }
  const parts = [...byAction].filter(([name]) => name !== "task_start").map(([name, t]) => `${name} ${median(t)} ms`);
  console.log(`  of which, per action (median, sent → result): ${parts.join(", ")}`);
  for (const name of byAction.keys()) {
    if (name === "task_start") continue;
    console.log(`    ${name} (medians, ms): ${breakdown(records.filter((r) => r.command.name === name))}`);
  }
  const shots = requests.slice(2, 2 + STEPS).map((r) => r.images.reduce((sum, image) => sum + image.bytes, 0));
  const types = [...new Set(requests.flatMap((r) => r.images.map((image) => image.mediaType)))].join(", ");
  console.log(
    `  screenshot sent to the model per step: median ${(median(shots) / 1024).toFixed(1)} KiB, max ${(Math.max(...shots) / 1024).toFixed(1)} KiB ` +
      `(${types || "none sent"}; one image a request at most: ${requests.every((r) => r.images.length <= 1)})`,
  );
  const bodies = requests.slice(2, 2 + STEPS).map((r) => Buffer.byteLength(JSON.stringify(r.body)));
  console.log(`  whole request to the model per step: median ${(median(bodies) / 1024).toFixed(1)} KiB`);
  return { overheadMs: m, requestBytes: median(bodies), shotBytes: median(shots) };
}

/** One harness with `vision` on or off; the step figures of a run in it. */
async function visionRun(vision: "on" | "off", clickMedian?: number): Promise<{ click: number; steps: StepFigures }> {
  // The step bench runs past the default step limit (40).
  const h = await startHarness({ bindings: { MIMO_AGENT_MAX_STEPS: String(STEPS + 5), MIMO_AGENT_VISION: vision } });
  try {
    if (clickMedian === undefined) {
      console.log(`DOM index (median of ${RUNS}, through the worker)`);
      await indexFigures(h, "10,000-element page", `${h.a}/big`);
      await indexFigures(h, "35,000-element page", `${h.a}/big?rows=7000`);
      await indexFigures(h, "form page (every input type)", `${h.a}/form.html`);
      await indexFigures(h, "750-element page", `${h.a}/big?rows=150`);
      console.log(`Observation of the 750-element page (median of ${RUNS})`);
      await observeFigures(h);
      console.log("Click");
      clickMedian = await clickRoundTrip(h);
    }
    console.log(`Agent step overhead (no LLM time), MIMO_AGENT_VISION=${vision}`);
    return { click: clickMedian, steps: await stepOverhead(h, clickMedian) };
  } finally {
    await h.close();
  }
}

console.log("\nMimo extension benchmarks (one run, this machine)\n");
// Vision "on": the scripted model's name is none known to take images, so "auto" would be off.
const on = await visionRun("on");
const off = await visionRun("off", on.click);
console.log("Vision on / off, per step");
console.log(
  `  request to the model         ${(on.steps.requestBytes / 1024).toFixed(1)} KiB / ${(off.steps.requestBytes / 1024).toFixed(1)} KiB ` +
    `(${(on.steps.requestBytes / off.steps.requestBytes).toFixed(2)}×; the screenshot is ${(on.steps.shotBytes / 1024).toFixed(1)} KiB of it)`,
);
console.log(`  step overhead                ${on.steps.overheadMs.toFixed(0)} ms / ${off.steps.overheadMs.toFixed(0)} ms (${(on.steps.overheadMs / off.steps.overheadMs).toFixed(2)}×)`);
console.log();
