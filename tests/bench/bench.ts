// `make bench`: performance figures of the spine, measured in one run on this machine.
//   - each Worker script's bundle size (JS shim + wasm), raw and gzip: the route worker's and
//     the Durable Objects' script's
//   - chat-delta broadcast latency, from the coordinator emitting a delta (its `at` stamp, taken
//     when the LLM chunk arrived) to a web socket receiving it, with 1 and with 50 sockets
//   - artifact upload throughput through a presigned URL (the Worker streams it into R2) versus
//     a direct R2 binding put of the same bytes
//   - cold start: a fresh workerd process's time to be ready, then to its first response (the
//     wasm compiled and instantiated, the route run), beside a warm response of the same request
//   - the largest contributors to the wasm's code, by crate (tests/bench/wasm-size.ts)
// Figures, not pass/fail: speed goals live here, never in timed tests.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { newTask, WebClient } from "../support/clients.ts";
import { ROOT, startMimo } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";
import { median, percentile, sized } from "./figures.ts";
import { codeByCrate } from "./wasm-size.ts";

const DELTAS = sized(200, 20);
const MANY_SOCKETS = sized(50, 5);

/**
 * The deployment's two Worker scripts (each has its own size budget on Cloudflare): the route
 * worker and the Durable Objects' script, by build directory and crate.
 */
const SCRIPTS = [
  { name: "route worker", dir: "worker", crate: "mimo_worker" },
  { name: "objects", dir: "objects", crate: "mimo_objects" },
];

/** A script's bundle (JS shim + wasm), raw and gzipped as Cloudflare counts it. */
function bundleSize(dir: string) {
  const files = [`${dir}/build/index.js`, `${dir}/build/index_bg.wasm`].map((f) => readFileSync(path.join(ROOT, f)));
  const raw = files.reduce((n, f) => n + f.length, 0);
  const gzip = files.reduce((n, f) => n + gzipSync(f, { level: 9 }).length, 0);
  return { raw, gzip };
}

/** Streams one reply of DELTAS deltas to `sockets` web sockets; returns per-delta latencies. */
async function broadcast(mimo: Mimo, sockets: number) {
  const taskId = await newTask(mimo);
  const clients = await Promise.all(Array.from({ length: sockets }, () => WebClient.connect(mimo, taskId)));
  await Promise.all(clients.map((c) => c.waitFor((e) => e.type === "ready")));
  const arrivals = new Map<WebClient, Array<{ seq: number; latency: number }>>();
  for (const client of clients) {
    const seen: Array<{ seq: number; latency: number }> = [];
    arrivals.set(client, seen);
    client.ws.on("message", (data) => {
      const now = Date.now();
      const event = JSON.parse(String(data));
      if (event.type === "chatDelta" && !event.finished) seen.push({ seq: event.seq, latency: now - event.at });
    });
  }
  const marker = `bench-${sockets}-${Date.now()}`;
  mimo.llm.script([{ match: marker, chunks: Array.from({ length: DELTAS }, (_, i) => `t${i} `), chunkDelayMs: 20 }]);
  clients[0]!.send({ type: "user_message", content: marker });
  await Promise.all(clients.map((c) => c.reply(0, 60_000)));
  const all = [...arrivals.values()].flat().map((a) => a.latency);
  // Fan-out completion: for each delta, when the last socket got it.
  const bySeq = new Map<number, number>();
  for (const a of [...arrivals.values()].flat()) bySeq.set(a.seq, Math.max(bySeq.get(a.seq) ?? 0, a.latency));
  await Promise.all(clients.map((c) => c.close()));
  return { median: median(all), p90: percentile(all, 90), lastSocketMedian: median([...bySeq.values()]) };
}

const UPLOAD_BYTES = sized(16, 1) * 1024 * 1024;
const UPLOAD_ROUNDS = sized(4, 1);

/** MB/s of uploading UPLOAD_BYTES, through presigned URLs and through the R2 binding. */
async function uploadThroughput(mimo: Mimo) {
  const taskId = await newTask(mimo);
  const body = randomBytes(UPLOAD_BYTES);
  const headers = { authorization: `Bearer ${mimo.token}`, "content-type": "application/json" };
  const presigned: number[] = [];
  for (let i = 0; i < UPLOAD_ROUNDS; i++) {
    const start = performance.now();
    const grant = (await (
      await fetch(`${mimo.url}/api/artifacts/presign`, {
        method: "POST",
        headers,
        body: JSON.stringify({ taskId, kind: "screenshot", contentType: "image/png", contentLength: body.length }),
      })
    ).json()) as { uploadUrl: string };
    const res = await fetch(grant.uploadUrl, { method: "PUT", headers: { "content-type": "image/png" }, body });
    if (res.status !== 201) throw new Error(`upload: ${res.status} ${await res.text()}`);
    presigned.push(performance.now() - start);
  }
  const bucket = (await mimo.mf.getR2Bucket("ARTIFACTS")) as unknown as {
    put(key: string, value: Uint8Array): Promise<unknown>;
  };
  const direct: number[] = [];
  for (let i = 0; i < UPLOAD_ROUNDS; i++) {
    const start = performance.now();
    await bucket.put(`bench/direct-${i}`, body);
    direct.push(performance.now() - start);
  }
  const mbps = (ms: number) => UPLOAD_BYTES / (1024 * 1024) / (ms / 1000);
  return { presigned: mbps(median(presigned)), direct: mbps(median(direct)) };
}

const COLD_STARTS = sized(5, 2);

/** Medians, ms: a restarted workerd process ready; its first `/api/tasks` response; a warm one. */
async function coldStart(mimo: Mimo) {
  const ready: number[] = [];
  const first: number[] = [];
  const warm: number[] = [];
  const tasks = () => fetch(`${mimo.url}/api/tasks`, { headers: { authorization: `Bearer ${mimo.token}` } });
  for (let i = 0; i < COLD_STARTS; i++) {
    const started = performance.now();
    await mimo.restart();
    const up = performance.now();
    const res = await tasks();
    if (res.status !== 200) throw new Error(`cold start: /api/tasks answered ${res.status}`);
    const answered = performance.now();
    await (await tasks()).arrayBuffer();
    warm.push(performance.now() - answered);
    ready.push(up - started);
    first.push(answered - up);
  }
  return { ready: median(ready), first: median(first), warm: median(warm) };
}

const sizes = SCRIPTS.map((script) => ({ ...script, size: bundleSize(script.dir) }));
const mimo = await startMimo();
try {
  await broadcast(mimo, 1); // warm-up: first compile of the wasm, first object
  const one = await broadcast(mimo, 1);
  const many = await broadcast(mimo, MANY_SOCKETS);
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  console.log("\nMimo benchmarks (one run, this machine)\n");
  for (const { name, crate, size } of sizes) {
    console.log(`${`${name} bundle`.padEnd(29)}raw ${kib(size.raw)}   gzip ${kib(size.gzip)}`);
    const unstripped = path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, "target"), `wasm32-unknown-unknown/release/${crate}.wasm`);
    const code = codeByCrate(unstripped);
    const share = (n: number) => `${(n / 1024).toFixed(0)} KiB (${((100 * n) / code.total).toFixed(0)}%)`;
    console.log(`  code by crate, before wasm-opt: ${code.crates.slice(0, 12).map(([crate, n]) => `${crate} ${share(n)}`).join(", ")}`);
    console.log(`  largest functions, before wasm-opt: ${code.largest.map(([name, n]) => `${name} ${(n / 1024).toFixed(0)} KiB`).join(", ")}`);
  }
  console.log(`chat-delta broadcast (${DELTAS} deltas, ms from emit to receipt)`);
  console.log(`  1 socket                   median ${one.median.toFixed(1)}   p90 ${one.p90.toFixed(1)}`);
  console.log(
    `  ${MANY_SOCKETS} sockets${" ".repeat(19 - String(MANY_SOCKETS).length)}median ${many.median.toFixed(1)}   p90 ${many.p90.toFixed(1)}   last socket median ${many.lastSocketMedian.toFixed(1)}`,
  );
  const ratio = many.median / Math.max(one.median, 0.5);
  console.log(`  ratio ${MANY_SOCKETS} / 1 sockets       ${ratio.toFixed(2)}x (median)`);
  const upload = await uploadThroughput(mimo);
  console.log(`artifact upload (${UPLOAD_BYTES / (1024 * 1024)} MiB, median of ${UPLOAD_ROUNDS})`);
  console.log(`  presigned URL via Worker   ${upload.presigned.toFixed(1)} MB/s`);
  console.log(`  direct R2 binding put      ${upload.direct.toFixed(1)} MB/s`);
  console.log(`  ratio presigned / direct   ${(upload.presigned / upload.direct).toFixed(2)}x`);
  const cold = await coldStart(mimo);
  console.log(`cold start (median of ${COLD_STARTS} fresh workerd processes)`);
  console.log(`  process ready              ${cold.ready.toFixed(0)} ms`);
  console.log(`  first response             ${cold.first.toFixed(0)} ms   (a warm one: ${cold.warm.toFixed(1)} ms; ${(cold.first / Math.max(cold.warm, 0.1)).toFixed(0)}x)\n`);
} finally {
  await mimo.dispose();
}
