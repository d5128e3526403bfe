// The registry scaled out: each extension client has an object of its own (`client:<clientId>`:
// its socket, polls, outbox, snapshot, copies of its bindings and of its credential's standing),
// and the deployment's directory (`global`) keeps pairing, credentials, bindings, the listing and
// selection. Shown here: two clients land in different objects, while the listing, selection,
// binding and revocation work across them; a binding moves routing at once; a client's socket
// never gets a frame of a task bound to another, nor can it report on one; a revoked client's
// object closes its socket before the revocation is answered; an extension's token is checked
// by its own object (the directory not asked; a made-up or moved secret, a revocation, a new
// pairing refused there); and what a
// deployment from before kept for a client in the directory (its outbox, its snapshot) is handed
// over to the client's object, numbering and all.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, it } from "node:test";
import WebSocket from "ws";
import type { BrowserAction, BrowserSnapshot, ExtensionList, PollResponse, ServerToExtension } from "../../protocol/ts/protocol.ts";
import { api, ExtensionClient, newTask, pairExtension, post, sleep, WebClient, wsTicket } from "../support/clients.ts";
import { ownRuntime, OBJECTS_NAME } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";

let mimo: Mimo;

async function extensions(): Promise<ExtensionList["extensions"]> {
  const res = await api(mimo, "/api/extension/extension-list");
  assert.equal(res.status, 200);
  return ((await res.json()) as ExtensionList).extensions;
}

/** Binds the task to `clientId` as the person does (the web app's explicit choice). */
async function select(taskId: string, clientId: string) {
  const web = await WebClient.connect(mimo, taskId);
  await web.waitFor((e) => e.type === "ready", "ready");
  web.send({ type: "select_client", clientId });
  await web.waitFor((e) => e.type === "taskStatus" && e.selectedClientId === clientId, `bound to ${clientId}`);
  await web.close();
}

type Answer = { status: number; body: { actionId?: string; state?: string; code?: string; message?: string } };
async function act(taskId: string, command: unknown, waitMs = 10_000): Promise<Answer> {
  const res = await post(mimo, `/api/task/${taskId}/actions`, { command, waitMs });
  return { status: res.status, body: (await res.json()) as Answer["body"] };
}

/** Every `browser_action` an extension was sent, by task. */
function actionsOf(ext: ExtensionClient, taskId: string): BrowserAction[] {
  return ext.received
    .filter((m): m is Extract<ServerToExtension, { type: "browser_action" }> => m.type === "browser_action")
    .map((m) => m.action)
    .filter((a) => a.taskId === taskId);
}

/** The registry's objects' SQLite files (the runtime stopped), each open. */
async function registryDatabases(): Promise<DatabaseSync[]> {
  const dir = path.join(mimo.durableObjectsDir, `${OBJECTS_NAME}-ExtensionRegistry`);
  const files = (await readdir(dir)).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  return files.map((f) => new DatabaseSync(path.join(dir, f)));
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The status of buying a socket ticket with an extension token: 200 when the token opens the extension's routes. */
async function opens(token: string): Promise<number> {
  const res = await post(mimo, "/api/ws-ticket", undefined, token);
  await res.arrayBuffer();
  return res.status;
}

function isDirectory(db: DatabaseSync): boolean {
  return (db.prepare("SELECT count(*) AS n FROM credentials").get() as { n: number }).n > 0;
}

/** The client a client's object is for: the one its bindings or its sockets' presence name. */
function boundClients(db: DatabaseSync): string[] {
  return (db.prepare("SELECT DISTINCT client_id FROM bindings ORDER BY client_id").all() as { client_id: string }[]).map((r) => r.client_id);
}

describe("the registry, one object per extension client", () => {
  ownRuntime({}, (m) => (mimo = m));

  it("puts two clients in different objects; listing, selection, binding and revocation work across them, and a binding moves routing at once", async () => {
    const a = await ExtensionClient.connect(mimo, "shard-a");
    const b = await ExtensionClient.connect(mimo, "shard-b");
    for (const ext of [a, b]) ext.serve(() => ({ result: { done: true } }));
    // The directory heard of both from their objects: listed, online, paired, named.
    const listed = await extensions();
    for (const ext of [a, b]) {
      const info = listed.find((e) => e.clientId === ext.clientId);
      assert.ok(info, `${ext.clientId} listed`);
      assert.equal(info.online, true);
      assert.equal(info.paired, true);
      assert.equal(info.name, ext === a ? "Browser shard-a" : "Browser shard-b");
    }

    const taskId = await newTask(mimo);
    await select(taskId, a.clientId);
    const first = await act(taskId, { name: "browser_hover", params: { clickId: 1 } });
    assert.equal(first.body.state, "succeeded", JSON.stringify(first));
    assert.equal(actionsOf(a, taskId).length, 1);

    // Bound to B: the very next action goes to B, and A gets nothing more of the task.
    await select(taskId, b.clientId);
    const second = await act(taskId, { name: "browser_hover", params: { clickId: 2 } });
    assert.equal(second.body.state, "succeeded", JSON.stringify(second));
    assert.deepEqual(
      actionsOf(b, taskId).map((x) => x.actionId),
      [second.body.actionId],
    );
    assert.equal(actionsOf(a, taskId).length, 1, "A's socket gets no frame of a task bound to B");

    // A reports on the task bound to B (an action it never had): refused by its own object,
    // and the task's record of it is B's result.
    const from = a.received.length;
    a.send({
      type: "action_result",
      outcome: { actionId: second.body.actionId!, attempt: 1, taskId, status: "error", error: { code: "TARGET_NOT_FOUND", message: "forged", retryable: false }, warnings: [] },
    });
    const refused = await a.waitFor((m) => m.type === "error", "the refusal", 5_000, from);
    assert.ok(refused.type === "error" && refused.error.code === "PERMISSION_DENIED", JSON.stringify(refused));
    const records = (await (await api(mimo, `/api/task/${taskId}/actions`)).json()) as { actionId: string; state: string }[];
    assert.equal(records.find((r) => r.actionId === second.body.actionId)?.state, "succeeded");

    // Revoking A (through the directory) closes A's socket in A's object at once; B goes on.
    const staleTicket = await wsTicket(mimo, a.token);
    const revoked = await fetch(`${mimo.url}/api/extension/${a.clientId}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } });
    assert.equal(revoked.status, 200);
    assert.equal(await a.serverCloseCode(), 4401);
    assert.equal((await extensions()).find((e) => e.clientId === a.clientId)?.paired, false);
    const third = await act(taskId, { name: "browser_hover", params: { clickId: 3 } });
    assert.equal(third.body.state, "succeeded", JSON.stringify(third));

    // A ticket bought before the revocation opens no socket: refused at the door.
    const q = new URLSearchParams({ clientId: a.clientId, ticket: staleTicket });
    const late = new WebSocket(`${mimo.url.replace("http", "ws")}/ws/extension?${q}`);
    late.on("error", () => {});
    const refusedWith = await new Promise<number>((resolve) => {
      late.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      late.once("open", () => resolve(101));
    });
    assert.equal(refusedWith, 401);

    // Two objects for two clients, and the directory none of their sockets' state.
    await mimo.restart(async () => {
      const dbs = await registryDatabases();
      try {
        const directories = dbs.filter(isDirectory);
        assert.equal(directories.length, 1, "one directory");
        const [directory] = directories;
        for (const table of ["outbox", "snapshots", "pollers"]) {
          assert.equal((directory!.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n, 0, `no ${table} rows in the directory`);
        }
        const objects = dbs.filter((db) => !isDirectory(db));
        const byClient = objects.map(boundClients).filter((c) => c.length > 0);
        // Each object holds its own client's bindings only; A's copy was unbound, B's is bound.
        assert.deepEqual(byClient, [[b.clientId]]);
        const states = objects.map((db) => Object.fromEntries((db.prepare("SELECT key, value FROM client_state").all() as { key: string; value: number }[]).map((r) => [r.key, r.value])));
        assert.ok(states.filter((s) => s.handed_over === 1).length >= 2, JSON.stringify(states));
        assert.ok(states.some((s) => s.revoked === 1), "A's object knows A is revoked");
      } finally {
        for (const db of dbs) db.close();
      }
    });
  });
});

describe("extension tokens, checked at the extension's own object", () => {
  ownRuntime({}, (m) => (mimo = m));

  it("opens an extension's routes by its own object, not the directory; a made-up or moved secret, a revocation and a new pairing end it there", async () => {
    const a = await pairExtension(mimo);
    const b = await pairExtension(mimo);
    for (const { clientId, token } of [a, b]) assert.match(token, new RegExp(`^mimo_ext_${clientId}\\.[0-9a-f]{64}$`), "the token names its client");
    assert.equal(await opens(a.token), 200);
    // The directory made unable to find either token (as if it were never asked), and given a
    // token of the kind issued before tokens named their client, for B.
    const older = `mimo_ext_${"ab".repeat(32)}`;
    await mimo.restart(async () => {
      const dbs = await registryDatabases();
      try {
        const directory = dbs.find(isDirectory)!;
        directory.prepare("UPDATE credentials SET token_hash = 'not-' || token_hash WHERE client_id IN (?, ?)").run(a.clientId, b.clientId);
        directory.prepare("INSERT INTO credentials (token_hash, client_id, created_at) VALUES (?, ?, ?)").run(sha256(older), b.clientId, Date.now());
      } finally {
        for (const db of dbs) db.close();
      }
    });
    assert.equal(await opens(a.token), 200, "A's token is checked by A's object");
    assert.equal(await opens(b.token), 200, "B's by B's");
    assert.equal(await opens(older), 200, "a token that names no client is still checked by the directory");

    // Made up, or moved: the name in a token only says where it is checked.
    const secretOf = (token: string) => token.slice(token.indexOf(".") + 1);
    for (const forged of [
      `mimo_ext_${a.clientId}.${"0".repeat(64)}`,
      `mimo_ext_${b.clientId}.${secretOf(a.token)}`,
      `mimo_ext_${a.clientId}.${secretOf(a.token).toUpperCase()}`,
      `mimo_ext_ext-${"1".repeat(32)}.${secretOf(a.token)}`,
      `mimo_ext_${a.clientId}.${secretOf(a.token)}0`,
      `mimo_ext_${a.clientId}${secretOf(a.token)}`,
    ]) {
      assert.equal(await opens(forged), 401, forged);
    }

    // Revoked in the web app: A's object refuses its token at once.
    const revoked = await fetch(`${mimo.url}/api/extension/${a.clientId}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } });
    assert.equal(revoked.status, 200);
    assert.equal(await opens(a.token), 401, "revoked");
    // B paired again, its extension naming the older token it held (the one the directory still
    // knows): B's object takes the new token, every one before is refused.
    const again = await pairExtension(mimo, older);
    assert.equal(again.clientId, b.clientId, "its id kept");
    assert.match(again.token, new RegExp(`^mimo_ext_${b.clientId}\\.`));
    assert.equal(await opens(b.token), 401, "the token B's object checked before");
    assert.equal(await opens(older), 401, "the token the new pairing replaced");
    assert.equal(await opens(again.token), 200);
  });
});

describe("the registry, from one object to one per client", () => {
  ownRuntime({}, (m) => (mimo = m));

  it("hands what the directory kept for a client (its outbox, numbered as before, and its snapshot) to the client's own object", async () => {
    const { clientId } = await pairExtension(mimo);
    // The credential as that release issued it: a token that does not name its client, which
    // the directory checks.
    const token = `mimo_ext_${"5a".repeat(32)}`;
    const snapshot: BrowserSnapshot = {
      windows: [{ windowId: 1, focused: true }],
      tabs: [{ tabId: 5, windowId: 1, index: 0, url: "http://127.0.0.1/old", title: "Kept", status: "complete", active: true }],
      groups: [],
      activeTabId: 5,
    };
    const kept: ServerToExtension = { type: "pong" };
    await mimo.restart(async () => {
      const dbs = await registryDatabases();
      try {
        // As a release before the clients' objects left it: the client's frames, polls and
        // snapshot in the directory, and no object of its own yet.
        const directory = dbs.find(isDirectory)!;
        const now = Date.now();
        directory.prepare("INSERT INTO outbox (seq, client_id, frame, kept_at) VALUES (41, ?, ?, ?)").run(clientId, JSON.stringify(kept), now + 5_000);
        directory.prepare("INSERT INTO outbox (seq, client_id, frame, kept_at) VALUES (42, 'someone-else', '{}', ?)").run(now);
        directory.prepare("INSERT INTO snapshots (client_id, body) VALUES (?, ?)").run(clientId, JSON.stringify(snapshot));
        directory.prepare("INSERT INTO pollers (client_id, polled_at) VALUES (?, ?)").run(clientId, now + 5_000);
        directory.prepare("UPDATE credentials SET token_hash = ? WHERE client_id = ?").run(sha256(token), clientId);
        for (const db of dbs.filter((d) => !isDirectory(d))) {
          db.exec("DELETE FROM client_state; DELETE FROM client_credential; DELETE FROM bindings; DELETE FROM outbox; DELETE FROM snapshots; DELETE FROM pollers;");
        }
      } finally {
        for (const db of dbs) db.close();
      }
    });
    const poll = async (ack: number): Promise<PollResponse> => {
      const res = await fetch(`${mimo.url}/api/extension/poll?clientId=${clientId}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ ack, frames: [] }),
      });
      assert.equal(res.status, 200);
      return (await res.json()) as PollResponse;
    };
    const first = await poll(0);
    assert.deepEqual(first.frames, [{ seq: 41, frame: kept }], "kept before, delivered by the client's object");
    // The snapshot the directory kept is the client's object's now: binding a task to the
    // client gives the task that snapshot.
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    await web.waitFor((e) => e.type === "ready", "ready");
    web.send({ type: "select_client", clientId });
    const synced = await web.waitFor((e) => e.type === "snapshotSync", "the kept snapshot");
    assert.ok(synced.type === "snapshotSync");
    assert.deepEqual(synced.snapshot, snapshot);
    await web.close();
    // Acknowledged by its old number; what is kept next is numbered after every old one (the
    // directory's 42 included), or the extension would take it for one it has.
    const res = await post(mimo, `/api/task/${taskId}/actions`, { command: { name: "task_start", params: { url: "http://shop.test/" } }, waitMs: 0 });
    assert.ok(res.status === 200 || res.status === 202, String(res.status));
    let frames: PollResponse["frames"] = [];
    for (let i = 0; i < 20 && !frames.some((f) => f.frame.type === "browser_action"); i++) {
      frames = (await poll(41)).frames;
      if (frames.length === 0) await sleep(100);
    }
    const action = frames.find((f) => f.frame.type === "browser_action");
    assert.ok(action, JSON.stringify(frames));
    assert.ok(action.seq > 42, `numbered after the directory's (${action.seq})`);
  });
});
