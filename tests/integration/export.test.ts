// The evidence export (`GET /api/task/{id}/export.zip`) against the built worker in Miniflare: a
// short run whose stand-in extension uploads real screenshots, asks for a confirmation and types
// a secret; the archive is unpacked with Debian's unzip (another implementation than the one
// that wrote it) and compared with the audit log, the export and the uploaded bytes.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { AuditRecord, BrowserAction, ExtensionMessage, PresignResponse } from "../../protocol/ts/protocol.ts";
import { api, ExtensionClient, newTask, post, WebClient } from "../support/clients.ts";
import { ownRuntime } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";
import { agentStep } from "../support/shopper.ts";
import { unzip } from "../support/unzip.ts";

const SECRET = "hunter2-Export-Secret-9f3";
/** Where the stand-in's only element, "Install", is in every screenshot. */
const INSTALL_BOX = { x: 48, y: 210, w: 140, h: 36 };

let mimo: Mimo;
ownRuntime(
  {
    bindings: {
      MIMO_LLM_PROVIDER: "anthropic",
      MIMO_LLM_API_KEY: "sk-ant-test",
      // "Install" is irreversible here: the click waits for the person.
      MIMO_RISK_RULES: JSON.stringify({ irreversibleWords: ["install"] }),
      MIMO_SECRETS_KEY: "export-test-secrets-key-0123456789",
    },
  },
  (m) => (mimo = m),
);

const work = await mkdtemp(path.join(tmpdir(), "mimo-export-"));
after(() => rm(work, { recursive: true, force: true }));

/** What the stand-in uploaded, by artifact id. */
const uploaded = new Map<string, Buffer>();

/** A JPEG's first bytes and then noise: what matters is that the bytes come back the same. */
function jpeg(size: number): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(size - 4)]);
}

/** Uploads a screenshot as the extension does (presigned URL, its own credential). */
async function screenshot(ext: ExtensionClient, action: BrowserAction, bytes: Buffer): Promise<unknown> {
  const presign = { taskId: action.taskId, kind: "screenshot", contentType: "image/jpeg", contentLength: bytes.length, actionId: action.actionId };
  const granted = await post(mimo, "/api/artifacts/presign", presign, ext.token);
  assert.equal(granted.status, 200, await granted.clone().text());
  const grant = (await granted.json()) as PresignResponse;
  const put = await fetch(grant.uploadUrl, { method: "PUT", headers: { "content-type": "image/jpeg" }, body: new Uint8Array(bytes) });
  assert.equal(put.status, 201, await put.clone().text());
  uploaded.set(grant.artifactId, bytes);
  return { artifactId: grant.artifactId, url: "http://docs.test/", width: 1280, height: 720 };
}

/**
 * Answers every action as an extension would: real screenshot uploads (the second one 3 MiB, so
 * it reaches the archive in many chunks), an element list with "Install" in view, and a secret
 * fetched at the moment of typing, as the extension fetches it (and never reports it).
 */
function standIn(ext: ExtensionClient): void {
  let shots = 0;
  ext.ws.on("message", async (data) => {
    const frame = JSON.parse(String(data)) as { type: string; action?: BrowserAction };
    if (frame.type !== "browser_action" || frame.action === undefined) return;
    const action = frame.action;
    const base = { actionId: action.actionId, attempt: action.attempt, taskId: action.taskId };
    ext.send({ type: "action_ack", ...base });
    let result: unknown = {};
    switch (action.name) {
      case "task_start":
        result = { tabId: 11, windowId: 3, url: "http://docs.test/" };
        break;
      case "browser_observe": {
        shots += 1;
        const shot = await screenshot(ext, action, jpeg(shots === 2 ? 3 * 1024 * 1024 : 20_000));
        const readability = { text: "Docs home. Install with npm.", title: "Docs", contentLengthBytes: 28, truncated: false };
        const domIndex = {
          elements: [{ clickId: 1, tag: "a", text: "Install", frameId: 0, bbox: INSTALL_BOX }],
          text: "[1]<a>Install</a>",
          url: "http://docs.test/",
          title: "Docs",
          scrollX: 0,
          scrollY: 0,
        };
        const part = (r: unknown) => ({ result: r, partial: false, warnings: [] });
        result = { screenshot: part(shot), readability: part(readability), domIndex: part(domIndex) };
        break;
      }
      case "browser_type": {
        const res = await post(mimo, `/api/task/${action.taskId}/secret-value`, { name: "pw", url: "http://docs.test/", actionId: action.actionId, attempt: action.attempt }, ext.token);
        assert.equal(((await res.json()) as { value: string }).value, SECRET, "the extension gets the value to type");
        result = { typed: true };
        break;
      }
    }
    const outcome: ExtensionMessage = { type: "action_result", outcome: { ...base, status: "ok", result, warnings: [] } };
    ext.send(outcome);
  });
}

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

describe("the evidence export", () => {
  it("zips the audit log, the whole run and every screenshot byte for byte, with checksums and no secret", async () => {
    const ext = await ExtensionClient.connect(mimo, "stand-in-export");
    standIn(ext);
    mimo.llm.script([
      agentStep({ navigate: { url: "http://docs.test/" } }, "Opening the docs."),
      agentStep({ click: { index: 1 } }, "Installing."),
      agentStep({ type: { index: 1, text: "{{secret:pw}}" } }, "Signing in."),
      agentStep({ done: { success: true, text: "Installed." } }, "Done."),
    ]);
    const taskId = await newTask(mimo);
    const stored = await fetch(`${mimo.url}/api/task/${taskId}/secrets/pw`, {
      method: "PUT",
      headers: { authorization: `Bearer ${mimo.token}`, "content-type": "application/json" },
      body: JSON.stringify({ value: SECRET, domains: ["http://docs.test"] }),
    });
    assert.equal(stored.status, 201, await stored.clone().text());
    const web = await WebClient.connect(mimo, taskId);
    await web.waitFor((e) => e.type === "taskStatus" && e.selectedClientId === ext.clientId, "bound to the stand-in");
    // The person confirms whatever is asked ("Install" is in the label of both steps on it).
    web.ws.on("message", (data) => {
      const event = JSON.parse(String(data)) as { type: string; step?: number };
      if (event.type === "confirmationRequested") web.send({ type: "confirm", step: event.step!, approve: true });
    });
    web.send({ type: "user_message", content: "Install it from http://docs.test/" });
    const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 30_000);
    assert.ok(outcome.type === "structuredOutput" && outcome.status === "ok", JSON.stringify(outcome));

    const res = await api(mimo, `/api/task/${taskId}/export.zip`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get("content-type"), "application/zip");
    assert.equal(res.headers.get("content-disposition"), `attachment; filename="mimo-task-${taskId}.zip"`);
    const zip = Buffer.from(await res.arrayBuffer());
    const file = path.join(work, "evidence.zip");
    await writeFile(file, zip);
    const dir = path.join(work, "evidence");
    const names = unzip(file, dir);
    const read = (name: string) => readFile(path.join(dir, name));

    // The audit log is the one the API serves, line for line.
    const jsonl = await (await api(mimo, `/api/task/${taskId}/audit.jsonl`)).text();
    assert.equal((await read("audit.jsonl")).toString("utf8"), jsonl);
    const records = jsonl.trimEnd().split("\n").map((l) => JSON.parse(l) as AuditRecord);
    assert.deepEqual(records.map((r) => r.action.type), ["navigate", "click", "type", "done"]);
    const click = records[1]!;
    assert.deepEqual(click.before?.target, INSTALL_BOX, "the clicked element's box, to outline in the before screenshot");
    assert.equal(click.confirmation?.approved, true);

    // Every screenshot the log refers to, under its artifact id, exactly as uploaded.
    const referred = [...new Set(records.flatMap((r) => [r.before?.screenshotArtifactId, r.after?.screenshotArtifactId]).filter((id) => id !== undefined))];
    assert.equal(referred.length, 3, "a page after each of the three browser steps");
    assert.deepEqual(names, ["README.txt", "audit.jsonl", "task.json", ...referred.map((id) => `screenshots/${id}.jpg`), "SHA256SUMS"]);
    for (const id of referred) assert.ok((await read(`screenshots/${id}.jpg`)).equals(uploaded.get(id)!), `screenshot ${id}`);

    // The whole run, as GET /export has it.
    const run = JSON.parse((await read("task.json")).toString("utf8")) as { format: string; task: { taskId: string; status: string }; events: unknown[] };
    assert.equal(run.format, "mimo-task-export/1");
    assert.deepEqual(run.task.taskId, taskId);
    assert.equal(run.task.status, "completed");
    assert.deepEqual(run.events, web.history());

    // The checksums hold for every file, checked by sha256sum itself.
    const sums = (await read("SHA256SUMS")).toString("utf8");
    assert.equal(sums.trimEnd().split("\n").length, names.length - 1);
    execFileSync("sha256sum", ["--strict", "-c", "SHA256SUMS"], { cwd: dir });
    assert.match(sums, new RegExp(`^${sha256(uploaded.get(referred[1]!)!)}  screenshots/${referred[1]}\\.jpg$`, "m"));
    assert.match((await read("README.txt")).toString("utf8"), new RegExp(`^Evidence of Mimo task ${taskId}.*: 4 steps\\.`));

    // The secret was typed, by placeholder; its value is nowhere in the archive (entries are
    // stored uncompressed, so a search of its bytes is a search of every file).
    assert.ok(jsonl.includes("{{secret:pw}}"));
    assert.ok(!zip.includes(Buffer.from(SECRET)), "the secret's value is in the archive");
    await Promise.all([ext.close(), web.close()]);

    // A screenshot gone from storage (its retention ran out) is left out and said to be missing.
    const gone = referred[0]!;
    const bucket = (await mimo.mf.getR2Bucket("ARTIFACTS")) as unknown as { delete(key: string): Promise<void> };
    await bucket.delete(`tasks/${taskId}/screenshot/${gone}`);
    const later = Buffer.from(await (await api(mimo, `/api/task/${taskId}/export.zip`)).arrayBuffer());
    await writeFile(file, later);
    const laterDir = path.join(work, "later");
    const laterNames = unzip(file, laterDir);
    assert.ok(!laterNames.includes(`screenshots/${gone}.jpg`));
    assert.deepEqual(laterNames.slice(-2), ["SHA256SUMS", "MISSING.txt"]);
    assert.match(await readFile(path.join(laterDir, "MISSING.txt"), "utf8"), new RegExp(`\\nscreenshots/${gone}\\.jpg\\n$`));
  });

  it("answers an unknown task with 404 and the error object", async () => {
    const res = await api(mimo, "/api/task/00000000-0000-4000-8000-000000000000/export.zip");
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { code: string }).code, "NOT_FOUND");
    assert.equal((await api(mimo, "/api/task/00000000-0000-4000-8000-000000000000/export.zip", null)).status, 401);
  });
});
