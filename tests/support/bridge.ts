// The local bridge for browser tests: the real `mimo-bridge` binary serving a temporary folder
// (a notes file inside it, a secret file outside it reachable through a symlink, a named pipe
// to hold its one slot), and the extension connected to it as a person would.
import { execFileSync, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Harness } from "../browser/harness.ts";
import { ROOT } from "./mimo.ts";

export const SECRET = "a-test-secret-of-the-bridge-0123456789";

/** The bridge binary, built now (cargo's target folder may be anywhere: CARGO_TARGET_DIR). */
export function bridgeBinary(): string {
  execFileSync("cargo", ["build", "-q", "-p", "mimo-bridge"], { cwd: ROOT, stdio: "inherit" });
  const metadata = JSON.parse(execFileSync("cargo", ["metadata", "--format-version", "1", "--no-deps"], { cwd: ROOT, encoding: "utf8" })) as { target_directory: string };
  return path.join(metadata.target_directory, "debug", "mimo-bridge");
}

export type Bridge = { url: string; root: string; outside: string; audit: string; process: ChildProcess };

/** The commands the test bridge runs (`--allow`). */
const ALLOWED = ["cat", "sleep", "ls"];

/** The bridge serving a fresh folder under `dir`, running only the commands of `allow`. */
export async function startBridge(dir: string, allow = ALLOWED): Promise<Bridge> {
  const root = path.join(dir, "shared");
  const outside = path.join(dir, "outside");
  await mkdir(root);
  await mkdir(outside);
  await writeFile(path.join(root, "notes.md"), "buy milk\nbuy eggs\n");
  await writeFile(path.join(outside, "secret.txt"), "the diary\n");
  // A link inside the root to a folder outside it: reading through it is an escape.
  await symlink(outside, path.join(root, "elsewhere"));
  execFileSync("mkfifo", [path.join(root, "hold")]);
  await writeFile(path.join(dir, "secret"), SECRET);
  const audit = path.join(dir, "audit.jsonl");
  const { url, child } = await spawnBridge(dir, 0, allow);
  return { url, root, outside, audit, process: child };
}

/** `mimo-bridge` serving `dir`'s folder on `port` (0: any free one), once it listens. */
export async function spawnBridge(dir: string, port: number, allow = ALLOWED): Promise<{ url: string; child: ChildProcess }> {
  const args = ["--root", path.join(dir, "shared"), "--port", String(port), "--secret-file", path.join(dir, "secret"), "--audit", path.join(dir, "audit.jsonl"), "--pairing-file", path.join(dir, "paired-extension"), "--max-concurrent", "1", "--strict", "--allow", ...allow];
  const child = spawn(bridgeBinary(), args, { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const found = / on (ws:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (found) resolve(found[1]!);
    });
    child.once("exit", (code) => reject(new Error(`mimo-bridge exited with ${code}: ${out}`)));
  });
  return { url, child };
}

/** The extension connected to `bridge`: the person pastes what mimo-bridge printed into its options. */
export async function connectBridge(h: Harness, bridge: Bridge): Promise<void> {
  await h.options.locator("#bridge-url").fill(bridge.url);
  await h.options.locator("#bridge-secret").fill(SECRET);
  await h.options.locator("#bridge-save").click();
  await h.options.locator('#bridge-status[data-state="connected"]').waitFor({ timeout: 15_000 });
}
