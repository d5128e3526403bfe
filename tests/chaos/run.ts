// `make chaos`: CHAOS_RUNS seeded runs (default 200) from CHAOS_SEED (default 1), then the
// figures. Exits non-zero when any run lost or doubled an action or ended unclearly.
import { chaos } from "./chaos.ts";

const runs = Number(process.env.CHAOS_RUNS ?? 200);
const seed = Number(process.env.CHAOS_SEED ?? 1);
const started = Date.now();
const summary = await chaos(runs, seed);
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
console.log(`\nchaos: ${summary.runs} runs in ${minutes} min from seed ${seed}`);
console.log(`  completed ${summary.completed}, clear errors ${summary.clearErrors}, unclear ${summary.unclear}`);
console.log(`  lost ${summary.lost}, doubled ${summary.doubled}`);
console.log(`  watchdog: ${summary.silent} runs silent for over 30 s; the longest silence ${(summary.longestQuietMs / 1000).toFixed(1)} s`);
console.log(`  faults struck: ${Object.entries(summary.faults).map(([f, n]) => `${f} ${n}`).join(", ")}`);
if (summary.failingSeeds.length > 0) console.log(`  failing seeds: ${summary.failingSeeds.join(" ")}`);
process.exit(summary.lost === 0 && summary.doubled === 0 && summary.unclear === 0 ? 0 : 1);
