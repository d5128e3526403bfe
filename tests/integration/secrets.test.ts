// Secrets by placeholder, server side: the built worker in Miniflare. A task's own secrets are
// stored (sealed under MIMO_SECRETS_KEY), listed without values and deleted; only the task's own
// extension gets a value, and only for a page on the secret's domains; and no value ever reaches
// the model, the event log, the export, the web app's socket or the SQLite files at rest.
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import type { BrowserAction, SecretInfo, ServerToExtension } from "../../protocol/ts/protocol.ts";
import { api, ExtensionClient, newTask, post, WebClient } from "../support/clients.ts";
import { ownRuntime, startMimo } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";

const DEPLOYMENT_VALUE = "deploy-Pw-7s9Qz!x";
const TASK_VALUE = "task-S3cret-value-&-<42>";

let mimo: Mimo;
ownRuntime(
  {
    bindings: {
      MIMO_SECRETS: JSON.stringify({ shop_pw: { value: DEPLOYMENT_VALUE, domains: ["shop.example", "*.shop.example"] } }),
      MIMO_SECRETS_KEY: "integration-test-secrets-key-0123456789",
    },
  },
  (m) => (mimo = m),
);

async function put(taskId: string, name: string, body: unknown, token = mimo.token): Promise<Response> {
  return fetch(`${mimo.url}/api/task/${taskId}/secrets/${name}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function remove(taskId: string, name: string): Promise<Response> {
  return fetch(`${mimo.url}/api/task/${taskId}/secrets/${name}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } });
}

/** Every byte of every file under `dir`. */
async function allBytes(dir: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) parts.push(await readFile(path.join(entry.parentPath, entry.name)));
  }
  return Buffer.concat(parts);
}

describe("a task's secrets", () => {
  it("are stored sealed, listed without values, typed only on their domains, deleted, and never told to the model", async () => {
    const taskId = await newTask(mimo);
    // Stored: the answer names it, without the value.
    const stored = await put(taskId, "pw", { value: TASK_VALUE, domains: ["http://127.0.0.1:9", "*.login.test"] });
    assert.equal(stored.status, 201);
    const storedText = await stored.text();
    assert.ok(!storedText.includes(TASK_VALUE), storedText);
    assert.deepEqual(JSON.parse(storedText), { name: "pw", domains: ["http://127.0.0.1:9", "*.login.test"], scope: "task" });

    // Listed with the deployment's: names and domains only.
    const listed = await api(mimo, `/api/task/${taskId}/secrets`);
    const listText = await listed.text();
    assert.equal(listed.status, 200);
    assert.ok(!listText.includes(TASK_VALUE) && !listText.includes(DEPLOYMENT_VALUE), listText);
    assert.deepEqual(
      (JSON.parse(listText) as SecretInfo[]).map((s) => `${s.name}:${s.scope}`),
      ["pw:task", "shop_pw:deployment"],
    );

    // Bad input is refused without echoing it.
    for (const [name, body] of [
      ["bad name!", { value: "x-value-1", domains: ["a.test"] }],
      ["ok", { value: "x-value-2", domains: [] }],
      ["ok", { value: "x-value-3", domains: ["https://a.test/"] }],
      ["ok", { value: "x-value-5", domains: ["ftp://a.test"] }],
      ["ok", { value: "", domains: ["a.test"] }],
      ["ok", { nothing: "x-value-4" }],
    ] as const) {
      const res = await put(taskId, encodeURIComponent(name), body);
      const text = await res.text();
      assert.ok(res.status === 400 || res.status === 404, `${name}: ${res.status} ${text}`);
      assert.ok(!text.includes("x-value"), text);
    }

    // Only the task's own extension gets a value: not the deployment token, not another extension.
    const asWeb = await post(mimo, `/api/task/${taskId}/secret-value`, { name: "pw", url: "http://127.0.0.1:9/login" });
    assert.ok(asWeb.status === 404 || asWeb.status === 403, `${asWeb.status}`);
    assert.ok(!(await asWeb.text()).includes(TASK_VALUE));
    const ext = await ExtensionClient.connect(mimo, "secret-ext");
    const other = await ExtensionClient.connect(mimo, "other-ext");
    const web = await WebClient.connect(mimo, taskId);
    web.send({ type: "select_client", clientId: ext.clientId });
    await web.waitFor((e) => e.type === "taskStatus" && e.selectedClientId === ext.clientId, "the extension bound");
    // A value is given only for a typing in flight whose text holds its placeholder (the
    // stand-in extension takes each action and leaves it running), once per attempt.
    let taken = 0;
    const typing = async (text: string) => {
      void fetch(`${mimo.url}/api/task/${taskId}/actions`, {
        method: "POST",
        headers: { authorization: `Bearer ${mimo.token}`, "content-type": "application/json" },
        body: JSON.stringify({ command: { name: "browser_type", params: { clickId: 1, text } }, waitMs: 0 }),
      });
      const frame = await ext.waitFor((m) => m.type === "browser_action", "the typing", 5_000, taken);
      taken = ext.received.indexOf(frame) + 1;
      const action = (frame as Extract<ServerToExtension, { type: "browser_action" }>).action;
      ext.send({ type: "action_ack", actionId: action.actionId, attempt: action.attempt, taskId });
      return {
        action,
        end: () => ext.send({ type: "action_result", outcome: { actionId: action.actionId, attempt: action.attempt, taskId, status: "ok", result: {}, warnings: [] } }),
      };
    };
    const value = (name: string, url: string, action: BrowserAction | undefined, token = ext.token) =>
      post(mimo, `/api/task/${taskId}/secret-value`, { name, url, actionId: action?.actionId ?? "act_none", attempt: action?.attempt ?? 1 }, token);

    const login = await typing("{{secret:pw}}");
    const refusedOther = await value("pw", "http://127.0.0.1:9/login", login.action, other.token);
    assert.equal(refusedOther.status, 403);
    assert.ok(!(await refusedOther.text()).includes(TASK_VALUE));
    // A page on another domain: PERMISSION_DENIED, naming no domain; no value. A rule without a
    // scheme is https on its default port; plain http is named (`http://…`).
    for (const url of [
      "http://127.0.0.1:10/login",
      "https://127.0.0.1:9/login",
      "http://a.login.test/",
      "https://a.login.test:8443/",
      "https://evil.test/?to=127.0.0.1:9",
      "https://evil.test\\@a.login.test/",
      "https://login.test.evil.test/",
      "file:///etc/passwd",
    ]) {
      const res = await value("pw", url, login.action);
      const body = (await res.json()) as { code: string; message: string };
      assert.equal(res.status, 403, url);
      assert.equal(body.code, "PERMISSION_DENIED");
      assert.doesNotMatch(body.message, /http:\/\/127\.0\.0\.1:9\b|\*\.login\.test/, "the secret's domains are not told");
      assert.ok(!JSON.stringify(body).includes(TASK_VALUE));
    }
    const given = await value("pw", "http://127.0.0.1:9/login", login.action);
    assert.equal(given.status, 200);
    assert.deepEqual(await given.json(), { name: "pw", value: TASK_VALUE, domains: ["http://127.0.0.1:9", "*.login.test"] });
    // Once per attempt: asked again, refused.
    const again = await value("pw", "http://127.0.0.1:9/login", login.action);
    assert.equal(again.status, 403);
    assert.ok(!(await again.text()).includes(TASK_VALUE));
    // Not for a secret the typing does not hold, nor for an attempt or action that is not the one.
    assert.equal((await value("shop_pw", "https://www.shop.example/x", login.action)).status, 403);
    assert.equal((await value("pw", "http://127.0.0.1:9/login", { ...login.action, attempt: 2 })).status, 403);
    assert.equal((await value("pw", "http://127.0.0.1:9/login", undefined)).status, 403);
    login.end();

    const both = await typing("{{secret:pw}} then {{secret:shop_pw}} and {{secret:nope}}");
    assert.equal(((await (await value("pw", "https://a.login.test/", both.action)).json()) as { value: string }).value, TASK_VALUE);
    assert.equal((await value("shop_pw", "http://www.shop.example/x", both.action)).status, 403, "a deployment's rule without a scheme is https only");
    assert.equal(((await (await value("shop_pw", "https://www.shop.example/x", both.action)).json()) as { value: string }).value, DEPLOYMENT_VALUE);
    // An unknown name: TARGET_NOT_FOUND, naming no other secret.
    const unknown = await value("nope", "http://127.0.0.1:9/", both.action);
    const unknownBody = (await unknown.json()) as { code: string; message: string };
    assert.equal(unknownBody.code, "TARGET_NOT_FOUND");
    assert.doesNotMatch(unknownBody.message, /shop_pw|"pw"/);
    both.end();
    // A typing that ended gets nothing, though it never asked.
    const ended = await typing("{{secret:pw}}");
    ended.end();
    const states = async () => (await (await api(mimo, `/api/task/${taskId}/actions`)).json()) as Array<{ actionId: string; state: string }>;
    while ((await states()).find((a) => a.actionId === ended.action.actionId)?.state !== "succeeded") await new Promise((r) => setTimeout(r, 50));
    assert.equal((await value("pw", "http://127.0.0.1:9/login", ended.action)).status, 403);

    // The model is told the names and how to type them, never a value.
    mimo.llm.script([{ text: "I can log in with {{secret:pw}} when you ask." }]);
    const before = mimo.llm.requests().length;
    web.send({ type: "user_message", content: "What can you log in with?" });
    await web.reply();
    const request = JSON.stringify(mimo.llm.requests().slice(before).map((r) => r.body));
    assert.match(request, /\{\{secret:pw\}\} \(on http:\/\/127\.0\.0\.1:9, \*\.login\.test\)/);
    assert.match(request, /\{\{secret:shop_pw\}\}/);

    // Deleted: gone from the list and from the next model call; a second delete is 404.
    assert.equal((await remove(taskId, "pw")).status, 200);
    assert.equal((await remove(taskId, "pw")).status, 404);
    const after = (await (await api(mimo, `/api/task/${taskId}/secrets`)).json()) as SecretInfo[];
    assert.deepEqual(after.map((s) => s.name), ["shop_pw"]);
    const gone = await typing("{{secret:pw}}");
    assert.equal((await value("pw", "http://127.0.0.1:9/login", gone.action)).status, 422);
    gone.end();

    // No value anywhere: the model's requests, the event log (export), the web app's socket,
    // the extension sockets, and the Durable Objects' SQLite files at rest.
    const everything = [
      JSON.stringify(mimo.llm.requests().map((r) => r.body)),
      await (await api(mimo, `/api/task/${taskId}/export`)).text(),
      JSON.stringify(web.received),
      JSON.stringify(ext.received),
    ].join("\n");
    for (const secret of [TASK_VALUE, DEPLOYMENT_VALUE]) assert.ok(!everything.includes(secret), `${secret} leaked`);
    // Storage is written lazily: put one again so the file surely holds its sealed form.
    assert.equal((await put(taskId, "kept", { value: TASK_VALUE, domains: ["http://127.0.0.1:9"] })).status, 201);
    await mimo.evictTask(taskId);
    const disk = await allBytes(mimo.durableObjectsDir);
    assert.ok(disk.includes(Buffer.from("kept")), "the secret's name is stored (the right files were searched)");
    for (const secret of [TASK_VALUE, DEPLOYMENT_VALUE]) {
      assert.ok(!disk.includes(Buffer.from(secret)), `${secret} is in the SQLite files`);
      assert.ok(!disk.includes(Buffer.from(Buffer.from(secret).toString("hex"))), `${secret} is in the SQLite files as hex`);
    }
    web.close();
    ext.close();
    other.close();
  });
});

describe("without MIMO_SECRETS_KEY", () => {
  it("a task cannot store a secret, and says which setting is missing", async () => {
    const bare = await startMimo();
    try {
      const taskId = await newTask(bare);
      const res = await fetch(`${bare.url}/api/task/${taskId}/secrets/pw`, {
        method: "PUT",
        headers: { authorization: `Bearer ${bare.token}`, "content-type": "application/json" },
        body: JSON.stringify({ value: "never-stored-1", domains: ["a.test"] }),
      });
      const body = (await res.json()) as { code: string; message: string };
      assert.equal(res.status, 403);
      assert.equal(body.code, "PERMISSION_DENIED");
      assert.match(body.message, /MIMO_SECRETS_KEY/);
      assert.deepEqual(await (await api(bare, `/api/task/${taskId}/secrets`)).json(), []);
    } finally {
      await bare.dispose();
    }
  });
});
