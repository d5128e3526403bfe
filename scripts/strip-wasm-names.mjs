// Drops the `name` custom section (function names, for stack traces) from a wasm file, leaving
// every other byte as it is. worker-build keeps that section (it always passes `--debuginfo` to
// wasm-opt) and rustc's `strip` removes the `target_features` section wasm-bindgen needs, so the
// Makefile removes it here, after worker-build: it is a tenth of the Worker's gzipped bundle.
//
//   node scripts/strip-wasm-names.mjs worker/build/index_bg.wasm
import { readFileSync, writeFileSync } from "node:fs";

const file = process.argv[2];
const wasm = readFileSync(file);

/** Reads the unsigned LEB128 at `at`: its value and the offset after it. */
function leb(at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = wasm[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte < 0x80) return [value, at];
  }
}

const kept = [wasm.subarray(0, 8)]; // magic and version
for (let at = 8; at < wasm.length; ) {
  const start = at;
  const id = wasm[at];
  const [size, body] = leb(at + 1);
  at = body + size;
  if (id === 0) {
    const [nameLength, name] = leb(body);
    if (wasm.toString("utf8", name, name + nameLength) === "name") continue;
  }
  kept.push(wasm.subarray(start, at));
}
writeFileSync(file, Buffer.concat(kept));
