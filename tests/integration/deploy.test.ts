// `wrangler deploy --dry-run` validates wrangler.toml and bundles the built worker exactly as a
// real deploy would, without an account: it must keep passing.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { it } from "node:test";
import { ROOT } from "../support/mimo.ts";

it("wrangler deploy --dry-run accepts the configuration and the bundle", () => {
  const outdir = mkdtempSync(path.join(tmpdir(), "mimo-dry-run-"));
  try {
    const run = spawnSync("wrangler", ["deploy", "--dry-run", "--outdir", outdir], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
      timeout: 180_000,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    assert.equal(run.status, 0, output);
    assert.match(output, /--dry-run: exiting now/);
    for (const binding of ["TASK_COORDINATOR", "EXTENSION_REGISTRY", "SKILL_LIBRARY", "TASK_INDEX", "MCP_SESSION", "WEBHOOK_DISPATCHER", "ARTIFACTS", "ASSETS"]) {
      assert.match(output, new RegExp(binding), `the bundle binds ${binding}`);
    }
    assert.ok(statSync(path.join(outdir, "index.js")).size > 0);
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
});
