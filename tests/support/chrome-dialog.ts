// Answering Chrome's own permission dialog ("Mimo" has requested additional permissions —
// Deny / Allow) the way a person does. `chrome.permissions.request` always shows it for a host
// permission; headless Chromium cannot show it to anyone, and no command-line switch or DevTools
// command answers it (Chromium's auto-confirm exists only inside its own C++ tests). So the
// browser runs headed on a virtual X display (Xvfb), where the dialog is real, and the test
// presses Tab (from the default "Deny" to "Allow") and Space with xdotool, as keyboard input to
// the browser window.
/// <reference types="chrome" />
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import type { Page } from "playwright-core";
import { sleep } from "./clients.ts";

const run = promisify(execFile);

/** Chrome enables the dialog's "Allow" button this long after showing it (500 ms), plus margin. */
const ALLOW_ENABLED_MS = 900;
const DIALOG_TIMEOUT_MS = 10_000;

export type Display = { display: string; close(): Promise<void> };

/** Starts Xvfb on a free display number (it picks one and writes it to fd 3). */
export async function startXvfb(): Promise<Display> {
  const proc: ChildProcess = spawn("Xvfb", ["-displayfd", "3", "-screen", "0", "1400x1000x24", "-nolisten", "tcp"], { stdio: ["ignore", "ignore", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const number = await new Promise<string>((resolve, reject) => {
    let out = "";
    proc.stdio[3]!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) resolve(out.trim());
    });
    proc.once("exit", (code) => reject(new Error(`Xvfb exited (${code}): ${stderr}`)));
    proc.once("error", reject);
  });
  return {
    display: `:${number}`,
    async close() {
      if (proc.exitCode !== null) return;
      const exited = new Promise((resolve) => proc.once("exit", resolve));
      proc.kill();
      await exited;
    },
  };
}

type Area = { x: number; y: number; w: number; h: number };

/** The mean brightness (0–255) of an area of the screen, from an `xwd` dump of the root window. */
async function brightness(display: string, area: Area): Promise<number> {
  const { stdout } = await run("xwd", ["-root", "-silent", "-display", display], { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 });
  const header = (i: number) => stdout.readUInt32BE(i * 4);
  const [headerSize, width, byteOrder, bitsPerPixel, bytesPerLine, colors] = [header(0), header(4), header(7), header(11), header(12), header(19)];
  assert.equal(bitsPerPixel, 32, "a 24-bit Xvfb screen is dumped at 32 bits per pixel");
  const data = headerSize + colors * 12;
  // Red, green and blue are the low three bytes of each 32-bit pixel.
  const channels = byteOrder === 0 ? [0, 1, 2] : [1, 2, 3];
  let sum = 0;
  let count = 0;
  for (let y = area.y; y < area.y + area.h; y += 4) {
    for (let x = Math.max(0, area.x); x < Math.min(width, area.x + area.w); x += 4) {
      const at = data + y * bytesPerLine + x * 4;
      for (const c of channels) sum += stdout[at + c]!;
      count += 3;
    }
  }
  return sum / count;
}

/**
 * Runs `click` (which makes the extension page `page` call `chrome.permissions.request` for
 * `origins`) and answers Chrome's dialog with Allow, until Chrome has granted them. The dialog
 * shows over the page and dims it: that is how the test knows it is up, since DevTools cannot see
 * the dialog (and the page takes no DevTools input while it is shown). Keys sent before Chrome
 * enabled "Allow" (a busy machine) are sent again, and a request they happened to deny is made
 * again.
 */
export async function allowInChromeDialog(display: Display, page: Page, click: () => Promise<void>, origins: string[]): Promise<void> {
  await page.bringToFront();
  const win = await page.evaluate(() => ({ x: screenX, y: screenY, w: outerWidth, h: outerHeight, chrome: outerHeight - innerHeight }));
  const content: Area = { x: win.x + 20, y: win.y + win.chrome + 20, w: win.w - 40, h: win.h - win.chrome - 40 };
  const bright = await brightness(display.display, content);
  const dimmed = async () => (await brightness(display.display, content)) < bright * 0.85;
  const granted = () => page.evaluate((o) => chrome.permissions.contains({ origins: o }), origins);
  /**
   * Waits up to `ms` for the page to be dimmed (`want`) or not; says whether it is. `orGranted`:
   * or for Chrome to have granted the origins without asking (a site it granted before, as
   * part of all sites, is granted again at once).
   */
  const waitDimmed = async (want: boolean, ms: number, orGranted = false) => {
    const deadline = Date.now() + ms;
    for (;;) {
      if ((await dimmed()) === want) return true;
      if (orGranted && (await granted())) return false;
      if (Date.now() > deadline) return false;
      await sleep(100);
    }
  };
  for (let attempt = 1; ; attempt++) {
    await click();
    if (!(await waitDimmed(true, DIALOG_TIMEOUT_MS, true))) {
      if (await granted()) return;
      assert.fail("Chrome's permission dialog did not show");
    }
    await sleep(ALLOW_ENABLED_MS);
    // Tab from "Deny" to "Allow", Space to press it. Should "Allow" not be enabled yet, focus
    // lands elsewhere and the dialog stays: the keys go again, and whatever they end on
    // (Allow, or Deny and a new request) the loop copes with.
    for (let presses = 1; ; presses++) {
      await run("xdotool", ["key", "Tab", "space"], { env: { ...process.env, DISPLAY: display.display } });
      if (await waitDimmed(false, 1500)) break;
      if (presses === 5) assert.fail("Chrome's permission dialog did not close");
    }
    if (await granted()) return;
    if (attempt === 3) assert.fail(`Chrome did not grant ${origins.join(", ")}`);
  }
}
