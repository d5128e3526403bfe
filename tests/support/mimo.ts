// Starts the real, built worker (worker/build) in Miniflare — workerd with SQLite-backed
// Durable Objects, R2 and the web app's assets — next to the scripted LLM server.
import { Log, LogLevel, Miniflare } from "miniflare";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { parse as parseToml } from "smol-toml";
import { startLlmServer } from "../llm-server/server.ts";
import type { LlmServer, ScriptTurn } from "../llm-server/server.ts";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** What the tests take from a wrangler file, so that they run what `make dev` and deploy run. */
type WranglerConfig = {
  name: string;
  compatibility_date: string;
  assets?: { run_worker_first?: string[]; not_found_handling?: string };
  durable_objects: { bindings: Array<{ name: string; class_name: string }> };
  r2_buckets?: Array<{ binding: string; bucket_name: string }>;
};
const wrangler = (file: string) => parseToml(readFileSync(path.join(ROOT, file), "utf8")) as unknown as WranglerConfig;
/** The route worker (wrangler.toml) and the Durable Objects' script (objects/wrangler.toml). */
const ROUTE = wrangler("wrangler.toml");
const OBJECTS = wrangler("objects/wrangler.toml");
export const WORKER_NAME = ROUTE.name;
/** The Durable Objects' script: their storage is under its name. */
export const OBJECTS_NAME = OBJECTS.name;

export type MimoOptions = {
  /** Turns queued on the scripted LLM server before the worker starts. */
  turns?: ScriptTurn[];
  /** Extra or overriding worker bindings (vars and secrets). */
  bindings?: Record<string, string>;
  /** Serve R2's S3 API locally for the artifact bucket, with these credentials. */
  r2S3Credentials?: { accessKeyId: string; secretAccessKey: string };
};

export type Mimo = {
  /** Origin of the worker, e.g. `http://127.0.0.1:41234`. */
  url: string;
  token: string;
  llm: LlmServer;
  mf: Miniflare;
  /**
   * Stops the runtime and starts it again on the same persisted storage and port; `meanwhile`
   * runs while it is down (to change what is stored, as an older release would have left it).
   */
  restart(meanwhile?: () => Promise<void>): Promise<void>;
  /** Restarts the runtime under a new deployment token (as `wrangler secret put` rotates it); `token` becomes it. */
  rotateToken(): Promise<void>;
  /** Where the runtime keeps Durable Object storage (one SQLite file per object). */
  durableObjectsDir: string;
  /** Evicts a task's coordinator, keeping its web sockets (hibernation). */
  evictTask(taskId: string): Promise<void>;
  dispose(): Promise<void>;
};

/** What a client needs of a running server: a test runtime, or `make dev`'s. */
export type Endpoint = Pick<Mimo, "url" | "token">;

export async function startMimo(opts: MimoOptions = {}): Promise<Mimo> {
  const llm = await startLlmServer({ turns: opts.turns ?? [] });
  let token = `test-${randomUUID()}`;
  const persist = await mkdtemp(path.join(tmpdir(), "mimo-test-"));
  const objects = OBJECTS.durable_objects.bindings;
  // Both scripts read the deployment's vars and secrets, as `wrangler secret put` sets them on both.
  const bindings = () => ({
    MIMO_API_TOKEN: token,
    MIMO_LLM_PROVIDER: "openai_compatible",
    MIMO_LLM_BASE_URL: `${llm.url}/v1`,
    MIMO_LLM_MODEL: "mimo-scripted",
    MIMO_LLM_TIMEOUT_MS: "20000",
    ...opts.bindings,
  });
  const script = (config: WranglerConfig, dir: string) => ({
    name: config.name,
    scriptPath: path.join(ROOT, dir, "build/index.js"),
    modules: true,
    modulesRules: [{ type: "CompiledWasm" as const, include: ["**/*.wasm"], fallthrough: true }],
    compatibilityDate: config.compatibility_date,
    // The bucket's id is its name in wrangler.toml, which R2's S3 API addresses it by.
    r2Buckets: Object.fromEntries((config.r2_buckets ?? []).map((b) => [b.binding, { id: b.bucket_name, s3Credentials: opts.r2S3Credentials }])),
    bindings: bindings(),
  });
  const options = (port: number) => ({
    // MIMO_TEST_VERBOSE=1 shows the worker's console output, for debugging a test.
    log: process.env.MIMO_TEST_VERBOSE ? new Log(LogLevel.DEBUG) : undefined,
    host: "127.0.0.1",
    port,
    durableObjectsPersist: path.join(persist, "do"),
    r2Persist: path.join(persist, "r2"),
    workers: [
      // The route worker (the first: it answers the port) and the objects' script it binds.
      {
        ...script(ROUTE, "worker"),
        durableObjects: Object.fromEntries(objects.map((o) => [o.name, { className: o.class_name, scriptName: OBJECTS_NAME, useSQLite: true }])),
        assets: {
          directory: path.join(ROOT, "web/dist"),
          binding: "ASSETS",
          routerConfig: { has_user_worker: true, static_routing: { user_worker: ROUTE.assets?.run_worker_first ?? [] } },
          assetConfig: { not_found_handling: ROUTE.assets?.not_found_handling },
        },
      },
      {
        ...script(OBJECTS, "objects"),
        durableObjects: Object.fromEntries(objects.map((o) => [o.name, { className: o.class_name, useSQLite: true }])),
      },
    ],
  });
  let mf = new Miniflare(options(0));
  const ready = await mf.ready;
  const port = Number(ready.port);
  const mimo: Mimo = {
    url: `http://127.0.0.1:${port}`,
    token,
    llm,
    mf,
    durableObjectsDir: path.join(persist, "do"),
    async restart(meanwhile) {
      await mf.dispose();
      await meanwhile?.();
      mf = new Miniflare(options(port));
      await mf.ready;
      mimo.mf = mf;
    },
    async rotateToken() {
      token = `test-${randomUUID()}`;
      mimo.token = token;
      await mimo.restart();
    },
    async evictTask(taskId: string) {
      await mf.unsafeEvictDurableObject(OBJECTS_NAME, "TaskCoordinator", { name: taskId, webSockets: "hibernate" });
    },
    async dispose() {
      await mf.dispose();
      await llm.close();
      await rm(persist, { recursive: true, force: true });
    },
  };
  return mimo;
}

/**
 * Gives the calling test suite a runtime of its own, started before its tests and disposed
 * after them, so one suite's extensions, restarts or failures never leak into another's.
 */
export function ownRuntime(options: MimoOptions, use: (mimo: Mimo) => void): void {
  let mimo: Mimo | undefined;
  before(async () => {
    mimo = await startMimo(options);
    use(mimo);
  });
  after(async () => {
    await mimo?.dispose();
  });
}
