// HTTP side of the app: the deployment token and the few JSON endpoints it guards.

import type { ConsentAnswer, ConsentRedirect, ConsentRequest, DownloadResponse, ErrorCode, ErrorObject, ExtensionList, ForkedTask, ForkRequest, McpTokenCreated, McpTokenInfo, McpTokenList, NewTask, PairingCode, PresignRequest, PresignResponse, PutSecret, SecretInfo, SetupInfo, Skill, SkillList, SkillSearch, TaskHere, TaskList, TaskSummary, WebhookCreate, WebhookDelivery, WebhookDeliveryList, WebhookInfo, WebhookList, WebhookSecret, WsTicket } from "../../protocol/ts/protocol.ts";

const TOKEN_KEY = "mimo.token";

export function storedToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string): void {
  localStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken(): void {
  localStorage.removeItem(TOKEN_KEY);
}

/** A failed request, carrying the server's error object (or one made up for network errors). */
export class ApiError extends Error {
  readonly code: ErrorCode | "NETWORK";
  readonly status: number;
  readonly retryable: boolean;

  constructor(code: ErrorCode | "NETWORK", message: string, status: number, retryable: boolean) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = status;
    this.retryable = retryable;
  }

  get unauthorized(): boolean {
    return this.code === "UNAUTHORIZED" || this.status === 401;
  }
}

function isErrorObject(v: unknown): v is ErrorObject {
  return typeof v === "object" && v !== null && typeof (v as ErrorObject).code === "string" && typeof (v as ErrorObject).message === "string";
}

/**
 * Where the API is: the page's own origin (the web app, `""`), or the server the extension is
 * paired with (its side panel, whose page is on the extension's origin).
 */
let server = "";

export function useServer(origin: string): void {
  server = origin.replace(/\/+$/, "");
}

/** A body to send: its content type and text. */
type Body = { type: string; text: string };

/** A successful response to an authenticated request; any failure as an `ApiError`. */
async function request(path: string, token: string, signal?: AbortSignal, method: "GET" | "POST" | "PUT" | "DELETE" = "GET", body?: Body): Promise<Response> {
  let response: Response;
  const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: "application/json" };
  if (body !== undefined) headers["content-type"] = body.type;
  try {
    response = await fetch(`${server}${path}`, { method, headers, body: body?.text, cache: "no-store", signal });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new ApiError("NETWORK", "Cannot reach the server. Check your connection.", 0, true);
  }
  if (response.ok) return response;
  const text = await response.text();
  let answer: unknown = null;
  try {
    answer = text ? JSON.parse(text) : null;
  } catch {
    answer = null;
  }
  if (isErrorObject(answer)) throw new ApiError(answer.code, answer.message, response.status, answer.retryable);
  const fallback = text.trim().slice(0, 200) || response.statusText || "request failed";
  throw new ApiError(response.status === 401 ? "UNAUTHORIZED" : "INTERNAL_ERROR", `${response.status}: ${fallback}`, response.status, response.status >= 500);
}

async function getJson<T>(path: string, token: string, signal?: AbortSignal, method: "GET" | "POST" | "PUT" | "DELETE" = "GET", body?: Body): Promise<T> {
  const text = await (await request(path, token, signal, method, body)).text();
  try {
    return (text ? JSON.parse(text) : null) as T;
  } catch {
    return null as T;
  }
}

export function listExtensions(token: string, signal?: AbortSignal): Promise<ExtensionList> {
  return getJson<ExtensionList>("/api/extension/extension-list", token, signal);
}

/** Checks a token by making a real, harmless request with it. */
export async function verifyToken(token: string): Promise<ExtensionList> {
  return listExtensions(token);
}

/**
 * The side panel's task, with the extension's credential (`POST /api/extension/task`): bound to
 * this browser, its first run on the tab `tabId` the person is looking at.
 */
export async function taskHere(credential: string, tabId: number): Promise<string> {
  const body = { type: "application/json", text: JSON.stringify({ tabId } satisfies TaskHere) };
  return (await getJson<NewTask>("/api/extension/task", credential, undefined, "POST", body)).taskId;
}

/** Creates a task on the server and returns its id. */
export async function createTask(token: string): Promise<string> {
  const body = await getJson<NewTask>("/api/task/id", token);
  return body.taskId;
}

/** Forks the task at one of its messages (`POST /api/task/{taskId}/fork`); returns the new task. */
export async function forkTask(token: string, taskId: string, messageId: string): Promise<ForkedTask> {
  const body = { type: "application/json", text: JSON.stringify({ messageId } satisfies ForkRequest) };
  return getJson<ForkedTask>(`/api/task/${encodeURIComponent(taskId)}/fork`, token, undefined, "POST", body);
}

/** A single-use ticket that opens one socket within a minute (`POST /api/ws-ticket`). */
export async function socketTicket(token: string): Promise<string> {
  return (await getJson<WsTicket>("/api/ws-ticket", token, undefined, "POST")).ticket;
}

/** What the first screen tells a new user about this deployment: its model, its demo task. */
export function getSetup(token: string): Promise<SetupInfo> {
  return getJson<SetupInfo>("/api/setup", token);
}

/** A one-time code that pairs a browser's extension (`POST /api/extension/pairing-code`). */
export function pairingCode(token: string): Promise<PairingCode> {
  return getJson<PairingCode>("/api/extension/pairing-code", token, undefined, "POST");
}

/** The MCP clients' tokens, without their secrets (`GET /api/mcp/tokens`). */
export async function listMcpTokens(token: string): Promise<McpTokenInfo[]> {
  return (await getJson<McpTokenList>("/api/mcp/tokens", token)).tokens;
}

/** A token for an MCP client named `name`, its secret shown this once (`POST /api/mcp/tokens`). */
export function createMcpToken(token: string, name: string): Promise<McpTokenCreated> {
  const body = { type: "application/json", text: JSON.stringify({ name }) };
  return getJson<McpTokenCreated>("/api/mcp/tokens", token, undefined, "POST", body);
}

/** Revokes an MCP client's token: its requests are refused from now on. */
export async function revokeMcpToken(token: string, id: string): Promise<void> {
  await getJson<unknown>(`/api/mcp/tokens/${encodeURIComponent(id)}`, token, undefined, "DELETE");
}

/** The deployment's webhooks, without their secrets (`GET /api/webhooks`). */
export async function listWebhooks(token: string): Promise<WebhookInfo[]> {
  return (await getJson<WebhookList>("/api/webhooks", token)).webhooks;
}

/** A webhook, its secret shown this once (`POST /api/webhooks`); rejects with the server's reason. */
export function createWebhook(token: string, create: WebhookCreate): Promise<WebhookSecret> {
  const body = { type: "application/json", text: JSON.stringify(create) };
  return getJson<WebhookSecret>("/api/webhooks", token, undefined, "POST", body);
}

/** Deletes a webhook and its delivery log. */
export async function deleteWebhook(token: string, id: string): Promise<void> {
  await getJson<unknown>(`/api/webhooks/${encodeURIComponent(id)}`, token, undefined, "DELETE");
}

/** A new secret for a webhook, shown this once; the old one signs too for a day. */
export function rotateWebhook(token: string, id: string): Promise<WebhookSecret> {
  return getJson<WebhookSecret>(`/api/webhooks/${encodeURIComponent(id)}/rotate`, token, undefined, "POST");
}

/** A webhook's delivery log, the newest first. */
export async function webhookDeliveries(token: string, id: string): Promise<WebhookDelivery[]> {
  return (await getJson<WebhookDeliveryList>(`/api/webhooks/deliveries?webhook=${encodeURIComponent(id)}`, token)).deliveries;
}

/** Sends a delivery again (same webhook-id: the receiver dedupes). */
export async function resendDelivery(token: string, id: number): Promise<void> {
  await getJson<unknown>(`/api/webhooks/deliveries/${id}/resend`, token, undefined, "POST");
}

/** Revokes an extension's credential: it is disconnected at once and must be paired again. */
export async function revokeExtension(token: string, clientId: string): Promise<void> {
  await getJson<unknown>(`/api/extension/${encodeURIComponent(clientId)}`, token, undefined, "DELETE");
}

/**
 * The task socket's URL on this origin. WebSockets cannot set headers, so it carries a
 * single-use `ticket` (never the token).
 */
export function taskSocketUrl(taskId: string, ticket: string, lastSeq: number): string {
  const base = new URL(server === "" ? location.href : server);
  const scheme = base.protocol === "https:" ? "wss:" : "ws:";
  const params = new URLSearchParams({ taskId, ticket });
  if (lastSeq > 0) params.set("lastSeq", String(lastSeq));
  return `${scheme}//${base.host}/ws/web?${params.toString()}`;
}

/** How often, and how far apart, a download URL is asked for again while its artifact is on its way. */
const ARTIFACT_TRIES = 6;
const ARTIFACT_RETRY_MS = 250;

/**
 * A fresh, expiring download URL of a stored artifact (a step's screenshot, say). One that may
 * come (the server says so: a step's captures are stored just after the step) is asked for
 * again, for a few seconds.
 */
export async function artifactUrl(token: string, artifactId: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await getJson<DownloadResponse>(`/api/artifacts/${encodeURIComponent(artifactId)}`, token)).downloadUrl;
    } catch (error) {
      if (!(error instanceof ApiError && error.retryable) || attempt >= ARTIFACT_TRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, ARTIFACT_RETRY_MS * attempt));
    }
  }
}

/**
 * Attaches a file to the task: an upload URL for an `attachment` artifact, then the bytes. The
 * task tells its web apps (`fileAttached`) once the upload is complete.
 */
export async function attachFile(token: string, taskId: string, file: File): Promise<void> {
  const request: PresignRequest = { taskId, kind: "attachment", contentType: file.type || "application/octet-stream", contentLength: file.size, name: file.name };
  let response: Response;
  try {
    response = await fetch(`${server}/api/artifacts/presign`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(request),
    });
  } catch {
    throw new ApiError("NETWORK", "Cannot reach the server. Check your connection.", 0, true);
  }
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) {
    if (isErrorObject(body)) throw new ApiError(body.code, `${file.name}: ${body.message}`, response.status, body.retryable);
    throw new ApiError("INTERNAL_ERROR", `${file.name}: ${response.status}`, response.status, response.status >= 500);
  }
  const grant = body as PresignResponse;
  // `If-None-Match: *`: R2's own URLs sign it (an upload stores only where nothing is yet).
  const put = await fetch(grant.uploadUrl, { method: "PUT", headers: { "content-type": request.contentType, "if-none-match": "*" }, body: file });
  if (!put.ok) throw new ApiError("INTERNAL_ERROR", `${file.name}: the upload failed (${put.status})`, put.status, true);
}

/** What an MCP client's OAuth authorization request (its query) asks of the person. */
export function consentRequest(token: string, query: string): Promise<ConsentRequest> {
  return getJson<ConsentRequest>(`/api/oauth/authorize?${query}`, token);
}

/** The person's answer to an authorization request: where their browser goes next. */
export function answerConsent(token: string, query: string, allow: boolean): Promise<ConsentRedirect> {
  const body = { type: "application/json", text: JSON.stringify({ allow } satisfies ConsentAnswer) };
  return getJson<ConsentRedirect>(`/api/oauth/authorize?${query}`, token, undefined, "POST", body);
}

/** The task's export (`GET /api/task/{taskId}/export`) as a file to save. */
export async function exportTask(token: string, taskId: string): Promise<Blob> {
  const body = await getJson<unknown>(`/api/task/${encodeURIComponent(taskId)}/export`, token);
  return new Blob([JSON.stringify(body, null, 2)], { type: "application/json" });
}

/** The task's evidence archive (`GET /api/task/{taskId}/export.zip`: audit log, run, screenshots) as a file to save. */
export async function exportZip(token: string, taskId: string): Promise<Blob> {
  return (await request(`/api/task/${encodeURIComponent(taskId)}/export.zip`, token)).blob();
}

/** The task's audit log (`GET /api/task/{taskId}/audit.jsonl`): one JSON line per step. */
export async function auditLog(token: string, taskId: string): Promise<string> {
  return (await request(`/api/task/${encodeURIComponent(taskId)}/audit.jsonl`, token)).text();
}

/**
 * A page of the deployment's sessions (`GET /api/tasks`), the most recently active first:
 * those whose title holds every word of `words`, after the page whose `nextBefore` is `before`.
 */
export function listTasks(token: string, words: string, before?: string): Promise<TaskList> {
  const params = new URLSearchParams();
  if (words) params.set("q", words);
  if (before !== undefined) params.set("before", before);
  const query = params.toString();
  return getJson<TaskList>(`/api/tasks${query ? `?${query}` : ""}`, token);
}

/** Where a task stands; a 404 `ApiError` when this server has no such task. */
export function getTask(token: string, taskId: string): Promise<TaskSummary> {
  return getJson<TaskSummary>(`/api/task/${encodeURIComponent(taskId)}`, token);
}

/** The task's secrets and the deployment's: names and domains, never values. */
export function listSecrets(token: string, taskId: string): Promise<SecretInfo[]> {
  return getJson<SecretInfo[]>(`/api/task/${encodeURIComponent(taskId)}/secrets`, token);
}

/** Stores one of the task's own secrets (`PUT /api/task/{id}/secrets/{name}`); its value is never shown again. */
export async function putSecret(token: string, taskId: string, name: string, value: string, domains: string[]): Promise<void> {
  const body: PutSecret = { value, domains };
  const path = `/api/task/${encodeURIComponent(taskId)}/secrets/${encodeURIComponent(name)}`;
  await getJson<unknown>(path, token, undefined, "PUT", { type: "application/json", text: JSON.stringify(body) });
}

export async function deleteSecret(token: string, taskId: string, name: string): Promise<void> {
  await getJson<unknown>(`/api/task/${encodeURIComponent(taskId)}/secrets/${encodeURIComponent(name)}`, token, undefined, "DELETE");
}

/** The deployment's skills, by name. */
export async function listSkills(token: string): Promise<Skill[]> {
  return (await getJson<SkillList>("/api/skills", token)).skills;
}

/** The skills matching any word of `words`, the best first. */
export async function searchSkills(token: string, words: string): Promise<SkillSearch> {
  return getJson<SkillSearch>(`/api/skills/search?q=${encodeURIComponent(words)}`, token);
}

/** Stores a SKILL.md as skill `name` (the name in its front matter), replacing one of that name. */
export function putSkill(token: string, name: string, text: string): Promise<Skill> {
  return getJson<Skill>(`/api/skills/${encodeURIComponent(name)}`, token, undefined, "PUT", { type: "text/markdown; charset=utf-8", text });
}

export async function deleteSkill(token: string, name: string): Promise<void> {
  await getJson<unknown>(`/api/skills/${encodeURIComponent(name)}`, token, undefined, "DELETE");
}
