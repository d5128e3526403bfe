// `make load`: many extensions serving many tasks at once, on workerd locally (the built worker
// in Miniflare, its Durable Objects and SQLite as in production). Each simulated extension is a
// socket client speaking the real protocol (paired, ticketed, `hello`, then an `action_ack` and
// an `action_result` for every `browser_action` it is sent); each task is bound to one of them
// by the person's explicit choice (`select_client`), started, then sent actions one after
// another through the developer API, all tasks at once.
//
// For N = 10, 50 and 200 extensions (LOAD_SIZES="10 50 200"; a fresh runtime each), with
// LOAD_TASKS_PER_EXTENSION tasks each (2) and LOAD_ACTIONS actions per task (20), it prints:
// the actions' dispatch latency (the API call made → the extension has the action) and round
// trip (→ the API answers with the outcome), p50 and p99; the throughput; errors; and the
// messages each kind of Durable Object handles per second. Those are counted from the protocol,
// not measured inside workerd: every frame to or from an extension passes that extension's own
// registry object (`client:<clientId>`, one per extension), a task's object sees its own
// actions' frames (API call, dispatch, ack, result), and the deployment's directory (`global`)
// hears only of pairing, tickets, presence changes and bindings — none while actions run.
//
// `LOAD_QUICK=1` (run by `make test`) uses N = 3 with a few actions, so that the load run
// cannot rot unnoticed; figures only, nothing timed is asserted.
import { Agent, request } from "node:http";
import { median, percentile } from "../bench/figures.ts";
import { ExtensionClient, newTask, WebClient } from "../support/clients.ts";
import { startMimo } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";

const QUICK = process.env.LOAD_QUICK === "1";
const SIZES = (process.env.LOAD_SIZES ?? (QUICK ? "3" : "10 50 200")).split(/\s+/).filter(Boolean).map(Number);
const TASKS_PER_EXTENSION = Number(process.env.LOAD_TASKS_PER_EXTENSION ?? 2);
const ACTIONS = Number(process.env.LOAD_ACTIONS ?? (QUICK ? 3 : 20));
/** How many connections or bindings are opened at once while setting up. */
const SETUP_BATCH = 20;

type Figures = {
  extensions: number;
  tasks: number;
  actions: number;
  seconds: number;
  dispatch: number[];
  roundTrip: number[];
  errors: string[];
};

/** Runs `work` over `items`, `SETUP_BATCH` at a time. */
async function batched<T, R>(items: T[], work: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += SETUP_BATCH) {
    out.push(...(await Promise.all(items.slice(i, i + SETUP_BATCH).map((item, j) => work(item, i + j)))));
  }
  return out;
}

/** An extension that answers every action at once; notes when each task's action came. */
function serve(ext: ExtensionClient, arrived: Map<string, number>) {
  ext.serve((action) => {
    arrived.set(action.actionId, performance.now());
    return { result: action.name === "task_start" ? { tabId: 7, windowId: 1, url: "http://127.0.0.1:9/load" } : { done: true } };
  });
}

/**
 * The API calls go through `node:http` with a keep-alive pool of their own: through `fetch`'s
 * pool, a few calls in 8,000 at N = 200 ended in ECONNRESET (not yet explained; none with this
 * pool or with a connection per call).
 */
const pool = new Agent({ keepAlive: true, maxSockets: Infinity });

type Answered = { status: number; body: { actionId?: string; state?: string; code?: string; message?: string } };

function submit(mimo: Mimo, taskId: string, command: unknown): Promise<Answered> {
  const body = JSON.stringify({ command });
  const headers = { authorization: `Bearer ${mimo.token}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) };
  return new Promise((resolve, reject) => {
    const req = request(`${mimo.url}/api/task/${taskId}/actions`, { method: "POST", agent: pool, headers }, (res) => {
      let data = "";
      res.on("data", (chunk: Buffer) => (data += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(data) as Answered["body"] }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function run(n: number): Promise<Figures> {
  // Many sockets from one address: the failed-auth limit is not what is measured here.
  const mimo = await startMimo({ bindings: { MIMO_AUTH_MAX_FAILURES: "100000" } });
  try {
    const arrived = new Map<string, number>();
    const extensions = await batched(Array.from({ length: n }, (_, i) => i), async (i) => {
      const ext = await ExtensionClient.connect(mimo, `load-${i}`);
      serve(ext, arrived);
      return ext;
    });
    const tasks = await batched(Array.from({ length: n * TASKS_PER_EXTENSION }, (_, i) => extensions[i % n]!), async (ext) => {
      const taskId = await newTask(mimo);
      const web = await WebClient.connect(mimo, taskId);
      await web.waitFor((e) => e.type === "ready", "ready");
      web.send({ type: "select_client", clientId: ext.clientId });
      await web.waitFor((e) => e.type === "taskStatus" && e.selectedClientId === ext.clientId, "bound");
      await web.close();
      const started = await submit(mimo, taskId, { name: "task_start", params: { url: "http://127.0.0.1:9/load" } });
      if (started.status !== 200 || started.body.state !== "succeeded") throw new Error(`task_start: ${started.status} ${JSON.stringify(started.body)}`);
      return taskId;
    });

    const figures: Figures = { extensions: n, tasks: tasks.length, actions: 0, seconds: 0, dispatch: [], roundTrip: [], errors: [] };
    const begun = performance.now();
    await Promise.all(
      tasks.map(async (taskId) => {
        for (let k = 0; k < ACTIONS; k++) {
          const sent = performance.now();
          figures.actions++;
          let answer: Answered;
          try {
            answer = await submit(mimo, taskId, { name: "browser_hover", params: { clickId: 1 + (k % 5) } });
          } catch (error) {
            figures.errors.push(`the API call failed: ${String((error as Error).cause ?? error)}`);
            continue;
          }
          const { status, body } = answer;
          const answered = performance.now();
          if (status !== 200 || body.state !== "succeeded") {
            figures.errors.push(`${status} ${body.code ?? body.state ?? ""} ${body.message ?? ""}`.trim());
            continue;
          }
          const at = arrived.get(body.actionId!);
          if (at !== undefined) figures.dispatch.push(at - sent);
          figures.roundTrip.push(answered - sent);
        }
      }),
    );
    figures.seconds = (performance.now() - begun) / 1000;
    await Promise.all(extensions.map((e) => e.close()));
    return figures;
  } finally {
    await mimo.dispose();
  }
}

/**
 * What the directory hears while setting up, per extension: its pairing code, its pairing, its
 * ticket's purchase and redemption, and two presence reports (its socket opened, its hello);
 * per task: its binding. While the actions run: nothing.
 */
const DIRECTORY_PER_EXTENSION = 6;
const DIRECTORY_PER_TASK = 1;

function row(f: Figures): string {
  const rate = f.actions / f.seconds;
  // Per action: the extension's own registry object relays the dispatch, the ack and the
  // result; the task's object takes the API call, sends the dispatch, and takes the ack and
  // the result (via the extension's object). The directory: none.
  const perClient = (rate * 3) / f.extensions;
  const perTask = (rate / f.tasks) * 4;
  const setup = f.extensions * DIRECTORY_PER_EXTENSION + f.tasks * DIRECTORY_PER_TASK;
  const spread = (v: number[]) => (v.length === 0 ? "—" : `${median(v).toFixed(1)} / ${percentile(v, 99).toFixed(1)}`);
  const cells = [
    f.extensions,
    f.tasks,
    f.actions,
    rate.toFixed(0),
    spread(f.dispatch),
    spread(f.roundTrip),
    `${perClient.toFixed(1)} (${f.extensions} objects)`,
    `0 (${setup} while setting up)`,
    perTask.toFixed(1),
    f.errors.length,
  ];
  return `| ${cells.join(" | ")} |`;
}

console.log(`\nMimo load: simulated extensions on workerd, ${TASKS_PER_EXTENSION} tasks each, ${ACTIONS} actions per task, all tasks at once\n`);
console.log("| extensions | tasks | actions | actions/s | dispatch p50 / p99 ms | round trip p50 / p99 ms | msgs/s per extension's registry object | directory msgs/s | msgs/s per task object | errors |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
const failures: string[] = [];
for (const n of SIZES) {
  const figures = await run(n);
  console.log(row(figures));
  const kinds = new Map<string, number>();
  for (const e of figures.errors) kinds.set(e, (kinds.get(e) ?? 0) + 1);
  failures.push(...[...kinds].map(([e, count]) => `N=${n}: ${count}× ${e}`));
}
if (failures.length > 0) {
  console.log(`\nerrors:\n  ${failures.join("\n  ")}`);
  process.exitCode = 1;
}
