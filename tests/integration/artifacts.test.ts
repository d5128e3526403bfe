// Artifacts in R2 behind signed URLs, against the built worker in Miniflare with its real R2
// emulation: round trips (20 MiB included), Range and If-None-Match, every refusal, concurrent
// uploads, interrupted uploads, task deletion and retention.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import net from "node:net";
import { describe, it } from "node:test";
import { DOM_INDEX_MAX_BYTES } from "../../protocol/ts/protocol.ts";
import type { DownloadResponse, FrontendEvent, PresignRequest, PresignResponse } from "../../protocol/ts/protocol.ts";
import { api, newTask, sleep, WebClient } from "../support/clients.ts";
import { ownRuntime } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";

let mimo: Mimo;

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

async function presign(body: Partial<PresignRequest>, token: string | null = mimo.token): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  return fetch(`${mimo.url}/api/artifacts/presign`, { method: "POST", headers, body: JSON.stringify(body) });
}

async function granted(body: PresignRequest): Promise<PresignResponse> {
  const res = await presign(body);
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as PresignResponse;
}

/** Uploads as the extension and the web app do (`If-None-Match: *`, which R2's own URLs sign), or without it. */
function upload(url: string, bytes: Uint8Array, contentType: string, condition = true): Promise<Response> {
  return fetch(url, { method: "PUT", headers: { "content-type": contentType, ...(condition ? { "if-none-match": "*" } : {}) }, body: Buffer.from(bytes) });
}

async function lookup(artifactId: string): Promise<Response> {
  return api(mimo, `/api/artifacts/${artifactId}`);
}

async function downloadUrl(artifactId: string): Promise<string> {
  const res = await lookup(artifactId);
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as DownloadResponse).downloadUrl;
}

async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { code: string }).code;
}

/** A refusal's code and whether asking again may succeed. */
async function refusal(res: Response): Promise<{ code: string; retryable: boolean }> {
  const { code, retryable } = (await res.json()) as { code: string; retryable: boolean };
  return { code, retryable };
}

/** Stores `bytes` as a new artifact of `taskId` and returns its id. */
async function store(taskId: string, bytes: Uint8Array, kind: PresignRequest["kind"] = "screenshot", contentType = "image/png") {
  const grant = await granted({ taskId, kind, contentType, contentLength: bytes.length });
  const res = await upload(grant.uploadUrl, bytes, contentType);
  assert.equal(res.status, 201, await res.clone().text());
  return { grant, stored: (await res.json()) as { size: number; sha256: string } };
}

async function r2Keys(prefix: string): Promise<string[]> {
  // Miniflare's own typing of the bucket does not resolve here; its `list` is R2's.
  type Listing = { objects: Array<{ key: string }> };
  const bucket = (await mimo.mf.getR2Bucket("ARTIFACTS")) as unknown as { list(o: { prefix: string }): Promise<Listing> };
  const listed = await bucket.list({ prefix });
  return listed.objects.map((o) => o.key);
}

describe("artifact round trips", () => {
  ownRuntime({}, (m) => (mimo = m));

  it("stores what is uploaded and serves it back byte for byte, with its type, length and etag", async () => {
    const taskId = await newTask(mimo);
    const png = randomBytes(4096);
    const grant = await granted({ taskId, kind: "screenshot", contentType: "image/png", contentLength: png.length });
    // The grant's download URL serves nothing until the upload is stored, then the upload;
    // asked for meanwhile, the server says it may come (a step's captures are stored after it).
    assert.equal((await fetch(grant.downloadUrl)).status, 404);
    const early = await lookup(grant.artifactId);
    assert.equal(early.status, 404);
    assert.deepEqual(await refusal(early), { code: "NOT_FOUND", retryable: true });
    const put = await upload(grant.uploadUrl, png, "image/png");
    assert.equal(put.status, 201, await put.clone().text());
    const stored = (await put.json()) as { size: number; sha256: string };
    const served = await fetch(grant.downloadUrl);
    assert.equal(served.headers.get("content-type"), "image/png");
    assert.deepEqual(new Uint8Array(await served.arrayBuffer()), new Uint8Array(png));
    assert.match(grant.artifactId, new RegExp(`^${taskId}\\.[0-9a-f]{32}$`));
    assert.ok(grant.expiresAt > Date.now());
    assert.equal(stored.size, png.length);
    assert.equal(stored.sha256, sha256(png));
    const res = await fetch(await downloadUrl(grant.artifactId));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.equal(res.headers.get("content-length"), String(png.length));
    assert.ok(res.headers.get("etag"));
    assert.deepEqual(new Uint8Array(await res.arrayBuffer()), new Uint8Array(png));
  });

  it("round-trips a 20 MiB screenshot", async () => {
    const taskId = await newTask(mimo);
    const big = randomBytes(20 * 1024 * 1024);
    const { grant, stored } = await store(taskId, big);
    assert.equal(stored.sha256, sha256(big));
    const body = new Uint8Array(await (await fetch(await downloadUrl(grant.artifactId))).arrayBuffer());
    assert.equal(body.length, big.length);
    assert.equal(sha256(body), sha256(big));
  });

  it("honours Range and If-None-Match", async () => {
    const taskId = await newTask(mimo);
    const text = new TextEncoder().encode("# Title\n\n" + "0123456789".repeat(100));
    const { grant } = await store(taskId, text, "readability", "text/markdown");
    const url = await downloadUrl(grant.artifactId);
    const part = await fetch(url, { headers: { range: "bytes=9-18" } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get("content-range"), `bytes 9-18/${text.length}`);
    assert.equal(part.headers.get("content-length"), "10");
    assert.equal(await part.text(), "0123456789");
    const tail = await fetch(url, { headers: { range: "bytes=-4" } });
    assert.equal(await tail.text(), "6789");
    const beyond = await fetch(url, { headers: { range: `bytes=${text.length + 10}-` } });
    assert.equal(beyond.status, 416);
    const etag = (await fetch(url)).headers.get("etag")!;
    const cached = await fetch(url, { headers: { "if-none-match": etag } });
    assert.equal(cached.status, 304);
    assert.equal((await fetch(url, { headers: { "if-none-match": '"other"' } })).status, 200);
  });

  it("takes two concurrent uploads to one task", async () => {
    const taskId = await newTask(mimo);
    const a = randomBytes(300_000);
    const b = randomBytes(500_000);
    const [first, second] = await Promise.all([store(taskId, a), store(taskId, b, "html", "text/html; charset=utf-8")]);
    assert.notEqual(first.grant.artifactId, second.grant.artifactId);
    const got = await Promise.all(
      [first, second].map(async (s) => new Uint8Array(await (await fetch(await downloadUrl(s.grant.artifactId))).arrayBuffer())),
    );
    assert.equal(sha256(got[0]!), sha256(a));
    assert.equal(sha256(got[1]!), sha256(b));
  });
});

describe("attached files", () => {
  ownRuntime({}, (m) => (mimo = m));

  it("takes a named document from the person, tells the task's web apps, and refuses what is not one", async () => {
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    const pdf = new TextEncoder().encode("%PDF-1.4 signed contract");
    const grant = await granted({ taskId, kind: "attachment", contentType: "application/pdf", contentLength: pdf.length, name: "Signed contract.pdf" });
    assert.equal((await upload(grant.uploadUrl, pdf, "application/pdf")).status, 201);
    const told = (await web.waitFor((e) => e.type === "fileAttached", "the attachment")) as Extract<FrontendEvent, { type: "fileAttached" }>;
    assert.deepEqual(told.attachment, { artifactId: grant.artifactId, name: "Signed contract.pdf", contentType: "application/pdf", size: pdf.length });
    // The same URL again is refused (an upload URL is used once): still one attachment.
    const again = await upload(grant.uploadUrl, pdf, "application/pdf");
    assert.deepEqual([again.status, await errorCode(again)], [403, "PERMISSION_DENIED"]);
    await sleep(300);
    assert.equal(web.received.filter((e) => e.type === "fileAttached").length, 1);

    // Replayed to a web app that connects later.
    const later = await WebClient.connect(mimo, taskId);
    await later.waitFor((e) => e.type === "fileAttached", "the attachment, replayed");

    const unnamed = await presign({ taskId, kind: "attachment", contentType: "application/pdf", contentLength: 10 });
    assert.deepEqual([unnamed.status, await errorCode(unnamed)], [400, "SCHEMA_VALIDATION_FAILED"]);
    const path = await presign({ taskId, kind: "attachment", contentType: "application/pdf", contentLength: 10, name: "../etc/passwd" });
    assert.equal(await errorCode(path), "SCHEMA_VALIDATION_FAILED");
    const page = await presign({ taskId, kind: "attachment", contentType: "text/html", contentLength: 10, name: "page.html" });
    assert.equal(page.status, 415);
    const big = await presign({ taskId, kind: "attachment", contentType: "application/pdf", contentLength: 10 * 1024 * 1024 + 1, name: "big.pdf" });
    assert.equal(big.status, 413);
    web.close();
    later.close();
  });
});

describe("artifact downloads", () => {
  ownRuntime({}, (m) => (mimo = m));

  it("show an image inline with its exact type; every other kind is an attachment; all sandboxed, never sniffed", async () => {
    const taskId = await newTask(mimo);
    const bytes = new TextEncoder().encode("<script>alert(document.domain)</script>");
    const cases: Array<[PresignRequest["kind"], string, string, string]> = [
      ["screenshot", "image/png", "image/png", "inline"],
      ["screenshot", "image/jpeg", "image/jpeg", "inline"],
      ["screenshot", "IMAGE/WEBP; q=1", "image/webp", "inline"],
      ["attachment", "image/png", "image/png", "inline"],
      ["html", "text/html; charset=utf-8", "text/html; charset=utf-8", "attachment; filename=\"ID.html\""],
      ["readability", "text/markdown", "text/markdown", "attachment; filename=\"ID.md\""],
      ["readability", "text/plain", "text/plain", "attachment; filename=\"ID.txt\""],
      ["dom_index", "application/json", "application/json", "attachment; filename=\"ID.json\""],
      ["dom_index", "application/gzip", "application/gzip", "attachment; filename=\"ID.json.gz\""],
      ["attachment", "application/pdf", "application/pdf", "attachment; filename=\"ID.pdf\""],
      ["attachment", "application/msword", "application/msword", "attachment; filename=\"ID\""],
    ];
    for (const [kind, stored, type, disposition] of cases) {
      const what = `${kind} as ${stored}`;
      const grant = await granted({ taskId, kind, contentType: stored, contentLength: bytes.length, ...(kind === "attachment" ? { name: "file" } : {}) });
      assert.equal((await upload(grant.uploadUrl, bytes, stored)).status, 201, what);
      const url = await downloadUrl(grant.artifactId);
      const expected = {
        "content-type": type,
        "content-disposition": disposition.replace("ID", grant.artifactId.replace(".", "-")),
        "content-security-policy": "sandbox; default-src 'none'",
        "x-content-type-options": "nosniff",
      };
      const headers = (res: Response) => Object.fromEntries(Object.keys(expected).map((k) => [k, res.headers.get(k)]));
      const full = await fetch(url);
      assert.equal(full.status, 200, what);
      assert.deepEqual(headers(full), expected, what);
      assert.deepEqual(new Uint8Array(await full.arrayBuffer()), bytes, what);
      // Every answer of the route carries them: a part, and "not modified".
      const part = await fetch(url, { headers: { range: "bytes=0-7" } });
      assert.equal(part.status, 206, what);
      assert.deepEqual(headers(part), expected, what);
      await part.arrayBuffer();
      const cached = await fetch(url, { headers: { "if-none-match": full.headers.get("etag")! } });
      assert.equal(cached.status, 304, what);
      assert.deepEqual(headers(cached), expected, what);
    }
  });
});

describe("artifact refusals", () => {
  ownRuntime({}, (m) => (mimo = m));

  it("uses an upload URL once: a second upload to it is refused and the stored artifact stays as it was", async () => {
    const taskId = await newTask(mimo);
    const evidence = randomBytes(2000);
    const { grant, stored } = await store(taskId, evidence, "html", "text/html");
    const key = (await r2Keys(`tasks/${taskId}/`))[0]!;
    const bucket = (await mimo.mf.getR2Bucket("ARTIFACTS")) as unknown as { head(key: string): Promise<{ etag: string; uploaded: Date } | null> };
    const before = await bucket.head(key);
    for (const replacement of [randomBytes(2000), randomBytes(10), evidence]) {
      const res = await upload(grant.uploadUrl, replacement, "text/html");
      assert.equal(res.status, 403, await res.clone().text());
      const body = (await res.json()) as { code: string; message: string };
      assert.equal(body.code, "PERMISSION_DENIED");
      assert.match(body.message, /used already/);
    }
    const after = await bucket.head(key);
    assert.deepEqual([after?.etag, after?.uploaded.getTime()], [before?.etag, before?.uploaded.getTime()], "the object was not written again");
    const served = new Uint8Array(await (await fetch(await downloadUrl(grant.artifactId))).arrayBuffer());
    assert.equal(sha256(served), stored.sha256);
    assert.equal(sha256(served), sha256(evidence));
  });

  it("stores one of two uploads racing to one URL, and refuses the other", async () => {
    const taskId = await newTask(mimo);
    for (let round = 0; round < 5; round++) {
      // Under the worker's drain limit (256 KiB): a loser refused before its body is read gets
      // its 403 on a connection that stays up; a larger body is left unread and its connection
      // closed after the answer (worker/src/artifacts.rs), which a client may see as a failed
      // fetch — that is the product's contract, not what this race is about.
      const [a, b] = [randomBytes(200_000), randomBytes(200_000)];
      const grant = await granted({ taskId, kind: "screenshot", contentType: "image/png", contentLength: a.length });
      const results = await Promise.all([a, b].map(async (bytes) => ({ bytes, res: await upload(grant.uploadUrl, bytes, "image/png") })));
      const statuses = results.map((r) => r.res.status).sort();
      assert.deepEqual(statuses, [201, 403], `round ${round}`);
      const winner = results.find((r) => r.res.status === 201)!;
      const loser = results.find((r) => r.res.status === 403)!;
      assert.equal(await errorCode(loser.res), "PERMISSION_DENIED");
      assert.equal(((await winner.res.json()) as { sha256: string }).sha256, sha256(winner.bytes));
      const served = new Uint8Array(await (await fetch(await downloadUrl(grant.artifactId))).arrayBuffer());
      assert.equal(sha256(served), sha256(winner.bytes), `round ${round}: the stored bytes are the accepted upload's`);
    }
  });

  it("refuses bad presign requests with 400, 401, 404, 413 and 415", async () => {
    const taskId = await newTask(mimo);
    const ok: PresignRequest = { taskId, kind: "screenshot", contentType: "image/png", contentLength: 10 };
    assert.equal((await presign(ok, null)).status, 401);
    let res = await presign({ ...ok, contentType: "application/pdf" });
    assert.equal(res.status, 415);
    assert.equal(await errorCode(res), "UNSUPPORTED_MEDIA_TYPE");
    res = await presign({ ...ok, contentLength: 20 * 1024 * 1024 + 1 });
    assert.equal(res.status, 413);
    assert.equal(await errorCode(res), "PAYLOAD_TOO_LARGE");
    res = await presign({ ...ok, kind: "readability", contentType: "text/markdown", contentLength: 2 * 1024 * 1024 + 1 });
    assert.equal(res.status, 413);
    assert.equal(await errorCode(res), "READABILITY_TOO_LARGE");
    // A whole DOM index: JSON, plain or gzip-compressed, only, up to its own limit (of what
    // is stored); no other kind takes a gzip file.
    const index: PresignRequest = { ...ok, kind: "dom_index", contentType: "application/json" };
    assert.equal((await presign(index)).status, 200);
    assert.equal((await presign({ ...index, contentType: "application/gzip" })).status, 200);
    assert.equal((await presign({ ...index, contentType: "text/html" })).status, 415);
    for (const kind of ["screenshot", "html", "readability", "attachment"] as const) {
      assert.equal((await presign({ ...ok, kind, contentType: "application/gzip", ...(kind === "attachment" ? { name: "a.gz" } : {}) })).status, 415, kind);
    }
    res = await presign({ ...index, contentLength: DOM_INDEX_MAX_BYTES + 1 });
    assert.equal(res.status, 413);
    assert.equal(await errorCode(res), "PAYLOAD_TOO_LARGE");
    res = await presign({ ...ok, taskId: "00000000-0000-4000-8000-000000000000" });
    assert.equal(res.status, 404);
    assert.equal(await errorCode(res), "NOT_FOUND");
    for (const bad of [{ ...ok, kind: "video" }, { ...ok, taskId: "nope" }, { kind: "screenshot" }]) {
      res = await presign(bad as Partial<PresignRequest>);
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.equal(await errorCode(res), "SCHEMA_VALIDATION_FAILED");
    }
  });

  it("refuses uploads that break the signed terms, and stores nothing", async () => {
    const taskId = await newTask(mimo);
    const bytes = randomBytes(1000);
    const grant = await granted({ taskId, kind: "screenshot", contentType: "image/png", contentLength: bytes.length });
    const url = new URL(grant.uploadUrl);
    const tampered = (name: string, value: string) => {
      const u = new URL(url);
      u.searchParams.set(name, value);
      return u.toString();
    };
    const cases: Array<[string, () => Promise<Response>, number, string]> = [
      ["tampered signature", () => upload(tampered("sig", "0".repeat(64)), bytes, "image/png"), 403, "PERMISSION_DENIED"],
      ["extended expiry", () => upload(tampered("expires", String(grant.expiresAt + 60_000)), bytes, "image/png"), 403, "PERMISSION_DENIED"],
      ["raised maximum", () => upload(tampered("max", "5000"), randomBytes(5000), "image/png"), 403, "PERMISSION_DENIED"],
      ["other content type", () => upload(url.toString(), bytes, "image/jpeg"), 415, "UNSUPPORTED_MEDIA_TYPE"],
      ["body over the signed length", () => upload(url.toString(), randomBytes(1001), "image/png"), 413, "PAYLOAD_TOO_LARGE"],
      ["wrong method", () => fetch(url, { method: "POST", headers: { "content-type": "image/png" }, body: bytes }), 405, "METHOD_NOT_ALLOWED"],
      [
        "no Content-Length",
        () =>
          fetch(url, {
            method: "PUT",
            headers: { "content-type": "image/png" },
            body: new ReadableStream({ start: (c) => (c.enqueue(bytes), c.close()) }),
            duplex: "half",
          } as RequestInit),
        411,
        "LENGTH_REQUIRED",
      ],
    ];
    for (const [what, send, status, code] of cases) {
      const res = await send();
      assert.equal(res.status, status, `${what}: ${await res.clone().text()}`);
      assert.equal(await errorCode(res), code, what);
      if (status === 405) assert.equal(res.headers.get("allow"), "PUT");
    }
    assert.equal((await lookup(grant.artifactId)).status, 404, "nothing was stored");
    assert.deepEqual(await r2Keys(`tasks/${taskId}/`), []);
    // The untouched URL still works.
    assert.equal((await upload(url.toString(), bytes, "image/png")).status, 201);
  });

  it("an interrupted upload leaves no object and no listed artifact", async () => {
    const taskId = await newTask(mimo);
    const grant = await granted({ taskId, kind: "html", contentType: "text/html", contentLength: 1_000_000 });
    const url = new URL(grant.uploadUrl);
    await new Promise<void>((resolve) => {
      const req = http.request(url, { method: "PUT", headers: { "content-type": "text/html", "content-length": 1_000_000 } });
      req.on("error", () => resolve());
      req.on("close", () => resolve());
      req.write(randomBytes(300_000), () => setTimeout(() => req.destroy(), 200));
    });
    await sleep(500);
    assert.equal((await lookup(grant.artifactId)).status, 404);
    assert.deepEqual(await r2Keys(`tasks/${taskId}/`), []);
  });

  it("answers an upload whose body ends early with UPLOAD_INCOMPLETE, and stores nothing", async () => {
    const taskId = await newTask(mimo);
    const grant = await granted({ taskId, kind: "html", contentType: "text/html", contentLength: 1_000 });
    const url = new URL(grant.uploadUrl);
    // A client that declares 1,000 bytes, sends 10 and ends its side of the connection.
    const socket = net.connect(Number(url.port), url.hostname);
    await once(socket, "connect");
    socket.write(`PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: text/html\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n`);
    socket.end(Buffer.alloc(10, 0x61));
    let answer = "";
    socket.on("data", (chunk: Buffer) => (answer += chunk.toString()));
    await once(socket, "close");
    assert.match(answer, /^HTTP\/1\.1 400/, answer);
    assert.match(answer, /"code":"UPLOAD_INCOMPLETE"/);
    assert.match(answer, /declared 1000 bytes/);
    assert.equal((await lookup(grant.artifactId)).status, 404);
    assert.deepEqual(await r2Keys(`tasks/${taskId}/`), []);
  });

  it("refuses tampered download URLs and unknown artifacts", async () => {
    const taskId = await newTask(mimo);
    const { grant } = await store(taskId, randomBytes(64));
    const url = new URL(await downloadUrl(grant.artifactId));
    url.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 1));
    const res = await fetch(url);
    assert.equal(res.status, 403);
    assert.equal(await errorCode(res), "PERMISSION_DENIED");
    assert.equal((await fetch(url, { method: "PUT", body: "x" })).status, 405);
    const unknown = `${taskId}.${"ab".repeat(16)}`;
    const never = await lookup(unknown);
    assert.equal(never.status, 404);
    assert.deepEqual(await refusal(never), { code: "NOT_FOUND", retryable: false }, "asked again, it will not come");
    assert.equal((await lookup("not-an-artifact")).status, 404);
    assert.equal((await api(mimo, `/api/artifacts/${grant.artifactId}`, null)).status, 401);
    assert.equal((await fetch(`${mimo.url}/artifacts/download/${unknown}?kind=screenshot&expires=1&sig=00`)).status, 403);
  });
});

describe("artifact expiry, deletion and retention", () => {
  ownRuntime(
    { bindings: { MIMO_ARTIFACT_UPLOAD_EXPIRY_SECS: "1", MIMO_ARTIFACT_RETENTION_DAYS: "0.00004" } },
    (m) => (mimo = m),
  );

  it("refuses an upload URL after it expires", async () => {
    const taskId = await newTask(mimo);
    const bytes = randomBytes(100);
    const grant = await granted({ taskId, kind: "screenshot", contentType: "image/png", contentLength: 100 });
    await sleep(Math.max(0, grant.expiresAt - Date.now()) + 50);
    const res = await upload(grant.uploadUrl, bytes, "image/png");
    assert.equal(res.status, 403);
    const body = (await res.json()) as { code: string; message: string };
    assert.equal(body.code, "PERMISSION_DENIED");
    assert.match(body.message, /expired/i);
  });

  it("deleting a task deletes its artifacts and closes its sockets", async () => {
    const taskId = await newTask(mimo);
    const web = await WebClient.connect(mimo, taskId);
    const grant = await granted({ taskId, kind: "screenshot", contentType: "image/png", contentLength: 10 });
    assert.equal((await upload(grant.uploadUrl, randomBytes(10), "image/png")).status, 201);
    assert.equal((await r2Keys(`tasks/${taskId}/`)).length, 1);
    const res = await fetch(`${mimo.url}/api/task/${taskId}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } });
    assert.equal(res.status, 200);
    assert.deepEqual(await r2Keys(`tasks/${taskId}/`), []);
    assert.equal((await api(mimo, `/api/task/${taskId}`)).status, 404);
    assert.equal((await lookup(grant.artifactId)).status, 404);
    assert.equal(await web.serverCloseCode(), 4404);
  });

  it("removes artifacts past their retention through the coordinator's alarm", async () => {
    const taskId = await newTask(mimo);
    const { grant } = await store(taskId, randomBytes(32));
    assert.equal((await lookup(grant.artifactId)).status, 200);
    // Retention here is 0.00004 days, about 3.5 s.
    let keys = await r2Keys(`tasks/${taskId}/`);
    for (let i = 0; i < 20 && keys.length > 0; i++) {
      await sleep(500);
      keys = await r2Keys(`tasks/${taskId}/`);
    }
    assert.deepEqual(keys, [], "the object is gone from R2");
    assert.equal((await lookup(grant.artifactId)).status, 404, "and no longer listed");
  });
});

describe("R2's own presigned URLs (SigV4), through Miniflare's local S3 API", () => {
  const credentials = { accessKeyId: "mimolocalkey", secretAccessKey: "local-secret-for-tests" };
  ownRuntime(
    {
      r2S3Credentials: credentials,
      bindings: {
        MIMO_R2_ACCOUNT_ID: "local",
        MIMO_R2_ACCESS_KEY_ID: credentials.accessKeyId,
        MIMO_R2_SECRET_ACCESS_KEY: credentials.secretAccessKey,
        MIMO_R2_S3_ENDPOINT: "/cdn-cgi/local/r2/s3",
      },
    },
    (m) => (mimo = m),
  );

  it("uploads straight to R2 and downloads through an R2 URL", async () => {
    const taskId = await newTask(mimo);
    const bytes = randomBytes(200_000);
    const grant = await granted({ taskId, kind: "screenshot", contentType: "image/webp", contentLength: bytes.length });
    const url = new URL(grant.uploadUrl);
    assert.equal(url.origin, mimo.url);
    assert.ok(url.pathname.startsWith(`/cdn-cgi/local/r2/s3/mimo-artifacts/tasks/${taskId}/screenshot/`), url.pathname);
    assert.equal(url.searchParams.get("X-Amz-Algorithm"), "AWS4-HMAC-SHA256");
    assert.match(url.searchParams.get("X-Amz-Credential") ?? "", /^mimolocalkey\/\d{8}\/auto\/s3\/aws4_request$/);
    // R2 enforces what was signed: another content type is refused, the right one stored.
    assert.equal((await upload(grant.uploadUrl, bytes, "image/png")).status, 403);
    assert.deepEqual(await r2Keys(`tasks/${taskId}/`), []);
    const res = await upload(grant.uploadUrl, bytes, "image/webp");
    assert.equal(res.status, 200, await res.clone().text());
    // The grant's R2 download URL serves it; asking the server confirms it and signs another.
    assert.equal(sha256(new Uint8Array(await (await fetch(grant.downloadUrl)).arrayBuffer())), sha256(bytes));
    const download = new URL(await downloadUrl(grant.artifactId));
    assert.ok(download.pathname.startsWith("/cdn-cgi/local/r2/s3/mimo-artifacts/"));
    // R2 answers with the type and disposition signed into the URL (an image inline).
    assert.equal(download.searchParams.get("response-content-type"), "image/webp");
    assert.equal(download.searchParams.get("response-content-disposition"), "inline");
    const got = new Uint8Array(await (await fetch(download)).arrayBuffer());
    assert.equal(sha256(got), sha256(bytes));
  });

  it("stores an upload once: the same URL can never overwrite the evidence, with or without the condition", async () => {
    const taskId = await newTask(mimo);
    const bytes = randomBytes(1_000);
    const grant = await granted({ taskId, kind: "screenshot", contentType: "image/png", contentLength: bytes.length });
    // Without the signed condition R2 refuses it: the URL only stores where nothing is yet.
    assert.equal((await upload(grant.uploadUrl, bytes, "image/png", false)).status, 403);
    assert.deepEqual(await r2Keys(`tasks/${taskId}/`), []);
    assert.equal((await upload(grant.uploadUrl, bytes, "image/png")).status, 200);
    const forged = randomBytes(1_000);
    assert.equal((await upload(grant.uploadUrl, forged, "image/png")).status, 412, "a second upload is refused");
    assert.equal((await upload(grant.uploadUrl, forged, "image/png", false)).status, 403);
    const got = new Uint8Array(await (await fetch(await downloadUrl(grant.artifactId))).arrayBuffer());
    assert.equal(sha256(got), sha256(bytes), "the first upload is what is kept");
  });

  it("serves an HTML snapshot from R2 as an attachment, never as a page", async () => {
    const taskId = await newTask(mimo);
    const bytes = new TextEncoder().encode("<p>snapshot</p>");
    const grant = await granted({ taskId, kind: "html", contentType: "text/html; charset=utf-8", contentLength: bytes.length });
    assert.equal((await upload(grant.uploadUrl, bytes, "text/html; charset=utf-8")).status, 200);
    const download = new URL(await downloadUrl(grant.artifactId));
    assert.match(download.searchParams.get("response-content-disposition") ?? "", /^attachment; filename="[^"]+\.html"$/);
  });
});
