// Uploads an artifact (screenshot, HTML, readability text) through the server's presigned URLs:
// `POST /api/artifacts/presign`, then `PUT` the body to the URL it returns (and, when that went
// straight to R2, `GET /api/artifacts/{id}` to confirm it); and downloads one (a file the
// person attached).
import type { ArtifactKind, DownloadResponse, PresignRequest, PresignResponse } from "../../protocol/ts/protocol.ts";
import { backoffDelay } from "./backoff.ts";
import { evidenceText, isTextual, policyOf } from "./evidence.ts";
import { toHex } from "./image.ts";
import { timedOut } from "./bounded.ts";
import { sleep } from "./loading.ts";
import { ActionError } from "./results.ts";
import type { ServerAccess } from "./storage.ts";

/** How long the server may take to answer a request about an artifact, and to take or give its bytes. */
const REQUEST_MS = 20_000;
const TRANSFER_MS = 30_000;

/** How often a request that never reached the server (the server restarting, a dropped connection) is tried again. */
const NETWORK_RETRIES = 3;

/**
 * `fetch`, tried again after a backoff (0.5 s, 1 s, 2 s) when it failed before any answer came
 * — a server restarting drops a request or two, and an observation that gave up on them would
 * end the run. A timeout, or any answer, is the caller's. `init` makes each try's request (its
 * own timeout).
 */
export async function fetchRetrying(url: string, init: () => RequestInit, retrying?: () => void): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    try {
      if (attempt > 0) retrying?.();
      return await fetch(url, init());
    } catch (error) {
      if (attempt >= NETWORK_RETRIES || timedOut(error) || !(error instanceof TypeError)) throw error;
      await sleep(backoffDelay(attempt, Math.random()));
    }
  }
}

async function failure(what: string, res: Response): Promise<ActionError> {
  const body = await res.text().catch(() => "");
  return new ActionError("PAGE_PREP_FAILED", `${what} failed: ${res.status} ${body.slice(0, 200)}`, true);
}

/**
 * `gzip`: the body goes (and is stored) gzip-compressed, as `application/gzip`, after the
 * evidence filter has read it as `contentType`. `reuse`: the same bytes as this task's last
 * upload of the kind (as filtered) are not uploaded again; that artifact is given again.
 */
export type UploadRequest = { taskId: string; kind: ArtifactKind; contentType: string; actionId?: string; gzip?: boolean; reuse?: boolean };

/**
 * How long an upload is given again for the same bytes: well within its download URL's life
 * (5 minutes), and what a run's steps on one page take.
 */
const REUSE_MS = 4 * 60_000;

type Started = { artifactId: string; downloadUrl: string; stored: Promise<string> };

/** The last `reuse` upload of each task and kind: its filtered bytes' digest, when, and what it gave. */
const lastUploads = new Map<string, Started & { digest: string; at: number }>();
const MAX_LAST_UPLOADS = 64;

async function digestOf(bytes: Uint8Array): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource)));
}

export type Uploaded = { artifactId: string; url: string };

/**
 * What an upload's caller waits for: the artifact `stored` (its bytes in R2), or only
 * `granted` (its id known; the bytes stored right after, a failure logged) — for a reader that
 * does not fetch it at once, whose work should not wait for the transfer.
 */
export type UploadWait = "stored" | "granted";

export async function uploadArtifact(server: ServerAccess, request: UploadRequest, body: Uint8Array, wait: UploadWait = "stored"): Promise<Uploaded> {
  const started = await startUpload(server, request, body);
  if (wait === "granted") {
    started.stored.catch((error: unknown) => console.warn(`mimo: the ${request.kind} ${started.artifactId} was not stored: ${error instanceof Error ? error.message : String(error)}`));
    return { artifactId: started.artifactId, url: started.downloadUrl };
  }
  return { artifactId: started.artifactId, url: await started.stored };
}

/**
 * Starts an upload: filtered and granted when it resolves (its artifact id known), its body on
 * its way; `stored` resolves with the download URL once it is stored. Whoever has other work to
 * do meanwhile does it before awaiting `stored`.
 */
export async function startUpload(server: ServerAccess, request: UploadRequest, body: Uint8Array): Promise<Started> {
  const base = server.serverUrl.replace(/\/+$/, "");
  const auth = { authorization: `Bearer ${server.token}` };
  // Evidence is filtered here, for every kind of text artifact: secrets, and personal data
  // when the task's policy says so (evidence.ts).
  if (isTextual(request.contentType)) {
    const text = new TextDecoder().decode(body);
    const clean = evidenceText(text, await policyOf(request.taskId));
    if (clean !== text) body = new TextEncoder().encode(clean);
  }
  // The same text as the step before (a scroll, a click that changed nothing said): the
  // artifact already stored holds it. Keyed by the task, never shared between tasks.
  const reuseKey = request.reuse === true ? `${request.taskId} ${request.kind} ${request.contentType}` : undefined;
  const digest = reuseKey !== undefined ? await digestOf(body) : "";
  const last = reuseKey !== undefined ? lastUploads.get(reuseKey) : undefined;
  if (last !== undefined && last.digest === digest && Date.now() - last.at < REUSE_MS) return { artifactId: last.artifactId, downloadUrl: last.downloadUrl, stored: last.stored };
  let contentType = request.contentType;
  if (request.gzip === true) {
    body = await gzip(body);
    contentType = "application/gzip";
  }
  const { taskId, kind, actionId } = request;
  const presign: PresignRequest = { taskId, kind, contentType, ...(actionId !== undefined ? { actionId } : {}), contentLength: body.byteLength };
  const refused = (error: unknown): ActionError => {
    if (error instanceof ActionError) return error;
    const why = timedOut(error) ? `the server did not answer within ${REQUEST_MS / 1000} s (${TRANSFER_MS / 1000} s for the upload)` : error instanceof Error ? error.message : String(error);
    return new ActionError("PAGE_PREP_FAILED", `cannot upload the ${request.kind}: ${why}`, true);
  };
  let grant: PresignResponse;
  try {
    const res = await fetchRetrying(`${base}/api/artifacts/presign`, () => ({
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify(presign),
      signal: AbortSignal.timeout(REQUEST_MS),
    }));
    if (res.status !== 200) throw await failure("asking for an upload URL", res);
    grant = (await res.json()) as PresignResponse;
  } catch (error) {
    throw refused(error);
  }
  const put = async (): Promise<string> => {
    // `If-None-Match: *`: R2's own URLs sign it (an upload stores only where nothing is yet);
    // the Worker's route is single-use by itself and ignores it.
    // Tried again when no answer came. An upload URL stores once: a try that reached the
    // server and stored is refused the next time (403 from the Worker, 412 from R2), and then
    // only the server knows whether it is stored.
    let again = false;
    let res = await fetchRetrying(grant.uploadUrl, () => ({ method: "PUT", headers: { "content-type": contentType, "if-none-match": "*" }, body: body as BodyInit, signal: AbortSignal.timeout(TRANSFER_MS) }), () => (again = true));
    // 201: the Worker stored it and told the task; the grant's download URL serves it.
    if (res.status === 201) return grant.downloadUrl;
    if (res.status !== 200 && !(again && (res.status === 403 || res.status === 412))) throw await failure("the upload", res);
    // 200: R2 took it straight (or an earlier try stored it), and only asking the server for it
    // confirms it to the task.
    res = await fetchRetrying(`${base}/api/artifacts/${grant.artifactId}`, () => ({ headers: auth, signal: AbortSignal.timeout(REQUEST_MS) }));
    if (res.status !== 200) throw await failure("asking for the download URL", res);
    return ((await res.json()) as DownloadResponse).downloadUrl;
  };
  const stored = put().catch((error: unknown) => Promise.reject(refused(error)));
  const started = { artifactId: grant.artifactId, downloadUrl: grant.downloadUrl, stored };
  if (reuseKey !== undefined) {
    const entry = { ...started, digest, at: Date.now() };
    lastUploads.delete(reuseKey);
    lastUploads.set(reuseKey, entry);
    if (lastUploads.size > MAX_LAST_UPLOADS) lastUploads.delete(lastUploads.keys().next().value!);
    // An upload that failed is never given again.
    stored.catch(() => lastUploads.get(reuseKey) === entry && lastUploads.delete(reuseKey));
  }
  // Awaited by the caller, later: not an unhandled rejection in the meantime.
  stored.catch(() => undefined);
  return started;
}

/** `bytes` gzip-compressed (the browser's own zlib). */
async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Blob([bytes as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
}

/** The bytes of a stored artifact of one of this extension's tasks, at most `maxBytes`. */
export async function downloadArtifact(server: ServerAccess, artifactId: string, maxBytes: number): Promise<Uint8Array> {
  try {
    return await download(server, artifactId, maxBytes);
  } catch (error) {
    if (!timedOut(error)) throw error;
    throw new ActionError("TIMEOUT", `the attached file ${artifactId} did not come within ${TRANSFER_MS / 1000} s`, true);
  }
}

async function download(server: ServerAccess, artifactId: string, maxBytes: number): Promise<Uint8Array> {
  const base = server.serverUrl.replace(/\/+$/, "");
  let res = await fetch(`${base}/api/artifacts/${encodeURIComponent(artifactId)}`, { headers: { authorization: `Bearer ${server.token}` }, signal: AbortSignal.timeout(REQUEST_MS) });
  if (res.status === 404) throw new ActionError("TARGET_NOT_FOUND", `the attached file ${artifactId} is not stored (deleted, or never uploaded)`, false);
  if (res.status !== 200) throw new ActionError("PERMISSION_DENIED", `the server refused the attached file: ${res.status} ${(await res.text().catch(() => "")).slice(0, 200)}`, false);
  const { downloadUrl } = (await res.json()) as DownloadResponse;
  res = await fetch(downloadUrl, { signal: AbortSignal.timeout(TRANSFER_MS) });
  if (res.status !== 200) throw new ActionError("TIMEOUT", `downloading the attached file failed: ${res.status}`, true);
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (bytes.byteLength > maxBytes) throw new ActionError("SCHEMA_VALIDATION_FAILED", `the attached file is ${bytes.byteLength} bytes, over ${maxBytes}`, false);
  return bytes;
}

