// The local bridge end to end: the real `mimo-bridge` binary serving a temporary folder, the real
// extension in Chromium connected to it (address and secret typed into its options page), the
// worker in workerd, and the scripted model using files and commands through it. Each tool, each
// refusal (a path escaping through a symlink, a command strict mode forbids, a timeout, the
// concurrency limit), a write that waits for the person's confirmation, and the audit on both
// sides. The bridge runs with --max-concurrent 1, so a client of the test's own holding the one
// slot (a `cat` of a named pipe) makes the task's invocation busy, deterministically. And what
// guards the connection: the bridge pairs with this extension only, the secret is kept where no
// content script reads it, and the extension proves nothing to a program on the port that is
// not the bridge.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import type { AddressInfo } from "node:net";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import WebSocket, { WebSocketServer } from "ws";
import type { EventEnvelope, FrontendEvent } from "../../protocol/ts/protocol.ts";
import { api, newTask, WebClient } from "../support/clients.ts";
import { agentStep } from "../support/shopper.ts";
import { connectBridge, SECRET, spawnBridge, startBridge } from "../support/bridge.ts";
import type { Bridge } from "../support/bridge.ts";
import { signedInApp, startHarness } from "./harness.ts";
import type { Harness } from "./harness.ts";

type Output = Extract<FrontendEvent, { type: "structuredOutput" }>;
type ToolUsed = Extract<FrontendEvent, { type: "toolUsed" }>;
type Confirmation = Extract<FrontendEvent, { type: "confirmationRequested" }>;

let h: Harness;
let dir: string;
let bridge: Bridge;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "mimo-bridge-test-"));
  bridge = await startBridge(dir);
  h = await startHarness();
  await connectBridge(h, bridge);
  assert.match(await h.options.locator("#bridge-status").innerText(), /Connected to the bridge serving .*shared/);
  // The bridge paired with this extension: from now on only its origin may connect.
  assert.equal((await readFile(path.join(dir, "paired-extension"), "utf8")).trim(), h.extensionId);
});

/** A client of the test's own, as the extension: its origin, and the handshake done. */
async function ownClient(url: string, frames: Array<{ type: string; id?: string }>): Promise<WebSocket> {
  const socket = new WebSocket(url, { origin: `chrome-extension://${h.extensionId}` });
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  const clientNonce = "ab".repeat(32);
  const proof = (side: string, bridgeNonce: string) => createHmac("sha256", SECRET).update(`mimo-bridge v1 ${side}\n${clientNonce}\n${bridgeNonce}`).digest("hex");
  const ready = new Promise<void>((resolve, reject) => {
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { type: string; id?: string; nonce?: string; proof?: string };
      if (frame.type === "challenge") {
        assert.equal(frame.proof, proof("bridge", frame.nonce!), "the bridge proves it knows the secret");
        socket.send(JSON.stringify({ type: "auth", proof: proof("client", frame.nonce!) }));
      } else if (frame.type === "ready") resolve();
      else frames.push(frame);
    });
    socket.once("close", (_code, reason) => reject(new Error(`closed: ${reason}`)));
  });
  socket.send(JSON.stringify({ type: "hello", nonce: clientNonce }));
  await ready;
  return socket;
}

after(async () => {
  await h?.close();
  bridge?.process.kill();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** A task whose web socket has seen its browser with the bridge, its switches set as given. */
async function task(allow: boolean, confirm: boolean): Promise<{ taskId: string; web: WebClient }> {
  const taskId = await newTask(h.mimo);
  const web = await WebClient.connect(h.mimo, taskId);
  await web.waitFor((e) => e.type === "snapshotSync" && e.snapshot.bridge !== undefined, "the browser's snapshot with its bridge", 15_000);
  if (allow || !confirm) {
    web.send({ type: "set_bridge", allow, confirm });
    await web.waitFor((e) => e.type === "bridgeMode" && e.allow === allow && e.confirm === confirm, "the bridge switches", 5_000);
  }
  return { taskId, web };
}

async function outcome(web: WebClient): Promise<Output> {
  return (await web.waitFor((e) => e.type === "structuredOutput", "the task's outcome", 60_000)) as Output & EventEnvelope;
}

/** The step's end as the web app saw it. */
function ended(web: WebClient, step: number): ToolUsed {
  const found = web.received.find((e): e is ToolUsed & EventEnvelope => e.type === "toolUsed" && e.phase === "end" && e.step === step);
  assert.ok(found, `step ${step} ended`);
  return found;
}

/** What the model was sent in the call that followed the step: its tool result is in it. */
function modelSaw(text: string): void {
  const requests = h.mimo.llm.requests().map((r) => JSON.stringify(r.body));
  assert.ok(
    requests.some((body) => body.includes(text)),
    `no model call was shown ${text}`,
  );
}

async function bridgeAudit(): Promise<Array<{ tool: string; sessionId: string; agentId: string; ok: boolean; error?: string; args: Record<string, unknown> }>> {
  return (await readFile(bridge.audit, "utf8"))
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
}

describe("files and commands through the local bridge", () => {
  it("reads a file, and writes one only once the person confirmed it", { timeout: 90_000 }, async () => {
    h.mimo.llm.reset();
    h.mimo.llm.script([
      agentStep({ file_read: { path: "notes.md" } }, "Reading the notes."),
      agentStep({ file_write: { path: "lists/todo.txt", content: "milk\neggs\n" } }, "Notes read."),
      agentStep({ done: { success: true, text: "Wrote lists/todo.txt." } }, "Written."),
    ]);
    const { taskId, web } = await task(true, true);
    web.send({ type: "user_message", content: "Make a todo list from my notes.md" });
    const asked = (await web.waitFor((e) => e.type === "confirmationRequested", "the write's confirmation", 60_000)) as Confirmation & EventEnvelope;
    assert.equal(asked.risk, "high");
    assert.match(asked.reason, /writes the file "lists\/todo.txt" on your computer/);
    await assert.rejects(readFile(path.join(bridge.root, "lists/todo.txt")), "nothing is written before the person confirms");
    // The read went through the bridge, and the model was shown the file.
    assert.equal(ended(web, 1).result?.ok, true);
    modelSaw("buy eggs");
    const offered = JSON.stringify(h.mimo.llm.requests()[0]!.body);
    assert.ok(offered.includes("file_write") && offered.includes("<local_files>"), "the bridge's actions and folder are offered");

    web.send({ type: "confirm", step: asked.step, approve: true });
    const done = await outcome(web);
    assert.equal(done.status, "ok", JSON.stringify(done));
    assert.equal(await readFile(path.join(bridge.root, "lists/todo.txt"), "utf8"), "milk\neggs\n");
    assert.deepEqual((ended(web, 2).result?.result as { created?: boolean }).created, true);

    // Audited on both sides, attributed to the task and its agent.
    const lines = (await bridgeAudit()).filter((l) => l.sessionId === taskId);
    assert.deepEqual(
      lines.map((l) => [l.tool, l.agentId, l.ok]),
      [
        ["read", "main", true],
        ["write", "main", true],
      ],
    );
    const audit = (await (await api(h.mimo, `/api/task/${taskId}/audit.jsonl`)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { taskId: string; agentId: string; action: { type: string; params: { path?: string } }; confirmation?: { approved?: boolean } });
    assert.deepEqual(
      audit.map((r) => [r.taskId, r.agentId, r.action.type, r.action.params.path ?? null, r.confirmation?.approved ?? null]),
      [
        [taskId, "main", "file_read", "notes.md", null],
        [taskId, "main", "file_write", "lists/todo.txt", true],
        [taskId, "main", "done", null, null],
      ],
    );
    web.close();
  });

  it("edits a file and runs an allowed command without asking when the person turned confirmations off", { timeout: 90_000 }, async () => {
    h.mimo.llm.reset();
    h.mimo.llm.script([
      agentStep({ file_edit: { path: "notes.md", old: "buy eggs", new: "buy bread" } }, "Editing."),
      agentStep({ run_command: { command: "cat notes.md" } }, "Edited."),
      agentStep({ done: { success: true, text: "Done." } }, "Checked."),
    ]);
    const { web } = await task(true, false);
    web.send({ type: "user_message", content: "Replace eggs by bread in notes.md and show it" });
    const done = await outcome(web);
    assert.equal(done.status, "ok", JSON.stringify(done));
    assert.ok(!web.received.some((e) => e.type === "confirmationRequested"));
    assert.equal(await readFile(path.join(bridge.root, "notes.md"), "utf8"), "buy milk\nbuy bread\n");
    assert.deepEqual(ended(web, 2).result?.result, { exitCode: 0, stdout: "buy milk\nbuy bread\n", stderr: "", truncated: false });
    modelSaw("buy bread");
    web.close();
  });

  it("refuses a path escaping through a symlink, a command strict mode forbids and a command over its time, each told to the model", { timeout: 90_000 }, async () => {
    h.mimo.llm.reset();
    h.mimo.llm.script([
      agentStep({ file_read: { path: "elsewhere/secret.txt" } }, "Reading."),
      agentStep({ run_command: { command: "rm notes.md" } }, "Refused."),
      agentStep({ run_command: { command: "sleep 5", timeout_ms: 300 } }, "Refused again."),
      agentStep({ done: { success: false, text: "Could not." } }, "Timed out."),
    ]);
    const { web } = await task(true, false);
    web.send({ type: "user_message", content: "Try things" });
    const done = await outcome(web);
    assert.equal(done.status, "partial", JSON.stringify(done));
    const codes = [1, 2, 3].map((step) => ended(web, step).result?.error?.code);
    assert.deepEqual(codes, ["E_PATH", "E_CMD", "E_TIMEOUT"]);
    for (const code of codes) modelSaw(`\\"code\\":\\"${code}\\"`);
    assert.ok(!JSON.stringify(h.mimo.llm.requests().map((r) => r.body)).includes("the diary"), "nothing outside the root was read");
    assert.equal(await readFile(path.join(bridge.root, "notes.md"), "utf8"), "buy milk\nbuy bread\n");
    web.close();
  });

  it("is busy while the bridge's one slot is taken, and says so to the model", { timeout: 90_000 }, async () => {
    // A client of the test's own holds the only slot: `cat` waits on the named pipe.
    const frames: Array<{ type: string; id?: string }> = [];
    const holder = await ownClient(bridge.url, frames);
    holder.send(JSON.stringify({ type: "invoke", id: "hold", tool: "bash", args: { command: "cat hold" }, sessionId: "test", agentId: "holder" }));
    const deadline = Date.now() + 10_000;
    while (!frames.some((f) => f.type === "invoke.started")) {
      assert.ok(Date.now() < deadline, "the holder's command started");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    h.mimo.llm.reset();
    h.mimo.llm.script([
      agentStep({ file_read: { path: "notes.md" } }, "Reading."),
      agentStep({ done: { success: false, text: "The bridge is busy." } }, "Busy."),
    ]);
    const { web } = await task(true, true);
    web.send({ type: "user_message", content: "Read my notes" });
    const done = await outcome(web);
    assert.equal(done.status, "partial", JSON.stringify(done));
    assert.equal(ended(web, 1).result?.error?.code, "E_BUSY");
    modelSaw('\\"code\\":\\"E_BUSY\\"');
    await writeFile(path.join(bridge.root, "hold"), "released\n");
    holder.close();
  });

  it("is allowed in the web app's panel, which shows the bridge, and a write is confirmed there", { timeout: 90_000 }, async () => {
    h.mimo.llm.reset();
    h.mimo.llm.script([
      agentStep({ file_write: { path: "from-app.txt", content: "hello\n" } }, "Writing."),
      agentStep({ done: { success: true, text: "Wrote it." } }, "Written."),
    ]);
    const app = await signedInApp(h.context, h.mimo.url, h.mimo.token);
    await app.getByTestId("new-task").click();
    await app.waitForURL(/#\/task\//);
    const panel = app.getByTestId("bridge-panel");
    await panel.getByText(`Connected: ${bridge.root}`).waitFor({ timeout: 15_000 });
    assert.equal(await app.getByTestId("bridge-allow").isChecked(), false, "off for a new task");
    assert.equal(await app.getByTestId("bridge-confirm").isChecked(), true, "writes confirmed by default");
    await app.getByTestId("bridge-allow").check();
    await app.getByTestId("composer").fill("Write hello into from-app.txt");
    await app.getByTestId("send").click();
    const card = app.getByTestId("confirmation");
    await card.waitFor({ timeout: 60_000 });
    assert.match(await card.innerText(), /needs your confirmation: Write the file “from-app.txt” on this computer[\s\S]*writes the file "from-app.txt" on your computer/);
    await assert.rejects(readFile(path.join(bridge.root, "from-app.txt")));
    await app.getByTestId("confirm-step").click();
    for (const deadline = Date.now() + 30_000; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
      const written = await readFile(path.join(bridge.root, "from-app.txt"), "utf8").catch(() => null);
      if (written !== null) {
        assert.equal(written, "hello\n");
        break;
      }
      assert.ok(Date.now() < deadline, "the file was written once confirmed");
    }
    // The run's last model call answered before the next test scripts the model: one made
    // after it would take that test's first answer (its step 1 then the other's `done`).
    await app.locator('[data-testid="task-status"][data-status="completed"]').waitFor({ timeout: 30_000 });
    await app.close();
  });

  it("offers nothing and runs nothing on the computer for a task that was not allowed", { timeout: 90_000 }, async () => {
    h.mimo.llm.reset();
    h.mimo.llm.script([
      agentStep({ file_read: { path: "notes.md" } }, "Reading."),
      agentStep({ done: { success: false, text: "Not allowed." } }, "Refused."),
    ]);
    const { taskId, web } = await task(false, true);
    web.send({ type: "user_message", content: "Read my notes" });
    await outcome(web);
    assert.equal(ended(web, 1).result?.error?.code, "PERMISSION_DENIED");
    assert.ok(!JSON.stringify(h.mimo.llm.requests()[0]!.body).includes("file_read"), "not offered");
    assert.ok(!(await bridgeAudit()).some((l) => l.sessionId === taskId), "the bridge never heard of it");
    web.close();
  });
});

describe("the bridge connection", () => {
  const status = () => h.options.locator("#bridge-status");

  it("comes back by itself after the bridge restarts, and the agent uses it again", { timeout: 120_000 }, async () => {
    const exited = new Promise((resolve) => bridge.process.once("exit", resolve));
    bridge.process.kill();
    await exited;
    await h.options.locator('#bridge-status[data-state="offline"]').waitFor({ timeout: 15_000 });
    // Started again on the same address, with the same secret: the extension reconnects.
    const port = Number(new URL(bridge.url).port);
    bridge.process = (await spawnBridge(dir, port)).child;
    await h.options.locator('#bridge-status[data-state="connected"]').waitFor({ timeout: 60_000 });

    h.mimo.llm.reset();
    h.mimo.llm.script([
      agentStep({ file_read: { path: "notes.md" } }, "Reading."),
      agentStep({ done: { success: true, text: "Read." } }, "Read."),
    ]);
    const { web } = await task(true, true);
    web.send({ type: "user_message", content: "Read my notes again" });
    assert.equal((await outcome(web)).status, "ok");
    assert.equal(ended(web, 1).result?.ok, true);
    modelSaw("buy milk");
    web.close();
  });

  it("says a wrong secret is wrong, offers the bridge to no task meanwhile, and connects with the right one", { timeout: 120_000 }, async () => {
    await h.options.locator("#bridge-secret").fill("not-the-secret-of-this-bridge-000000");
    await h.options.locator("#bridge-save").click();
    await h.options.locator('#bridge-status[data-state="offline"]').waitFor({ timeout: 15_000 });
    await h.options.locator("#bridge-status", { hasText: "wrong secret" }).waitFor({ timeout: 15_000 });
    // The browser shows no bridge now: nothing on the computer is offered to the model, even
    // to a task that allows it.
    const taskId = await newTask(h.mimo);
    const web = await WebClient.connect(h.mimo, taskId);
    await web.waitFor((e) => e.type === "snapshotSync" && e.snapshot.bridge === undefined, "the browser's snapshot without its bridge", 15_000);
    web.send({ type: "set_bridge", allow: true, confirm: true });
    await web.waitFor((e) => e.type === "bridgeMode" && e.allow, "the bridge allowed", 5_000);
    h.mimo.llm.reset();
    h.mimo.llm.script([{ text: "There is no bridge to read it through.", chunkDelayMs: 0 }]);
    web.send({ type: "user_message", content: "Read my notes" });
    await outcome(web);
    const offered = JSON.stringify(h.mimo.llm.requests()[0]!.body);
    assert.ok(offered.includes("navigate") && !offered.includes("file_read"), "no bridge action offered");
    web.close();

    await h.options.locator("#bridge-secret").fill(SECRET);
    await h.options.locator("#bridge-save").click();
    await h.options.locator('#bridge-status[data-state="connected"]').waitFor({ timeout: 15_000 });
    assert.match(await status().innerText(), /Connected to the bridge serving .*shared/);
  });

  it("keeps no secret where a content script could read it, only a key that proves it", { timeout: 60_000 }, async () => {
    // `chrome.storage.local` is readable by content scripts: the secret is nowhere in it.
    const local = await h.options.evaluate(() => chrome.storage.local.get(null));
    assert.ok(!JSON.stringify(local).includes(SECRET), JSON.stringify(local));
    // The extension's own IndexedDB holds a key that cannot be read back.
    const key = await h.options.evaluate(async () => {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const open = indexedDB.open("mimo-vault");
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
      });
      const key = await new Promise<CryptoKey>((resolve, reject) => {
        const get = db.transaction("secrets").objectStore("secrets").get("bridge-hmac");
        get.onsuccess = () => resolve(get.result as CryptoKey);
        get.onerror = () => reject(get.error);
      });
      db.close();
      const exported = await crypto.subtle.exportKey("raw", key).then(
        () => "exported",
        (e: Error) => e.name,
      );
      return { algorithm: key.algorithm.name, extractable: key.extractable, exported };
    });
    assert.deepEqual(key, { algorithm: "HMAC", extractable: false, exported: "InvalidAccessError" });
    assert.equal(await h.options.locator("#bridge-secret").inputValue(), "", "the page cannot show it either");

    // An earlier version's plain secret is turned into the key and removed.
    await h.options.locator("#bridge-forget").click();
    await h.options.locator('#bridge-status[data-state="off"]').waitFor({ timeout: 15_000 });
    await h.options.evaluate(([secret, url]) => chrome.storage.local.set({ bridgeSecret: secret, bridgeUrl: url }), [SECRET, `${bridge.url}/`]);
    await h.options.locator('#bridge-status[data-state="connected"]').waitFor({ timeout: 30_000 });
    const after = await h.options.evaluate(() => chrome.storage.local.get(null));
    assert.ok(!("bridgeSecret" in after) && !JSON.stringify(after).includes(SECRET), JSON.stringify(after));
  });

  it("sends nothing derived from the secret to a program on the port that is not the bridge", { timeout: 60_000 }, async () => {
    // Something else listens where the extension looks for the bridge: it answers the hello
    // with a challenge, as the bridge would, but cannot prove the secret.
    const impostor = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise((resolve) => impostor.once("listening", resolve));
    const heard: Array<{ origin?: string; frame: Record<string, unknown> }> = [];
    impostor.on("connection", (socket, request) => {
      socket.on("message", (data) => {
        const frame = JSON.parse(String(data)) as Record<string, unknown>;
        heard.push({ origin: request.headers.origin, frame });
        if (frame.type === "hello") socket.send(JSON.stringify({ type: "challenge", nonce: "00".repeat(32), proof: "11".repeat(32) }));
      });
    });
    try {
      await h.options.locator("#bridge-url").fill(`ws://127.0.0.1:${(impostor.address() as AddressInfo).port}`);
      await h.options.locator("#bridge-secret").fill(SECRET);
      await h.options.locator("#bridge-save").click();
      await h.options.locator("#bridge-status", { hasText: "could not prove it knows the secret" }).waitFor({ timeout: 15_000 });
      assert.ok(heard.length >= 1);
      for (const { origin, frame } of heard) {
        assert.equal(origin, `chrome-extension://${h.extensionId}`);
        assert.deepEqual(Object.keys(frame).sort(), ["nonce", "type"], "only a hello, with its nonce");
        assert.equal(frame.type, "hello");
      }
    } finally {
      await h.options.locator("#bridge-url").fill(bridge.url);
      await h.options.locator("#bridge-save").click();
      await new Promise((resolve) => impostor.close(resolve));
    }
    await h.options.locator('#bridge-status[data-state="connected"]').waitFor({ timeout: 30_000 });
  });
});
