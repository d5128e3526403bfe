// `wrangler deploy --dry-run` validates wrangler.toml and bundles the built worker exactly as a
// real deploy would, without an account: it must keep passing.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { it } from "node:test";
import { ROOT } from "../support/mimo.ts";

/** `wrangler deploy --dry-run` of one script's configuration: its output and bundle's size. */
function dryRun(config: string): { output: string; bundled: number } {
  const outdir = mkdtempSync(path.join(tmpdir(), "mimo-dry-run-"));
  try {
    const run = spawnSync("wrangler", ["deploy", "--dry-run", "--config", config, "--outdir", outdir], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
      timeout: 180_000,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    assert.equal(run.status, 0, output);
    assert.match(output, /--dry-run: exiting now/);
    return { output, bundled: statSync(path.join(outdir, "index.js")).size };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

const CLASSES = ["TASK_COORDINATOR", "EXTENSION_REGISTRY", "SKILL_LIBRARY", "TASK_INDEX", "MCP_SESSION", "WEBHOOK_DISPATCHER"];

it("wrangler deploy --dry-run accepts the objects' script: it holds every class", () => {
  const { output, bundled } = dryRun("objects/wrangler.toml");
  for (const binding of [...CLASSES, "ARTIFACTS"]) assert.match(output, new RegExp(binding), `the objects' script binds ${binding}`);
  assert.doesNotMatch(output, /defined in mimo-objects|script_name/i, "its classes are its own");
  assert.ok(bundled > 0);
});

it("wrangler deploy --dry-run accepts the route worker: its objects are the objects' script's", () => {
  const { output, bundled } = dryRun("wrangler.toml");
  for (const binding of [...CLASSES, "ARTIFACTS", "ASSETS"]) assert.match(output, new RegExp(binding), `the route worker binds ${binding}`);
  for (const binding of CLASSES) assert.match(output, new RegExp(`${binding}[^\\n]*mimo-objects`), `${binding} names the objects' script`);
  assert.ok(bundled > 0);
});

it("both scripts read the same [vars]", () => {
  const vars = (config: string) => readFileSync(path.join(ROOT, config), "utf8").split(/^\[vars\]$/m)[1];
  assert.ok(vars("wrangler.toml")?.includes("MIMO_LLM_MODEL"));
  assert.equal(vars("objects/wrangler.toml"), vars("wrangler.toml"), "objects/wrangler.toml's [vars] are wrangler.toml's");
});
