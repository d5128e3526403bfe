// `make bench`, the extension's part: figures measured in one run in real Chromium with the
// real extension and the built worker in Miniflare.
//   - DOM index time and serialized size (bytes, and tokens estimated at 4 bytes each) for a
//     10,000-element page and for a mid-size page, viewport and whole-document scope (a whole
//     document too large for one message is also uploaded whole as an artifact: that time counts)
//   - the round trip of a CDP click: server → extension → page → back, through the worker
import type { DomElement, DomIndexResult } from "../../protocol/ts/protocol.ts";
import { act, ok, startHarness, startTask } from "../browser/harness.ts";
import type { Harness } from "../browser/harness.ts";

const RUNS = 5;
const CLICKS = 30;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function indexFigures(h: Harness, label: string, url: string) {
  const { taskId } = await startTask(h, url);
  for (const scope of ["viewport", "document"] as const) {
    const times: number[] = [];
    let result: DomIndexResult | undefined;
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      ({ result } = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: { scope } }, { partial: true }));
      times.push(performance.now() - started);
    }
    const bytes = Buffer.byteLength(JSON.stringify(result));
    const textBytes = Buffer.byteLength(result!.text);
    console.log(
      `  ${label.padEnd(28)} ${scope.padEnd(8)} ${median(times).toFixed(0).padStart(5)} ms   ` +
        `${result!.elements.length.toString().padStart(5)} elements   ${(bytes / 1024).toFixed(1).padStart(7)} KiB   ` +
        `text form ${(textBytes / 1024).toFixed(1)} KiB ≈ ${Math.round(textBytes / 4)} tokens` +
        (result!.artifactId !== undefined ? "   (cut to fit one message; the whole index went to R2 as an artifact)" : ""),
    );
  }
}

async function clickRoundTrip(h: Harness) {
  const { taskId } = await startTask(h, `${h.a}/buttons.html`);
  const { result } = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: { scope: "viewport" } });
  const button = result.elements.find((e: DomElement) => e.tag === "button");
  if (!button) throw new Error("the fixture has no button");
  await act(h, taskId, { name: "browser_debugger_attach", params: {} });
  const times: number[] = [];
  for (let i = 0; i < CLICKS; i++) {
    const started = performance.now();
    await ok(h, taskId, { name: "browser_click", params: { clickId: button.clickId, strategy: "cdp_mouse" } });
    times.push(performance.now() - started);
  }
  console.log(`  CDP click, server → page → server: median ${median(times).toFixed(1)} ms   p90 ${percentile(times, 90).toFixed(1)} ms (${CLICKS} clicks)`);
}

const h = await startHarness();
try {
  console.log("\nMimo extension benchmarks (one run, this machine)\n");
  console.log("DOM index (median of 5, through the worker)");
  await indexFigures(h, "10,000-element page", `${h.a}/big`);
  await indexFigures(h, "form page (every input type)", `${h.a}/form.html`);
  await indexFigures(h, "750-element page", `${h.a}/big?rows=150`);
  console.log("Click");
  await clickRoundTrip(h);
  console.log();
} finally {
  await h.close();
}
