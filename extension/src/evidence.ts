// What leaves the extension for a task, filtered in one place: every artifact body (page text,
// HTML, element lists) passes `evidenceText` before it is uploaded; every action's outcome
// passes `forServer` before it is logged or sent; screenshots are taken with the fields holding
// secrets or personal data, and any text showing a secret's value, covered (`maskForCapture`).
// The task's `redaction` comes with task_start.
import type { PiiKind, RedactionPolicy } from "../../protocol/ts/protocol.ts";
import { allFrames, frameCall } from "./frames.ts";
import { DEFAULT_REDACTION, mapStrings, redactPii } from "./redact.ts";
import { MAX_RESULT_BYTES } from "./results.ts";
import { secretVault } from "./secret-values.ts";

/** Where a task's policy is read from (the task registry, set by the service worker). */
let policyLookup: (taskId: string) => Promise<RedactionPolicy | undefined> = async () => undefined;

export function setPolicyLookup(lookup: (taskId: string) => Promise<RedactionPolicy | undefined>): void {
  policyLookup = lookup;
}

export async function policyOf(taskId: string): Promise<RedactionPolicy> {
  return (await policyLookup(taskId).catch(() => undefined)) ?? DEFAULT_REDACTION;
}

/** Content types whose bodies are text the filters read. */
export function isTextual(contentType: string): boolean {
  return /^text\/|^application\/(json|xhtml\+xml|xml)/i.test(contentType);
}

/** A stored artifact's text: secrets always out, personal data when evidence is filtered. */
export function evidenceText(text: string, policy: RedactionPolicy): string {
  const clean = secretVault.redact(text);
  return policy.evidence ? redactPii(clean, policy.kinds) : clean;
}

/** Keys whose strings are addresses and ids, never page content: left as they are. */
const NOT_CONTENT = new Set(["artifactId", "url", "downloadUrl", "uploadUrl", "xpath", "src", "href"]);

/**
 * An outcome as it may go to the server: secrets replaced by their placeholders everywhere;
 * personal data filtered from page content (text, field values) in `result`, which the server
 * keeps, when the task filters its evidence (or the model's text) — the same filter as stored
 * artifacts — and in what the model reads when its setting says so. Where the two differ, the
 * model's view goes as `modelResult`, which the server never keeps.
 */
export function forServer<T extends { result?: unknown; modelResult?: unknown }>(outcome: T, policy: RedactionPolicy): T {
  const secrets = (s: string) => secretVault.redact(s);
  const out = mapStrings(outcome, secrets);
  if (out.result === undefined) return out;
  const filtered = (kinds: readonly PiiKind[]) => (kinds.length === 0 ? out.result : mapStrings(out.result, (s) => redactPii(s, kinds), NOT_CONTENT));
  const modelKinds: readonly PiiKind[] = policy.model ? policy.kinds : [];
  const keptKinds: readonly PiiKind[] = policy.evidence || policy.model ? policy.kinds : [];
  const model = filtered(modelKinds);
  const kept = filtered(keptKinds);
  const keptJson = JSON.stringify(kept);
  const modelJson = JSON.stringify(model);
  if (keptJson === modelJson) return { ...out, result: kept };
  // Both views of a result near the frame's limit would not fit in one: the model then reads
  // the filtered one too (the page itself is always there to read again).
  if (new TextEncoder().encode(keptJson + modelJson).byteLength > MAX_RESULT_BYTES) return { ...out, result: kept };
  return { ...out, result: kept, modelResult: model };
}

/**
 * Covers, in every frame of the tab for a capture, the fields that hold secrets (and, when
 * evidence is filtered, personal data) and whatever shows a secret's value learned: the frame's
 * text is searched here, where the values are, so that they are never sent to a frame (which
 * may be of another site than the one the secret was typed on). The function returned uncovers
 * them.
 */
export async function maskForCapture(tabId: number, taskId: string): Promise<() => Promise<void>> {
  const policy = await policyOf(taskId);
  const kinds = policy.evidence ? policy.kinds : [];
  const frames = await allFrames(tabId).catch(() => []);
  const ids = frames.length > 0 ? frames.map((f) => f.frameId) : [0];
  await secretVault.load();
  const secretsIn = async (frameId: number): Promise<Array<[number, number]>> => {
    if (secretVault.empty) return [];
    const text = await frameCall<string>(tabId, frameId, { op: "pageText" });
    return secretVault.find(text).map((f) => [f.start, f.end]);
  };
  const mask = async (frameId: number) => frameCall<number>(tabId, frameId, { op: "mask", kinds, secrets: await secretsIn(frameId).catch(() => []) });
  await Promise.all(ids.map((frameId) => mask(frameId).catch(() => 0)));
  return async () => {
    await Promise.all(ids.map((frameId) => frameCall(tabId, frameId, { op: "unmask" }).catch(() => undefined)));
  };
}
