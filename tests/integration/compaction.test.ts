// A long conversation compacted (seed 004 §5) against the built worker in Miniflare, with a
// small context (2,400 tokens) so that three long exchanges pass its threshold: the model is
// asked for a summary beside the chat, the summary is kept as a record and told
// (`chatCompacted`, in the export), and later prompts carry it in place of the messages it
// stands for — after a restart of the runtime too, and in a fork.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { EventEnvelope, ForkedTask } from "../../protocol/ts/protocol.ts";
import { api, newTask, WebClient } from "../support/clients.ts";
import { ownRuntime } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";

let mimo: Mimo;
ownRuntime({ bindings: { MIMO_AGENT_CONTEXT_TOKENS: "2400" } }, (m) => (mimo = m));

/** About 300 tokens of a message that starts with `what`. */
const long = (what: string): string => `${what}: ${"words of detail ".repeat(56)}`;

type ChatBody = { tools?: unknown[]; messages: Array<{ role: string; content: string }> };

/** What the model was sent in the latest chat request. */
const lastPrompt = (): string =>
  (mimo.llm.requests().at(-1)!.body as ChatBody).messages.map((m) => m.content).join("\n");

/** Sends `content` and waits for the finished answer (the scripted model echoes it). */
async function exchange(web: WebClient, content: string): Promise<void> {
  const from = web.received.length;
  web.send({ type: "user_message", content });
  await web.reply(from);
  await web.waitFor((e) => e.type === "taskStatus" && e.status === "completed", "completed", 10_000, from);
}

type Exported = { events: EventEnvelope[] };
const exported = async (taskId: string): Promise<Exported> => (await (await api(mimo, `/api/task/${taskId}/export`)).json()) as Exported;

describe("a long conversation", () => {
  it("is summarized once past the threshold, and the summary stands in for its earlier part, after a restart and in a fork", async () => {
    mimo.llm.reset();
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    await web.waitFor((e) => e.type === "ready", "ready");
    await exchange(web, long("the first question about a red mug"));
    await exchange(web, long("the second question about a blue lid"));
    assert.equal(mimo.llm.summaryRequests().length, 0, "two exchanges still fit");
    await exchange(web, long("the third question about the price"));
    const compacted = await web.waitFor((e) => e.type === "chatCompacted", "the compaction", 10_000);
    assert.ok(compacted.type === "chatCompacted");

    // The summary was asked beside the chat: its own prompt, no tools, the first two exchanges.
    const [asked] = mimo.llm.summaryRequests();
    assert.equal(mimo.llm.summaryRequests().length, 1);
    const body = asked!.body as ChatBody;
    assert.equal(body.tools, undefined, "no tools offered");
    assert.match(body.messages[0]!.content, /^Summarize this conversation for your own later use:/);
    const quoted = body.messages[1]!.content;
    assert.ok(quoted.includes("[person] the first question about a red mug") && quoted.includes("[person] the second question"), quoted);
    assert.ok(!quoted.includes("the third question"), "the latest exchange is kept whole");
    // The scripted model's summary: what the person said, cut short.
    assert.equal(compacted.messages, 4);
    assert.match(compacted.summary, /^The person said: the first question about a red mug: words of detail.*; the second question/);
    const answers = web.history().flatMap((e) => (e.type === "chatDelta" && e.finished ? [e.messageId] : []));
    assert.equal(compacted.through, answers[1], "through the second answer");
    await web.close();

    // Kept in the task's history (and so in its export).
    const kept = (await exported(taskId)).events.filter((e) => e.type === "chatCompacted");
    assert.deepEqual(kept.map((e) => e.seq), [compacted.seq]);

    // After a restart, the next prompt is rebuilt from the stored summary.
    await mimo.restart();
    const again = await WebClient.connect(mimo, taskId);
    await again.waitFor((e) => e.type === "ready", "ready");
    assert.equal(again.history().filter((e) => e.type === "chatCompacted").length, 1, "replayed once");
    await exchange(again, "and what about the delivery?");
    const prompt = lastPrompt();
    assert.ok(prompt.includes("<conversation_summary>") && prompt.includes(compacted.summary), prompt);
    assert.ok(!prompt.includes(long("the first question about a red mug")) && !prompt.includes(long("the second question about a blue lid")), "the summarized messages are left out");
    assert.ok(prompt.includes("the third question about the price") && prompt.includes("and what about the delivery?"));
    assert.ok(!prompt.includes("<earlier_conversation>"), "nothing left out unsaid");
    await again.close();

    // A fork after the summarized part starts from the summary too.
    const res = await fetch(`${mimo.url}/api/task/${taskId}/fork`, {
      method: "POST",
      headers: { authorization: `Bearer ${mimo.token}`, "content-type": "application/json" },
      body: JSON.stringify({ messageId: answers[2] }),
    });
    assert.equal(res.status, 201, await res.clone().text());
    const fork = (await res.json()) as ForkedTask;
    const forked = (await exported(fork.taskId)).events.find((e) => e.type === "chatCompacted");
    assert.ok(forked?.type === "chatCompacted", "the fork keeps the compaction");
    assert.equal(forked.summary, compacted.summary);
    assert.equal(forked.through, compacted.through, "message ids carry over");
    const inFork = await WebClient.connect(mimo, fork.taskId);
    await inFork.waitFor((e) => e.type === "ready", "ready");
    await exchange(inFork, "ship it to Lisbon instead");
    const forkPrompt = lastPrompt();
    assert.ok(forkPrompt.includes(compacted.summary) && forkPrompt.includes("ship it to Lisbon instead"));
    assert.ok(!forkPrompt.includes(long("the first question about a red mug")) && !forkPrompt.includes("delivery"), forkPrompt);
    await inFork.close();
  });
});
