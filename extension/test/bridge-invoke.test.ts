import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { BrowserAction } from "../../protocol/ts/protocol.ts";
import { bridgeInvoke } from "../src/actions/bridge-invoke.ts";
import type { ExecutorDeps } from "../src/actions/handler.ts";
import { ActionError } from "../src/results.ts";
import { TaskRegistry } from "../src/tasks.ts";
import { MemoryKv } from "./memory-kv.ts";

const params = { tool: "bash", args: { command: "touch pwned" }, agentId: "main" } as const;
const action = { actionId: "a1", attempt: 1, taskId: "t1", clientId: "c", name: "bridge_invoke", params } as BrowserAction;

/** The handler with a bridge that records what reached it. */
function setup() {
  const tasks = new TaskRegistry(new MemoryKv());
  const invoked: unknown[] = [];
  const deps = {
    tasks,
    bridge: { invoke: async (call: unknown) => (invoked.push(call), { ok: true, data: { exitCode: 0 } }) },
    now: () => 0,
  } as unknown as ExecutorDeps;
  return { tasks, invoked, run: () => bridgeInvoke.run({ action, deps }, params) };
}

describe("bridge_invoke in the extension", () => {
  it("refuses a task the server never said allows the bridge: nothing reaches the bridge", async () => {
    const { invoked, run } = setup();
    await assert.rejects(run, (e: unknown) => e instanceof ActionError && e.code === "PERMISSION_DENIED");
    assert.deepEqual(invoked, []);
  });

  it("refuses once the person turned the bridge off, relays while it is allowed", async () => {
    const { tasks, invoked, run } = setup();
    await tasks.setStatus("t1", "running", 1, true);
    await run();
    assert.equal(invoked.length, 1);
    await tasks.setStatus("t1", "running", 2, false);
    await assert.rejects(run, (e: unknown) => e instanceof ActionError && e.code === "PERMISSION_DENIED");
    assert.equal(invoked.length, 1);
    // Another task's permission is not this one's.
    await tasks.setStatus("t2", "running", 3, true);
    await assert.rejects(run, (e: unknown) => e instanceof ActionError && e.code === "PERMISSION_DENIED");
  });
});
