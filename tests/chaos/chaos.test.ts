// Ten seeded chaos runs in `make test` (the full 200 are `make chaos`): faults at random
// moments, and no action lost or doubled, every task ended completed or with a clear error.
import assert from "node:assert/strict";
import { it } from "node:test";
import { chaos } from "./chaos.ts";

it("survives ten seeded runs of faults: nothing lost, nothing doubled, every end clear", { timeout: 20 * 60_000 }, async () => {
  const lines: string[] = [];
  const summary = await chaos(10, Number(process.env.CHAOS_SEED ?? 1), (line) => {
    lines.push(line);
    console.log(line);
  });
  assert.equal(summary.runs, 10);
  assert.deepEqual(summary.failingSeeds, [], lines.join("\n"));
  assert.equal(summary.lost, 0);
  assert.equal(summary.doubled, 0);
  assert.equal(summary.unclear, 0);
  assert.equal(summary.silent, 0, "no running task went 30 s without an event");
});
