import type { EventEnvelope } from "../../protocol/ts/protocol.ts";
import { startHarness } from "../browser/harness.ts";
import { api, newTask, WebClient } from "../support/clients.ts";
import { agentStep, onElement } from "../support/shopper.ts";
import { median } from "./figures.ts";
const STEPS = Number(process.env.STEPS ?? 20);
const h = await startHarness({ bindings: { MIMO_AGENT_MAX_STEPS: String(STEPS + 5), MIMO_AGENT_VISION: process.env.VISION ?? "off" } });
try {
  const page = `${h.a}/big?rows=150`;
  const from = h.mimo.llm.requests().length;
  h.mimo.llm.script([agentStep({ navigate: { url: page } }), ...Array.from({ length: STEPS }, () => onElement("<button>Buy ", (index) => ({ click: { index } }))), agentStep({ done: { success: true, text: "Clicked." } })]);
  const taskId = await newTask(h.mimo);
  const web = await WebClient.connect(h.mimo, taskId);
  web.send({ type: "user_message", content: `Open ${page} and click the first ${STEPS} Buy buttons` });
  const outcome = (await web.waitFor((e) => e.type === "structuredOutput", "end", 600_000)) as EventEnvelope & { status: string };
  web.close();
  if (outcome.status !== "ok") throw new Error(JSON.stringify(outcome));
  const requests = h.mimo.llm.requests().slice(from);
  const overhead = requests.slice(2, 2 + STEPS).map((r, i) => r.at - requests[i + 1]!.answeredAt!);
  const records = (await (await api(h.mimo, `/api/task/${taskId}/actions`)).json()) as any[];
  const by = new Map<string, number[]>();
  for (const r of records) if (r.sentAt !== undefined && r.finishedAt !== undefined) by.set(r.command.name, [...(by.get(r.command.name) ?? []), r.finishedAt - r.sentAt]);
  const st = new Map<string, number[]>();
  for (const r of records) for (const s of r.outcome?.timings ?? []) st.set(`${r.command.name}:${s.stage}`, [...(st.get(`${r.command.name}:${s.stage}`) ?? []), s.ms]);
  console.log(`step median ${median(overhead).toFixed(0)} | ` + [...by].filter(([n]) => n !== "task_start" && n !== "browser_navigate").map(([n, t]) => `${n} ${median(t)}`).join(" ") + " | " + [...st].filter(([k]) => k.startsWith("browser_click:") || k.startsWith("browser_observe:")).map(([k, v]) => `${k.replace("browser_", "")} ${median(v).toFixed(0)}`).join(" "));
} finally { await h.close(); }
