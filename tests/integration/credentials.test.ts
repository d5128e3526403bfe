// Credentials an attacker cannot reuse, against the built worker in Miniflare: pairing codes
// that work once, extension credentials that open only the extension's routes and can be
// revoked (closing a connected socket at once), single-use socket tickets instead of tokens in
// URLs, failed authentications limited per client, and the web app's security headers.
import assert from "node:assert/strict";
import { request } from "node:http";
import { describe, it } from "node:test";
import WebSocket from "ws";
import type { ExtensionList, FrontendMessage, PairingCode, PairResponse } from "../../protocol/ts/protocol.ts";
import { api, ExtensionClient, newTask, pairExtension, post, sleep, WebClient, wsTicket } from "../support/clients.ts";
import { ownRuntime } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";

let mimo: Mimo;

type ErrorBody = { code: string; message: string; retryable: boolean };

/** Opens a socket and says how the upgrade was refused (its status and error body), or "open". */
function upgrade(url: string): Promise<{ status: number; body: string } | "open"> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url);
    socket.on("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    socket.on("open", () => {
      socket.close();
      resolve("open");
    });
    socket.on("error", () => undefined);
  });
}

const ws = () => mimo.url.replace("http", "ws");

async function listed(clientId: string) {
  const list = (await (await api(mimo, "/api/extension/extension-list")).json()) as ExtensionList;
  return list.extensions.find((e) => e.clientId === clientId);
}

describe("pairing and extension credentials", () => {
  ownRuntime({}, (m) => (mimo = m));

  it("pairs an extension with a one-time code, typed loosely, that works once", async () => {
    const issued = await post(mimo, "/api/extension/pairing-code");
    assert.equal(issued.status, 200);
    const { code, expiresAt } = (await issued.json()) as PairingCode;
    assert.match(code, /^[A-HJKMNP-Z2-9]{4}-[A-HJKMNP-Z2-9]{4}$/);
    assert.ok(expiresAt > Date.now() + 9 * 60_000 && expiresAt <= Date.now() + 10 * 60_000, "valid for ten minutes");
    assert.equal((await post(mimo, "/api/extension/pairing-code", undefined, null)).status, 401, "only the deployment token shows codes");

    const typed = ` ${code.replace("-", "").toLowerCase()} `;
    const paired = await post(mimo, "/api/extension/pair", { code: typed }, null);
    assert.equal(paired.status, 200, await paired.clone().text());
    const credential = (await paired.json()) as PairResponse;
    assert.match(credential.clientId, /^ext-[0-9a-f]{32}$/, "the server gives the id");
    assert.match(credential.token, new RegExp(`^mimo_ext_${credential.clientId}\\.[0-9a-f]{64}$`), "the token names the client whose object checks it");

    const again = await post(mimo, "/api/extension/pair", { code }, null);
    assert.equal(again.status, 401);
    assert.match(((await again.json()) as ErrorBody).message, /wrong, expired or already used/);
    const malformed = await post(mimo, "/api/extension/pair", { code: 7 }, null);
    assert.equal(malformed.status, 400);

    const ext = await ExtensionClient.connect(mimo, "pair-1", "Paired", credential);
    assert.equal((await listed(credential.clientId))?.paired, true);
    assert.equal((await listed(credential.clientId))?.online, true);
    await ext.close();
  });

  it("never lets an extension name its id: naming another's neither takes it nor revokes its credential", async () => {
    const victim = await ExtensionClient.connect(mimo, "victim", "The person's laptop");
    const { code } = (await (await post(mimo, "/api/extension/pairing-code")).json()) as PairingCode;
    // The old request shape, naming the victim's id, and a forged `replaces`.
    const attack = await post(mimo, "/api/extension/pair", { code, clientId: victim.clientId, replaces: "mimo_ext_forged" }, null);
    assert.equal(attack.status, 200);
    const attacker = (await attack.json()) as PairResponse;
    assert.notEqual(attacker.clientId, victim.clientId, "a fresh id of the server's");
    assert.equal((await post(mimo, "/api/ws-ticket", undefined, victim.token)).status, 200, "the victim's credential still works");
    assert.equal((await listed(victim.clientId))?.online, true, "and its socket stayed open");
    const socket = await upgrade(`${ws()}/ws/extension?clientId=${victim.clientId}&ticket=${await wsTicket(mimo, attacker.token)}`);
    assert.ok(socket !== "open" && socket.status === 403, "the attacker's ticket opens no socket as the victim");

    // Pairing again with its own credential keeps an extension's id, and revokes that credential.
    const renewed = await pairExtension(mimo, victim.token);
    assert.equal(renewed.clientId, victim.clientId);
    assert.equal(await victim.serverCloseCode(), 4401, "the old credential's socket is closed");
    assert.equal((await post(mimo, "/api/ws-ticket", undefined, victim.token)).status, 401);
    assert.equal((await post(mimo, "/api/ws-ticket", undefined, renewed.token)).status, 200);
  });

  it("opens only the extension's own routes with an extension's credential", async () => {
    const ext = await ExtensionClient.connect(mimo, "scoped");
    for (const route of ["/api/task/id", "/api/extension/extension-list"]) {
      const res = await api(mimo, route, ext.token);
      assert.equal(res.status, 403, route);
      assert.equal(((await res.json()) as ErrorBody).code, "PERMISSION_DENIED");
    }
    assert.equal((await post(mimo, "/api/extension/pairing-code", undefined, ext.token)).status, 403);
    // Its ticket opens its own socket only: not the web app's, not another extension's.
    const taskId = await newTask(mimo);
    const web = await upgrade(`${ws()}/ws/web?taskId=${taskId}&ticket=${await wsTicket(mimo, ext.token)}`);
    assert.ok(web !== "open" && web.status === 403, JSON.stringify(web));
    const other = await upgrade(`${ws()}/ws/extension?clientId=someone-else&ticket=${await wsTicket(mimo, ext.token)}`);
    assert.ok(other !== "open" && other.status === 403, JSON.stringify(other));
    // The deployment's ticket does not open an extension's socket.
    const deployment = await upgrade(`${ws()}/ws/extension?clientId=scoped&ticket=${await wsTicket(mimo)}`);
    assert.ok(deployment !== "open" && deployment.status === 403);
    // Artifacts only of the tasks bound to it.
    const presign = await post(mimo, "/api/artifacts/presign", { taskId, kind: "screenshot", contentType: "image/png", contentLength: 10 }, ext.token);
    assert.equal(presign.status, 403, await presign.clone().text());
    assert.match(((await presign.json()) as ErrorBody).message, /not bound to this extension/);
    await ext.close();
  });

  it("lets an extension's side panel start a task in its own browser and watch it, never widen it", async () => {
    const ext = await ExtensionClient.connect(mimo, "panel");
    const other = await ExtensionClient.connect(mimo, "other-panel");
    // Only an extension's credential starts one, with a tab.
    assert.equal((await post(mimo, "/api/extension/task", { tabId: 7 })).status, 404, "the deployment token has no such route");
    const malformed = await post(mimo, "/api/extension/task", { tab: 7 }, ext.token);
    assert.equal(((await malformed.json()) as ErrorBody).code, "SCHEMA_VALIDATION_FAILED");
    const started = await post(mimo, "/api/extension/task", { tabId: 7 }, ext.token);
    assert.equal(started.status, 200, await started.clone().text());
    const { taskId } = (await started.json()) as { taskId: string };
    const summary = (await (await api(mimo, `/api/task/${taskId}`)).json()) as { selectedClientId?: string };
    assert.equal(summary.selectedClientId, ext.clientId, "bound to the browser whose panel started it");

    // Another browser's panel cannot open it; its own can, beside the web app.
    const foreign = await upgrade(`${ws()}/ws/web?taskId=${taskId}&ticket=${await wsTicket(mimo, other.token)}`);
    assert.ok(foreign !== "open" && foreign.status === 403, JSON.stringify(foreign));
    const panel = await WebClient.connect(mimo, taskId, undefined, ext.token);
    const web = await WebClient.connect(mimo, taskId);
    await panel.waitFor((e) => e.type === "ready", "the panel's replay");

    // The task's settings are the web app's: each refused, none changed.
    const widen: FrontendMessage[] = [
      { type: "set_bridge", allow: true, confirm: false },
      { type: "set_domains", allowed: ["attacker.example"], blocked: [] },
      { type: "set_step_mode", stepByStep: false },
      { type: "select_client", clientId: other.clientId },
    ];
    for (const message of widen) {
      const from = panel.received.length;
      panel.send(message);
      const refused = await panel.waitFor((e) => e.type === "error", `${message.type} refused`, 10_000, from);
      assert.equal(refused.type === "error" && refused.error.code, "PERMISSION_DENIED", message.type);
    }
    // The conversation is the panel's: its message reaches the task and the web app.
    panel.send({ type: "user_message", content: "What is on this page?", clientMessageId: "panel-1" });
    await web.waitFor((e) => e.type === "message" && e.message.clientMessageId === "panel-1", "the web app sees the panel's message");
    const settings = ["bridgeMode", "taskDomains", "stepMode"];
    assert.deepEqual(web.history().filter((e) => settings.includes(e.type)), [], "no setting changed");
    assert.equal(((await (await api(mimo, `/api/task/${taskId}`)).json()) as { selectedClientId?: string }).selectedClientId, ext.clientId);

    // Moved to another browser by the web app, the task is no longer the panel's.
    web.send({ type: "select_client", clientId: other.clientId });
    assert.equal(await panel.serverCloseCode(10_000), 4403);
    const after = await upgrade(`${ws()}/ws/web?taskId=${taskId}&ticket=${await wsTicket(mimo, ext.token)}`);
    assert.ok(after !== "open" && after.status === 403);

    // Revoking a browser closes its panel's sockets at once.
    const watching = await WebClient.connect(mimo, taskId, undefined, other.token);
    await watching.waitFor((e) => e.type === "ready", "the other panel's replay");
    const revoked = await fetch(`${mimo.url}/api/extension/${other.clientId}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } });
    assert.equal(revoked.status, 200);
    assert.equal(await watching.serverCloseCode(), 4401);
    await Promise.all([web.close(), ext.close(), other.close()]);
  });

  it("opens each socket with a single-use ticket, and refuses a token in the URL", async () => {
    const taskId = await newTask(mimo);
    const ticket = await wsTicket(mimo);
    assert.match(ticket, /^mimo_tkt_/);
    assert.equal(await upgrade(`${ws()}/ws/web?taskId=${taskId}&ticket=${ticket}`), "open");
    const reused = await upgrade(`${ws()}/ws/web?taskId=${taskId}&ticket=${ticket}`);
    assert.ok(reused !== "open" && reused.status === 401);
    assert.match((JSON.parse(reused.body) as ErrorBody).message, /wrong, expired or already used/);

    // The old way, with the right token: refused, saying what to do instead.
    const old = await upgrade(`${ws()}/ws/web?taskId=${taskId}&token=${mimo.token}`);
    assert.ok(old !== "open" && old.status === 401);
    assert.match((JSON.parse(old.body) as ErrorBody).message, /not accepted in a URL.*ticket/);
    const ext = await ExtensionClient.connect(mimo, "url-token");
    const oldExt = await upgrade(`${ws()}/ws/extension?clientId=${ext.clientId}&token=${ext.token}`);
    assert.ok(oldExt !== "open" && oldExt.status === 401);
    await ext.close();
  });

  it("lets an extension store artifacts of its bound task, but never add the person's attachments", async () => {
    const ext = await ExtensionClient.connect(mimo, "attacher");
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    await web.waitFor((e) => e.type === "taskStatus" && e.selectedClientId === ext.clientId, "bound");
    const shot = await post(mimo, "/api/artifacts/presign", { taskId, kind: "screenshot", contentType: "image/png", contentLength: 10 }, ext.token);
    assert.equal(shot.status, 200, await shot.clone().text());
    const file = await post(mimo, "/api/artifacts/presign", { taskId, kind: "attachment", contentType: "application/pdf", contentLength: 10, name: "a.pdf" }, ext.token);
    assert.equal(file.status, 403);
    const body = (await file.json()) as ErrorBody;
    assert.equal(body.code, "PERMISSION_DENIED");
    assert.match(body.message, /the person's files/);
    web.close();
    await ext.close();
  });

  it("revokes an extension: its connected socket is closed at once and its credential refused", async () => {
    const ext = await ExtensionClient.connect(mimo, "revoked-one");
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    await web.waitFor((e) => e.type === "taskStatus" && e.selectedClientId === ext.clientId, "bound");
    const res = await fetch(`${mimo.url}/api/extension/${ext.clientId}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(await ext.serverCloseCode(), 4401, "closed at once");
    const ticket = await post(mimo, "/api/ws-ticket", undefined, ext.token);
    assert.equal(ticket.status, 401);
    assert.match(((await ticket.json()) as ErrorBody).message, /unknown or revoked/);
    const entry = await listed(ext.clientId);
    assert.equal(entry?.paired, false);
    assert.equal(entry?.online, false);
    const unknown = await fetch(`${mimo.url}/api/extension/never-paired`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } });
    assert.equal(unknown.status, 404);
    // Paired again with a new code, naming its revoked credential: its id back, a new credential; the old one stays dead.
    const back = await ExtensionClient.connect(mimo, "revoked-one", undefined, await pairExtension(mimo, ext.token));
    assert.equal(back.clientId, ext.clientId);
    assert.notEqual(back.token, ext.token);
    assert.equal((await post(mimo, "/api/ws-ticket", undefined, ext.token)).status, 401);
    await Promise.all([back.close(), web.close()]);
  });

  it("serves the web app with a strict Content-Security-Policy, no inline script, and no wildcard CORS", async () => {
    const page = await fetch(`${mimo.url}/`);
    const csp = page.headers.get("content-security-policy") ?? "";
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(page.headers.get("x-content-type-options"), "nosniff");
    const html = await page.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, "every script is a file");
    assert.doesNotMatch(html, /\son[a-z]+=/i, "no inline handlers");
    // The extension's own origin may call its few fetch routes (it has no host permission for
    // the server); nothing else, and no other origin.
    const extensionOrigin = "chrome-extension://abcdefghijklmnopabcdefghijklmnop";
    const preflight = await fetch(`${mimo.url}/api/ws-ticket`, { method: "OPTIONS", headers: { origin: extensionOrigin, "access-control-request-method": "POST", "access-control-request-headers": "authorization" } });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get("access-control-allow-origin"), extensionOrigin);
    assert.match(preflight.headers.get("access-control-allow-headers") ?? "", /authorization/);
    // Its uploads to signed artifact URLs too (a PUT with If-None-Match), allowed on no site.
    const upload = await fetch(`${mimo.url}/artifacts/anything`, { method: "OPTIONS", headers: { origin: extensionOrigin, "access-control-request-method": "PUT", "access-control-request-headers": "content-type, if-none-match" } });
    assert.equal(upload.status, 204);
    assert.equal(upload.headers.get("access-control-allow-origin"), extensionOrigin);
    assert.match(upload.headers.get("access-control-allow-methods") ?? "", /PUT/);
    assert.match(upload.headers.get("access-control-allow-headers") ?? "", /if-none-match/);
    const refused = await fetch(`${mimo.url}/api/extension/pair`, { method: "POST", headers: { origin: extensionOrigin, "content-type": "application/json" }, body: JSON.stringify({ code: "ABCD-EFGH", clientId: "cors" }) });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get("access-control-allow-origin"), extensionOrigin, "the extension can read why");
    for (const res of [
      await fetch(`${mimo.url}/api/extension/extension-list`, { headers: { origin: extensionOrigin, authorization: `Bearer ${mimo.token}` } }),
      await fetch(`${mimo.url}/api/ws-ticket`, { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "POST" } }),
      await api(mimo, "/api/extension/extension-list"),
      await fetch(`${mimo.url}/api/task/id`, { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "GET" } }),
      await fetch(`${mimo.url}/artifacts/anything`, { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "PUT" } }),
      page,
    ]) {
      assert.equal(res.headers.get("access-control-allow-origin"), null);
    }
  });
});

/** The extension list asked for from `address` (as the edge names a client) with `token`. */
const from = (address: string, token: string | null) =>
  fetch(`${mimo.url}/api/extension/extension-list`, { headers: { "cf-connecting-ip": address, ...(token === null ? {} : { authorization: `Bearer ${token}` }) } });

/** A pairing request from `address`. */
const pairFrom = (address: string, code: string) =>
  fetch(`${mimo.url}/api/extension/pair`, { method: "POST", headers: { "cf-connecting-ip": address, "content-type": "application/json" }, body: JSON.stringify({ code }) });

describe("failed authentication, limited per client", () => {
  ownRuntime({ bindings: { MIMO_AUTH_MAX_FAILURES: "3", MIMO_AUTH_FAILURE_WINDOW_MS: "3000" } }, (m) => (mimo = m));

  it("refuses a client over the limit, even with the right token, until its window ends; others are not held", async () => {
    const attacker = "203.0.113.9";
    for (let i = 0; i < 3; i++) assert.equal((await from(attacker, `guess-${i}`)).status, 401);
    const limited = await from(attacker, "guess-3");
    assert.equal(limited.status, 429);
    const body = (await limited.json()) as ErrorBody;
    assert.equal(body.code, "RATE_LIMITED");
    assert.equal(body.retryable, true);
    assert.ok(Number(limited.headers.get("retry-after")) >= 1);
    assert.equal((await from(attacker, mimo.token)).status, 429, "a right guess is not even looked at");
    // Guessing pairing codes counts the same.
    assert.equal((await pairFrom(attacker, "ABCD-EFGH")).status, 429);
    assert.equal((await from("198.51.100.4", mimo.token)).status, 200, "another client is not held");
    await sleep(3_100);
    assert.equal((await from(attacker, mimo.token)).status, 200, "the window ended");
  });

  it("counts an IPv6 client by its /64: fresh addresses of the same network get no fresh guesses", async () => {
    for (let i = 1; i <= 3; i++) assert.equal((await from(`2001:db8:aa:bb::${i}`, "wrong-token")).status, 401);
    assert.equal((await from("2001:db8:aa:bb:ffff::9", "wrong-token")).status, 429);
    assert.equal((await from("2001:db8:aa:bb::1234", mimo.token)).status, 429, "the whole /64 is held");
    assert.equal((await from("2001:db8:aa:cc::1", mimo.token)).status, 200, "another network is not");
  });

  it("counts wrong pairing codes as failures", async () => {
    const guesser = "203.0.113.77";
    const guess = () => pairFrom(guesser, "ABCD-EFGH");
    for (let i = 0; i < 3; i++) assert.equal((await guess()).status, 401);
    assert.equal((await guess()).status, 429);
    // A real code from this client is refused too while it is limited.
    const { code } = (await (await post(mimo, "/api/extension/pairing-code")).json()) as PairingCode;
    const real = await pairFrom(guesser, code);
    assert.equal(real.status, 429);
    assert.ok(await pairExtension(mimo), "another client pairs");
  });
});

describe("a rotated deployment token", () => {
  ownRuntime({}, (m) => (mimo = m));

  it("voids the web app's sockets and the tickets bought with the old token, and opens with the new one", async () => {
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    const old = mimo.token;
    const unused = await wsTicket(mimo);
    await mimo.rotateToken();
    assert.notEqual(await web.serverCloseCode(), undefined, "the socket opened under the old token is closed");
    assert.equal((await post(mimo, "/api/ws-ticket", undefined, old)).status, 401, "the old token buys nothing");
    const refused = await upgrade(`${ws()}/ws/web?taskId=${taskId}&ticket=${unused}`);
    assert.ok(refused !== "open" && refused.status === 401, "a ticket bought with the old token opens nothing");
    assert.equal(await upgrade(`${ws()}/ws/web?taskId=${taskId}&ticket=${await wsTicket(mimo)}`), "open", "the new token's does");
  });
});

describe("the failure limit, kept for every isolate", () => {
  ownRuntime({ bindings: { MIMO_AUTH_MAX_FAILURES: "2", MIMO_AUTH_FAILURE_WINDOW_MS: "600000" } }, (m) => (mimo = m));

  it("refuses a right token and a right pairing code from a client blocked before the runtime restarted", async () => {
    const attacker = "203.0.113.50";
    for (let i = 0; i < 2; i++) assert.equal((await from(attacker, `guess-${i}`)).status, 401);
    assert.equal((await from(attacker, "guess-2")).status, 429);
    // A new runtime has none of the old isolate's memory: only the registry knows the count,
    // as at an isolate on another machine.
    await mimo.restart();
    const right = await from(attacker, mimo.token);
    assert.equal(right.status, 429, "a right guess at another isolate is refused");
    assert.equal(((await right.json()) as ErrorBody).code, "RATE_LIMITED");
    await mimo.restart();
    const { code } = (await (await post(mimo, "/api/extension/pairing-code")).json()) as PairingCode;
    assert.equal((await pairFrom(attacker, code)).status, 429, "a right pairing code too");
    assert.equal((await pairFrom("198.51.100.8", code)).status, 200, "and the refused code was not used up");
    assert.equal((await from("198.51.100.8", mimo.token)).status, 200, "another client is not held");
  });
});

describe("request bodies, capped as they stream", () => {
  ownRuntime({}, (m) => (mimo = m));

  /**
   * POSTs a chunked body (no length) of `prefix` and `bytes` more, and then neither sends more nor
   * ends it: only a server that stops reading at its limit answers. (What it answers is read
   * once all that was sent is read, so the runtime's close loses nothing on the way.)
   */
  function unending(route: string, prefix: string, bytes: number, token: string | null = null): Promise<{ status: number; code: string }> {
    return new Promise((resolve, reject) => {
      const req = request(`${mimo.url}${route}`, { method: "POST", headers: { "content-type": "application/json", ...(token === null ? {} : { authorization: `Bearer ${token}` }) } });
      req.on("response", (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, code: (JSON.parse(body) as ErrorBody).code });
          req.destroy();
        });
      });
      req.on("error", reject);
      req.write(prefix);
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      for (let sent = 0; sent < bytes; sent += chunk.length) req.write(chunk);
    });
  }
  /** POSTs `body` in chunks without a length, ended. */
  const chunked = (route: string, body: string, token: string | null = null) =>
    fetch(`${mimo.url}${route}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(body));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);

  it("answers PAYLOAD_TOO_LARGE to a chunked body once it is over the route's limit, without waiting for its end; small chunked bodies still work", async () => {
    assert.deepEqual(await unending("/api/extension/pair", '{"code":"ABCD-EFGH","pad":"', 320 * 1024), { status: 413, code: "PAYLOAD_TOO_LARGE" });
    assert.deepEqual(await unending("/api/agent/start", '{"goal":"', 320 * 1024, mimo.token), { status: 413, code: "PAYLOAD_TOO_LARGE" }, "an authenticated route too");
    const { code } = (await (await post(mimo, "/api/extension/pairing-code")).json()) as PairingCode;
    const paired = await chunked("/api/extension/pair", JSON.stringify({ code }));
    assert.equal(paired.status, 200, await paired.clone().text());
  });

  it("lets a poll carry up to its own, larger limit and no more", async () => {
    const { clientId, token } = await pairExtension(mimo);
    const over = await unending(`/api/extension/poll?clientId=${clientId}`, '{"ack":0,"frames":["', 2 * 1024 * 1024 + 64 * 1024, token);
    assert.deepEqual(over, { status: 413, code: "PAYLOAD_TOO_LARGE" });
    const within = await chunked(`/api/extension/poll?clientId=${clientId}`, `{"ack":0,"frames":["${" ".repeat(1024 * 1024)}"]}`, token);
    assert.notEqual(within.status, 413, "a poll under 2 MiB is read (and refused by its content)");
  });
});
