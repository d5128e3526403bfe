// What both benchmark scripts share: their statistics, and how much they measure. `make bench`
// measures in full; `MIMO_BENCH_QUICK=1` (run by `make test`) measures each figure a few times
// only, so that CI fails when the benchmark breaks — figures, never asserted timings.

const QUICK = process.env.MIMO_BENCH_QUICK === "1";

/** `full` for `make bench`, `quick` for the quick mode in `make test`. */
export function sized<T>(full: T, quick: T): T {
  return QUICK ? quick : full;
}

/** The upper median (the middle value; of an even count, the upper of the two). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
