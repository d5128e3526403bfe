// `make dev`: the whole system locally on workerd, through Miniflare's API as the tests run it —
// wrangler.toml's bindings (Durable Objects, R2, assets with the single-page-app fallback and
// the worker-first paths, [vars]), the vars of .dev.vars, storage under .wrangler/state (the
// layout `wrangler dev --persist-to` used, so what it stored is still there), and the scripted
// LLM server when .dev.vars configures no provider. `wrangler deploy` still deploys.
//
// Not `wrangler dev`: its ProxyWorker sends every request on to the worker over a second HTTP
// connection and takes the loss of that connection as fatal ("Error inside ProxyWorker …
// Network connection lost", then an empty `✘ [ERROR]` and exit 1), so a request its client gives
// up can end the dev server: a tab closed while its calls run, at random; a POST whose body stops
// halfway, at once (cloudflare/workers-sdk#15203, #15451: open, reported up to wrangler 4.127).
// Here requests reach workerd's own socket and nothing stands between them and the worker.
//
// Two kinds of process: this one, the supervisor (token, LLM server, example skills, messages),
// and the runtime (`--runtime`: Miniflare and its workerd). Miniflare starts a crashed workerd
// again by itself; should the runtime process die all the same, the supervisor hands its port to
// a standby runtime, kept warm for that moment (Node started, Miniflare loaded and run once).
// Storage is on disk, so neither loses anything.
//
// With the scripted model it also serves a demo shop (tests/fixtures/shop, on another port: Mimo
// never acts on its own server's pages) and plays a model that buys two blue mugs there, so the
// web app's "Try the demo task" works with no key (MIMO_DEMO_URL tells the web app of it).
//
// Settings (environment): MIMO_PORT (8787), MIMO_LLM_SERVER_PORT (8790), MIMO_DEMO_PORT (8791),
// MIMO_DEV_STATE (.wrangler/state), MIMO_DEV_VARS (.dev.vars).
import type { ChildProcess } from "node:child_process";
import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createServer } from "node:http";
import type { Server } from "node:http";
import { connect } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseEnv } from "node:util";
import type { Readable } from "node:stream";
import type { MiniflareOptions, WorkerOptions } from "miniflare";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const HOST = "127.0.0.1";

/** What the supervisor tells a runtime process: warm up for, or run, the worker with these options. */
type ToRuntime = { warmUp: MiniflareOptions } | { start: MiniflareOptions };
/** What a runtime process tells the supervisor: Miniflare is loaded; the worker is ready. */
type FromRuntime = { warm: true } | { ready: string };

const say = (text: string) => console.log(`\x1b[1;34m[mimo dev]\x1b[0m ${text}`);

if (process.argv[2] === "--runtime") await runtime();
else await supervise();

// ---- supervisor -----------------------------------------------------------------------------

async function supervise(): Promise<void> {
  const port = Number(process.env.MIMO_PORT ?? 8787);
  const llmPort = Number(process.env.MIMO_LLM_SERVER_PORT ?? 8790);
  const state = path.resolve(ROOT, process.env.MIMO_DEV_STATE ?? ".wrangler/state");
  const varsFile = path.resolve(ROOT, process.env.MIMO_DEV_VARS ?? ".dev.vars");

  // The deployment's token: generated once, kept in .dev.vars (git-ignored).
  let vars = readVars(varsFile);
  if (!vars.MIMO_API_TOKEN) {
    const text = existsSync(varsFile) ? readFileSync(varsFile, "utf8") : "";
    appendFileSync(varsFile, `${text === "" || text.endsWith("\n") ? "" : "\n"}MIMO_API_TOKEN=${randomBytes(18).toString("base64url")}\n`);
    vars = readVars(varsFile);
  }
  const token = vars.MIMO_API_TOKEN!;

  let llm: { close(): Promise<void> } | undefined;
  let demo: Server | undefined;
  let llmSays = "the provider configured in .dev.vars";
  if (vars.MIMO_LLM_BASE_URL === undefined && vars.MIMO_LLM_API_KEY === undefined) {
    const demoPort = Number(process.env.MIMO_DEMO_PORT ?? 8791);
    demo = await serveDemoShop(demoPort);
    const shop = `http://${HOST}:${demoPort}/shop/index.html`;
    const { startLlmServer } = await import("../tests/llm-server/server.ts");
    const { twoBlueMugsStep } = await import("../tests/support/shopper.ts");
    const demoStep = twoBlueMugsStep(shop);
    const origin = new URL(shop).origin;
    // The demo's conversation names the shop; any other is echoed.
    const server = await startLlmServer({ port: llmPort, host: HOST, unscripted: (request) => (JSON.stringify(request.body).includes(origin) ? demoStep(request) : undefined) });
    llm = server;
    vars = { ...vars, MIMO_LLM_PROVIDER: "openai_compatible", MIMO_LLM_BASE_URL: `${server.url}/v1`, MIMO_LLM_MODEL: "mimo-scripted", MIMO_DEMO_URL: shop };
    llmSays = `the scripted LLM server on port ${server.port} (no key configured: it runs the demo task on ${shop} and echoes anything else; see README to use a real one)`;
  }

  console.log(`
  Mimo is starting on workerd.
    web app:  http://${HOST}:${port}/
    token:    ${token}
    LLM:      ${llmSays}
    storage:  ${state.startsWith(`${ROOT}/`) ? path.relative(ROOT, state) : state} (Durable Objects SQLite, R2)
`);

  const options = await miniflareOptions(port, state, vars);
  let active: ChildProcess | undefined;
  // The first runtime starts at once; the standbys after it warm up first.
  let standby = warmRuntime();
  let stopping = false;
  let everReady = false;

  const stop = async (code: number) => {
    stopping = true;
    for (const proc of [active, await standby.catch(() => undefined)]) {
      if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) continue;
      const exited = new Promise((resolve) => proc.once("exit", resolve));
      proc.kill("SIGTERM");
      const late = setTimeout(() => killGroup(proc), 5000);
      await exited;
      clearTimeout(late);
    }
    await llm?.close();
    demo?.close();
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));

  const start = async (restartedAt?: number) => {
    let proc = await standby.catch(() => undefined);
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) proc = await warmRuntime();
    standby = warmRuntime(options);
    active = proc;
    let ready = false;
    proc.on("message", (message: FromRuntime) => {
      if (!("ready" in message)) return;
      ready = true;
      if (restartedAt !== undefined) say(`the runtime is back after ${Date.now() - restartedAt} ms`);
      else say(`ready on ${message.ready}`);
      if (!everReady) {
        everReady = true;
        void installExampleSkills(message.ready, token, state);
      }
    });
    proc.on("exit", (code, signal) => {
      killGroup(proc);
      if (stopping) return;
      if (!ready) {
        // A runtime that cannot start (the port taken, the build missing) is not restarted.
        say(`the runtime did not start (${signal ?? `exit code ${code}`})`);
        void stop(1);
        return;
      }
      say(`the runtime stopped (${signal ?? `exit code ${code}`}); starting it again — storage is on disk, nothing is lost`);
      const at = Date.now();
      // Its workerd must have let go of the port before the next one takes it.
      void portFree(port).then(() => start(at));
    });
    proc.send({ start: options } satisfies ToRuntime);
  };
  await start().catch((error: unknown) => {
    say(`the runtime did not start (${String(error)})`);
    void stop(1);
  });
}

/**
 * A runtime process with Node started and Miniflare loaded (and run once with `warmUp`'s
 * options), waiting to be told to start. In a process group of its own: its workerd goes with
 * it (killGroup), and the terminal's Ctrl-C reaches the supervisor only, which stops everything
 * in order.
 */
function warmRuntime(warmUp?: MiniflareOptions): Promise<ChildProcess> {
  const args = warmUp === undefined ? ["--runtime"] : ["--runtime", "--warm-up"];
  const proc = fork(fileURLToPath(import.meta.url), args, { detached: true, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  if (warmUp !== undefined) proc.send({ warmUp } satisfies ToRuntime);
  // A message to a process that just died is its exit's business, not an error of ours.
  proc.on("error", () => undefined);
  const warm = new Promise<ChildProcess>((resolve, reject) => {
    const early = (code: number | null, signal: string | null) => reject(new Error(`the runtime process ended as it loaded (${signal ?? `exit code ${code}`})`));
    proc.once("exit", early);
    proc.once("message", () => {
      proc.off("exit", early);
      resolve(proc);
    });
  });
  // A standby may end unused (stopped with the supervisor); whoever takes it sees the rejection.
  warm.catch(() => undefined);
  return warm;
}

/**
 * The Miniflare options of the deployment's two scripts, read from wrangler.toml (the route
 * worker, first: it answers the port) and objects/wrangler.toml (the Durable Objects it binds)
 * by wrangler's own code (the bindings, their SQLite classes, the assets and their routing,
 * module rules): plain data for the runtime.
 */
async function miniflareOptions(port: number, state: string, vars: Record<string, string>): Promise<MiniflareOptions> {
  const { unstable_getMiniflareWorkerOptions, unstable_readConfig } = await import("wrangler");
  const script = (file: string): WorkerOptions => {
    const config = unstable_readConfig({ config: path.join(ROOT, file) });
    const { workerOptions, main } = unstable_getMiniflareWorkerOptions(config);
    return {
      ...workerOptions,
      name: config.name,
      scriptPath: main,
      modules: true,
      // [vars] with .dev.vars over them, as wrangler dev had it, and nothing else (wrangler's own
      // reading would take the repository's .dev.vars, whatever MIMO_DEV_VARS says); both
      // scripts get them, as `wrangler secret put` sets them on both.
      bindings: { ...config.vars, ...vars },
    };
  };
  const route = script("wrangler.toml");
  const objects = script("objects/wrangler.toml");
  // The classes keep the namespace keys they had when the route worker held them (before the
  // objects had a script of their own), as Cloudflare's `transferred_classes` migration keeps
  // their ids and storage: the tasks a dev state stored before are still there.
  const keptKeys = Object.fromEntries(
    // wrangler gives each binding as an object ({ className, useSQLite, … }).
    Object.entries((objects.durableObjects ?? {}) as Record<string, { className: string }>).map(([binding, options]) => [
      binding,
      { ...options, unsafeUniqueKey: `${route.name}-${options.className}` },
    ]),
  );
  return {
    host: HOST,
    port,
    // The layout of `wrangler dev --persist-to`: <state>/v3/{do,r2,…}.
    defaultPersistRoot: path.join(state, "v3"),
    // Miniflare would fetch request.cf's contents from workers.cloudflare.com at every start (a
    // restart too); the worker reads none of it, so its placeholder will do.
    cf: false,
    workers: [route, { ...objects, durableObjects: keptKeys }],
  };
}

/** Resolves once nothing listens on `port` of HOST any more (at most a second). */
async function portFree(port: number): Promise<void> {
  const deadline = Date.now() + 1000;
  while (Date.now() < deadline) {
    const listening = await new Promise<boolean>((resolve) => {
      const socket = connect(port, HOST);
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (!listening) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Serves the demo shop's pages (tests/fixtures/shop) on `port`, under /shop/ as the tests do. */
async function serveDemoShop(port: number): Promise<Server> {
  const dir = path.join(ROOT, "tests/fixtures/shop");
  const types: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8" };
  const files = new Set(readdirSync(dir));
  const server = createServer((req, res) => {
    const pathname = new URL(req.url ?? "/", "http://x").pathname;
    const name = pathname === "/" || pathname === "/shop/" ? "index.html" : pathname.replace(/^\/shop\//, "");
    if (!files.has(name)) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": types[path.extname(name)] ?? "application/octet-stream", "cache-control": "no-store" });
    res.end(readFileSync(path.join(dir, name)));
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, HOST, resolve));
  return server;
}

/** The vars of a dotenv file (none when it does not exist). */
function readVars(file: string): Record<string, string> {
  if (!existsSync(file)) return {};
  return Object.fromEntries(Object.entries(parseEnv(readFileSync(file, "utf8"))).filter((e): e is [string, string] => e[1] !== undefined));
}

/** Ends whatever is left of a runtime process's group (its workerd, when the runtime died first). */
function killGroup(proc: ChildProcess): void {
  try {
    process.kill(-proc.pid!, "SIGKILL");
  } catch {
    // The group is already gone.
  }
}

/**
 * Stores the example skills of tests/fixtures/skills through the API, once per storage: a
 * marker in the state folder remembers it, so a skill the person deleted stays deleted.
 */
async function installExampleSkills(origin: string, token: string, state: string): Promise<void> {
  const marker = path.join(state, "mimo-example-skills-installed");
  if (existsSync(marker)) return;
  const dir = path.join(ROOT, "tests/fixtures/skills");
  const names = readdirSync(dir).filter((name) => existsSync(path.join(dir, name, "SKILL.md"))).sort();
  try {
    for (const name of names) {
      const res = await fetch(`${origin}/api/skills/${name}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${token}`, "content-type": "text/markdown; charset=utf-8" },
        body: readFileSync(path.join(dir, name, "SKILL.md")),
      });
      if (!res.ok) throw new Error(`${name}: ${res.status} ${await res.text()}`);
    }
  } catch (error) {
    say(`the example skills were not installed (${String(error)}); they are tried again at the next start`);
    return;
  }
  mkdirSync(state, { recursive: true });
  writeFileSync(marker, `${names.join("\n")}\n`);
  say(`installed the example skills ${names.join(", ")} (once; see README, "Skills")`);
}

// ---- runtime --------------------------------------------------------------------------------

async function runtime(): Promise<void> {
  const { Log, LogLevel, Miniflare } = await import("miniflare");
  let mf: InstanceType<typeof Miniflare> | undefined;
  const shutdown = async () => {
    disposing = true;
    await mf?.dispose();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown());
  process.on("SIGINT", () => void shutdown());
  // The supervisor is gone (killed without a chance to stop us): go too.
  process.on("disconnect", () => void shutdown());

  // Miniflare starts workerd again by itself when it dies; its output ending says it did.
  let disposing = false;
  let crashedAt: number | undefined;
  const pipe = (from: Readable, to: NodeJS.WriteStream) => {
    from.pipe(to, { end: false });
    from.once("end", () => {
      if (disposing || crashedAt !== undefined) return;
      crashedAt = Date.now();
      say("workerd stopped unexpectedly; Miniflare is starting it again");
    });
  };

  const start = (options: MiniflareOptions) => {
    mf = new Miniflare({
      ...options,
      log: new Log(LogLevel.INFO),
      handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
        pipe(stdout, process.stdout);
        pipe(stderr, process.stderr);
      },
      unsafeHandleRuntimeRestart: () => {
        if (crashedAt !== undefined) say(`workerd is back after ${Date.now() - crashedAt} ms`);
        crashedAt = undefined;
      },
    });
    mf.ready.then(
      (url) => process.send!({ ready: url.origin } satisfies FromRuntime),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };

  // A process's first Miniflare starts slower than the next (code not yet optimised, files
  // not yet read; about twice as slow): a standby pays that now with a throwaway instance on
  // storage of its own and any port, not when it takes over.
  const warmUp = async (options: MiniflareOptions) => {
    const scratch = await mkdtemp(path.join(tmpdir(), "mimo-dev-warm-up-"));
    const trial = new Miniflare({
      ...options,
      port: 0,
      defaultPersistRoot: scratch,
      handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
        stdout.resume();
        stderr.resume();
      },
    });
    await trial.ready;
    await trial.dispose();
    await rm(scratch, { recursive: true, force: true });
  };

  process.on("message", (message: ToRuntime) => {
    if ("start" in message) start(message.start);
    else void warmUp(message.warmUp).then(() => process.send!({ warm: true } satisfies FromRuntime));
  });
  if (process.argv[3] !== "--warm-up") process.send!({ warm: true } satisfies FromRuntime);
}
