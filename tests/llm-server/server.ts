// Scripted LLM server: stands in for OpenAI and Anthropic in tests and local dev.
//
// It speaks both providers' real streaming wire formats (OpenAI Chat Completions SSE and
// Anthropic Messages SSE) so the gateway code that parses its output is the same code that
// talks to the real providers. Each provider request consumes the next scripted turn; with
// nothing scripted it echoes the user, so local dev works without an API key. The agent's calls
// beside the chat — naming a task (its title prompt, no tools) and summarizing a long chat (its
// summary prompt, no tools) — take only turns scripted for them and are answered otherwise with
// the task's first message and with the person's messages, cut short; they are logged apart, so
// they never shift the turns or the requests a test counts.
//
// Runs directly under Node 22 type stripping: only erasable TypeScript syntax, no npm packages.

import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export type ScriptTurn = {
  /** Streamed as several deltas, roughly one word each. */
  text?: string;
  /** Explicit text deltas, used instead of splitting `text`. */
  chunks?: string[];
  /** An object is JSON-encoded; a string is sent as is (lets tests send invalid JSON). */
  toolCalls?: Array<{ id?: string; name: string; arguments: unknown }>;
  /**
   * Answer with this HTTP error instead of a stream, in the provider's error body (`type`, and
   * for OpenAI `code` and `param`, default to what the provider sends for the status), with a
   * `retry-after` header of `retryAfter` seconds (1 by default for a 429).
   */
  error?: { status: number; message?: string; type?: string; code?: string; param?: string; retryAfter?: number };
  /** Answer with the provider's own 400 for a prompt longer than the model's context window. */
  contextOverflow?: boolean;
  /** This turn answers a request to name the task (only those take it). */
  title?: boolean;
  /** This turn answers a request to summarize a long chat (only those take it). */
  summary?: boolean;
  /** Start the stream, send the text, then an error event instead of the end of the message. */
  midStreamError?: { message: string; type?: string };
  /** Wait this long before sending the response headers. */
  stallMs?: number;
  /** Send the headers and the stream up to its first text delta, then wait this long. */
  stallAfterFirstChunkMs?: number;
  /** Delay between chunks; defaults to 15 ms so streaming is visible in a browser. */
  chunkDelayMs?: number;
  /** Token counts to report; estimated from the text lengths when unset. */
  usage?: { input: number; output: number };
  /** Only use this turn for a request whose last user message contains this substring. */
  match?: string;
  /**
   * Plays a model that takes no images: a request that carries one is answered with the
   * provider's 400 for that, and the turn stays queued for the request sent again without it.
   */
  refuseImages?: boolean;
  /**
   * Decides the turn when a request takes it, from that request (in-process scripts only: a
   * function does not survive the control API's JSON). Lets a test play a model that reads
   * the page it is shown, e.g. to pick an element's index by its label.
   */
  respond?: (request: { userText: string; body: unknown }) => ScriptTurn;
};

export type RecordedRequest = {
  path: string;
  /** Node lower-cases header names. */
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
  /** The inline images of the request's messages, in either provider's format. */
  images: RecordedImage[];
  /** Epoch milliseconds when the request was received. */
  at: number;
  /** Epoch milliseconds when the whole response was written (a stream's last frame). */
  answeredAt?: number;
};

export type RecordedImage = {
  /** Index of the message in the request's `messages`. */
  message: number;
  mediaType: string;
  /** Decoded size. */
  bytes: number;
};

export type LlmServerOptions = {
  port?: number;
  host?: string;
  turns?: ScriptTurn[];
  /**
   * How to answer a request of the conversation (not a title or summary) when nothing is
   * scripted, before the echo: `make dev`'s demo task answers so (undefined: echo).
   */
  unscripted?: (request: { userText: string; body: unknown }) => ScriptTurn | undefined;
};

export type LlmServer = {
  url: string;
  port: number;
  /** Appends turns to the queue. */
  script(turns: ScriptTurn[]): void;
  /** Clears the queue and the request log. */
  reset(): void;
  requests(): RecordedRequest[];
  /** The requests to name a task, apart from the others. */
  titleRequests(): RecordedRequest[];
  /** The requests to summarize a long chat, apart from the others. */
  summaryRequests(): RecordedRequest[];
  /** How many requests are open: their answer not sent to its end, and their client still there. */
  open(): number;
  close(): Promise<void>;
};

type Provider = 'openai' | 'anthropic';

/** A turn resolved for one request: ids assigned, arguments serialized, usage known. */
type Reply = {
  model: string;
  chunks: string[];
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  usage: { input: number; output: number };
  midStreamError?: { message: string; type?: string };
};

// Loosely typed view of a request body: it comes from the gateway, not from this file.
type JsonObject = Record<string, unknown>;

const DEFAULT_CHUNK_DELAY_MS = 15;

export async function startLlmServer(opts: LlmServerOptions = {}): Promise<LlmServer> {
  const host = opts.host ?? '127.0.0.1';
  let queue: ScriptTurn[] = [...(opts.turns ?? [])];
  let log: RecordedRequest[] = [];
  let titleLog: RecordedRequest[] = [];
  let summaryLog: RecordedRequest[] = [];

  let open = 0;

  const server = createServer((req, res) => {
    // Aborts pending stalls and chunk delays when the client goes away or close() runs.
    const closed = new AbortController();
    open++;
    res.once('close', () => {
      open--;
      closed.abort();
    });
    handle(req, res, closed.signal).catch((err: unknown) => {
      if (closed.signal.aborted) return;
      if (res.headersSent) res.destroy();
      else sendJson(res, 500, { error: { message: String(err) } });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const raw = await readBody(req);

    if (url.pathname.startsWith('/__control/')) {
      handleControl(req.method, url, raw, res);
      return;
    }
    const provider: Provider | undefined =
      url.pathname === '/v1/chat/completions' ? 'openai' : url.pathname === '/v1/messages' ? 'anthropic' : undefined;
    if (!provider) {
      sendJson(res, 404, { error: { message: `No route for ${req.method} ${url.pathname}` } });
      return;
    }
    if (req.method !== 'POST') {
      sendError(res, provider, { status: 405, message: `${req.method} is not allowed; use POST` });
      return;
    }

    let body: unknown = raw;
    let validJson = true;
    try {
      body = JSON.parse(raw);
    } catch {
      validJson = false;
    }
    const images = requestImages(body);
    const record: RecordedRequest = { path: url.pathname, headers: { ...req.headers }, body, images, at: Date.now() };
    const aside = isObject(body) ? asideKind(body) : undefined;
    (aside === 'title' ? titleLog : aside === 'summary' ? summaryLog : log).push(record);
    res.once('finish', () => (record.answeredAt = Date.now()));
    if (!validJson || !isObject(body)) {
      sendError(res, provider, { status: 400, message: 'The request body is not a JSON object' });
      return;
    }

    const userText = lastUserText(body);
    const next = peekTurn(userText, aside);
    if (next?.refuseImages && images.length > 0) {
      sendError(res, provider, { status: 400, message: IMAGES_REFUSED });
      return;
    }
    const taken = takeTurn(userText, aside) ?? (aside === undefined ? opts.unscripted?.({ userText, body }) : undefined) ?? { text: defaultAnswer(userText, aside) };
    // What the function decides is the turn's content; its timing and matching stay.
    const turn = taken.respond ? { ...taken, ...taken.respond({ userText, body }) } : taken;
    if (turn.stallMs) await sleep(turn.stallMs, undefined, { signal });
    if (turn.contextOverflow) {
      sendError(res, provider, CONTEXT_OVERFLOW[provider]);
      return;
    }
    if (turn.error) {
      sendError(res, provider, turn.error);
      return;
    }

    const reply = resolveReply(turn, provider, body);
    if (body.stream !== true) {
      if (reply.midStreamError) {
        const { message, type } = reply.midStreamError;
        sendError(res, provider, { status: 500, message, type });
      } else {
        sendJson(res, 200, provider === 'openai' ? openAiCompletion(reply) : anthropicMessage(reply));
      }
      return;
    }
    const includeUsage = isObject(body.stream_options) && body.stream_options.include_usage === true;
    const frames = provider === 'openai' ? openAiStreamFrames(reply, includeUsage) : anthropicStreamFrames(reply);
    await streamFrames(res, frames, turn, signal);
  }

  function handleControl(method: string | undefined, url: URL, raw: string, res: ServerResponse): void {
    const route = `${method} ${url.pathname}`;
    if (route === 'GET /__control/health') {
      sendJson(res, 200, { ok: true });
    } else if (route === 'GET /__control/requests') {
      sendJson(res, 200, log);
    } else if (route === 'GET /__control/title-requests') {
      sendJson(res, 200, titleLog);
    } else if (route === 'GET /__control/summary-requests') {
      sendJson(res, 200, summaryLog);
    } else if (route === 'POST /__control/reset') {
      queue = [];
      log = [];
      titleLog = [];
      summaryLog = [];
      sendJson(res, 200, { ok: true });
    } else if (route === 'POST /__control/script') {
      let turns: unknown;
      try {
        turns = (JSON.parse(raw) as JsonObject).turns;
      } catch {
        // Reported just below as a missing `turns` array.
      }
      if (!Array.isArray(turns)) {
        sendJson(res, 400, { error: { message: 'Expected a JSON body {"turns": [...]}' } });
        return;
      }
      queue = url.searchParams.get('replace') === '1' ? [...turns] : [...queue, ...turns];
      sendJson(res, 200, { ok: true, queued: queue.length });
    } else {
      sendJson(res, 404, { error: { message: `No control route for ${route}` } });
    }
  }

  /**
   * The index of the first queued turn that applies to a request of this kind (a chat turn's,
   * a title's, a summary's) with this user text, or -1.
   */
  function turnIndex(userText: string, aside: Aside | undefined): number {
    return queue.findIndex((turn) => turnKind(turn) === aside && (turn.match === undefined || userText.includes(turn.match)));
  }

  function peekTurn(userText: string, aside: Aside | undefined): ScriptTurn | undefined {
    return queue[turnIndex(userText, aside)];
  }

  /** Removes and returns the first queued turn that applies to a request with this user text. */
  function takeTurn(userText: string, aside: Aside | undefined): ScriptTurn | undefined {
    const index = turnIndex(userText, aside);
    return index < 0 ? undefined : queue.splice(index, 1)[0];
  }

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The server has no TCP address');
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${address.port}`,
    port: address.port,
    script(turns) {
      queue.push(...turns);
    },
    reset() {
      queue = [];
      log = [];
      titleLog = [];
      summaryLog = [];
    },
    requests() {
      return [...log];
    },
    open() {
      return open;
    },
    titleRequests() {
      return [...titleLog];
    },
    summaryRequests() {
      return [...summaryLog];
    },
    close() {
      return new Promise<void>((resolveClose, reject) => {
        server.close((err) => (err ? reject(err) : resolveClose()));
        // Destroying every socket, busy ones included, ends stalled responses and keep-alive
        // connections at once instead of waiting for them.
        server.closeAllConnections();
      });
    },
  };
}

// ---- Requests -------------------------------------------------------------------------------

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The text of the last user message that has text. Both providers put it in `messages`, as a
 * string or as an array of `{type: "text", text}` parts. Anthropic sends tool results as user
 * messages made only of `tool_result` blocks; skipping those keeps a whole tool loop routed by
 * the user's prompt, as it is with OpenAI (whose tool results have role "tool").
 */
function lastUserText(body: JsonObject): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message: unknown = messages[i];
    if (!isObject(message) || message.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    if (!Array.isArray(message.content)) continue;
    const texts = message.content
      .filter((part): part is JsonObject => isObject(part) && part.type === 'text' && typeof part.text === 'string')
      .map((part) => part.text as string);
    if (texts.length > 0) return texts.join('\n');
  }
  return '';
}

/** A call the agent makes beside the chat. */
type Aside = 'title' | 'summary';

/**
 * How the agent's calls beside the chat open their system prompts (`TITLE_PROMPT` and
 * `SUMMARY_PROMPT` in agent/src/prompt/chat.rs).
 */
const ASIDE_PROMPT_STARTS: Record<Aside, string> = {
  title: 'Name this conversation:',
  summary: 'Summarize this conversation for your own later use:',
};

/** Which call beside the chat a request is: its prompt as its system prompt, and no tools offered. */
function asideKind(body: JsonObject): Aside | undefined {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  if (tools.length > 0) return undefined;
  const system = systemText(body);
  return (Object.keys(ASIDE_PROMPT_STARTS) as Aside[]).find((kind) => system.startsWith(ASIDE_PROMPT_STARTS[kind]));
}

function turnKind(turn: ScriptTurn): Aside | undefined {
  return turn.title === true ? 'title' : turn.summary === true ? 'summary' : undefined;
}

/** The answer to a request nothing was scripted for. */
function defaultAnswer(userText: string, aside: Aside | undefined): string {
  if (aside === 'title') return firstMessage(userText);
  if (aside === 'summary') return personsMessages(userText);
  return `You said: ${userText}`;
}

/** The system prompt: OpenAI's first `system` message, or Anthropic's `system` (a string or text blocks). */
function systemText(body: JsonObject): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const first: unknown = messages[0];
  const system = isObject(first) && first.role === 'system' ? first.content : body.system;
  if (typeof system === 'string') return system;
  if (!Array.isArray(system)) return '';
  return system.map((part: unknown) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

/**
 * A summary request's stand-in answer: what the person said in the part summarized (each of
 * their messages, as the request quotes them, cut to 60 characters), after the earlier summary.
 */
function personsMessages(userText: string): string {
  const earlier = /<earlier_summary>\n([\s\S]*?)\n<\/earlier_summary>/.exec(userText)?.[1];
  const said = [...userText.matchAll(/^\[person\] (.*)$/gm)].map((m) => m[1]!.slice(0, 60).trim());
  return [earlier, `The person said: ${said.join('; ')}.`].filter((part) => part !== undefined).join(' ');
}

/** The task's first message, as a title request shows it: its first line, cut to 60 characters. */
function firstMessage(userText: string): string {
  const message = /<first_message>\n([\s\S]*?)\n<\/first_message>/.exec(userText)?.[1] ?? userText;
  return message.split(/\s+/).filter((word) => word !== '').join(' ').slice(0, 60);
}

/**
 * The inline images of a request: OpenAI `image_url` parts with a base64 `data:` URL and
 * Anthropic `image` blocks with a base64 source (an image given by a remote URL has no bytes
 * here, and is not listed).
 */
function requestImages(body: unknown): RecordedImage[] {
  if (!isObject(body) || !Array.isArray(body.messages)) return [];
  const images: RecordedImage[] = [];
  body.messages.forEach((message: unknown, index: number) => {
    if (!isObject(message) || !Array.isArray(message.content)) return;
    for (const part of message.content) {
      if (!isObject(part)) continue;
      const url = part.type === 'image_url' && isObject(part.image_url) ? part.image_url.url : undefined;
      const dataUrl = typeof url === 'string' ? /^data:([^;,]+);base64,(.*)$/s.exec(url) : null;
      if (dataUrl) images.push({ message: index, mediaType: dataUrl[1]!, bytes: Buffer.from(dataUrl[2]!, 'base64').length });
      const source = part.type === 'image' && isObject(part.source) ? part.source : undefined;
      if (source?.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
        images.push({ message: index, mediaType: source.media_type, bytes: Buffer.from(source.data, 'base64').length });
      }
    }
  });
  return images;
}

/** The providers' own 400 for a prompt longer than the model's context window. */
const CONTEXT_OVERFLOW: Record<Provider, NonNullable<ScriptTurn['error']>> = {
  openai: {
    status: 400,
    message:
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.",
    type: 'invalid_request_error',
    param: 'messages',
    code: 'context_length_exceeded',
  },
  anthropic: { status: 400, message: 'prompt is too long: 210000 tokens > 200000 maximum', type: 'invalid_request_error' },
};

/** What a text-only model answers to an image (OpenAI's words for it). */
const IMAGES_REFUSED = 'Invalid content type. image_url is only supported by certain models.';

function resolveReply(turn: ScriptTurn, provider: Provider, body: JsonObject): Reply {
  const chunks = turn.chunks ?? splitWords(turn.text ?? '');
  // A mid-stream error cuts the message after its text, so the tool calls are never sent.
  const toolCalls = turn.midStreamError
    ? []
    : (turn.toolCalls ?? []).map((call) => ({
        id: call.id ?? newId(provider === 'openai' ? 'call_' : 'toolu_'),
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      }));
  const output = chunks.join('') + toolCalls.map((call) => call.name + call.arguments).join('');
  return {
    model: typeof body.model === 'string' ? body.model : 'mimo-scripted',
    chunks,
    toolCalls,
    usage: turn.usage ?? { input: estimateTokens(JSON.stringify(body)), output: estimateTokens(output) },
    midStreamError: turn.midStreamError,
  };
}

/** Splits text into word-sized deltas (each word keeps its trailing whitespace); they concatenate back to `text`. */
function splitWords(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? (text ? [text] : []);
}

/**
 * Splits tool-call arguments the way providers stream them: at least 3 pieces (when the string
 * is that long), cut at even offsets, so the cuts fall inside keys and values rather than
 * between JSON tokens. An empty string is one empty piece.
 */
function splitArguments(json: string): string[] {
  const count = Math.min(json.length, Math.max(3, Math.min(8, Math.ceil(json.length / 16))));
  if (count === 0) return [''];
  const pieces: string[] = [];
  for (let i = 0; i < count; i++) {
    pieces.push(json.slice(Math.floor((i * json.length) / count), Math.floor(((i + 1) * json.length) / count)));
  }
  return pieces;
}

/** About four characters per token, like the usual rule of thumb. */
function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function newId(prefix: string): string {
  return prefix + randomBytes(12).toString('hex');
}

// ---- Responses ------------------------------------------------------------------------------

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** An HTTP error in the provider's own error body shape. */
function sendError(res: ServerResponse, provider: Provider, error: NonNullable<ScriptTurn['error']>): void {
  const { status } = error;
  const message = error.message ?? `mimo-llm-server: scripted HTTP ${status} error`;
  const retryAfter = error.retryAfter ?? (status === 429 ? 1 : undefined);
  const headers: Record<string, string> = retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) };
  const body =
    provider === 'openai'
      ? { error: { message, type: error.type ?? openAiErrorType(status), param: error.param ?? null, code: error.code ?? openAiErrorCode(status) } }
      : { type: 'error', error: { type: error.type ?? anthropicErrorType(status), message } };
  sendJson(res, status, body, headers);
}

function openAiErrorType(status: number): string {
  if (status === 429) return 'requests';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

function openAiErrorCode(status: number): string | null {
  if (status === 401) return 'invalid_api_key';
  return status === 429 ? 'rate_limit_exceeded' : null;
}

function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/** Writes the SSE frames with the turn's pacing. */
async function streamFrames(res: ServerResponse, frames: string[], turn: ScriptTurn, signal: AbortSignal): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  const chunkDelayMs = turn.chunkDelayMs ?? DEFAULT_CHUNK_DELAY_MS;
  // The stall comes after the first frame that carries text, so a client has seen a delta.
  const firstText = frames.findIndex((f) => f.includes('"text_delta"') || /"content":"[^"]/.test(f));
  for (const [i, frame] of frames.entries()) {
    if (i === firstText + 1 && turn.stallAfterFirstChunkMs) await sleep(turn.stallAfterFirstChunkMs, undefined, { signal });
    else if (i > 0 && chunkDelayMs > 0) await sleep(chunkDelayMs, undefined, { signal });
    res.write(frame);
  }
  res.end();
}

function sseData(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

function sseEvent(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function openAiStreamFrames(reply: Reply, includeUsage: boolean): string[] {
  const id = newId('chatcmpl-');
  const created = Math.floor(Date.now() / 1000);
  // With include_usage, OpenAI sends `usage: null` on every chunk before the usage chunk.
  const chunk = (delta: JsonObject, finishReason: string | null = null): string =>
    sseData({
      id,
      object: 'chat.completion.chunk',
      created,
      model: reply.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    });

  const frames = [chunk({ role: 'assistant', content: reply.chunks.length > 0 ? '' : null })];
  for (const text of reply.chunks) frames.push(chunk({ content: text }));
  if (reply.midStreamError) {
    // OpenAI reports a failure inside a stream as an `error` object and ends without [DONE].
    const { message, type } = reply.midStreamError;
    frames.push(sseData({ error: { message, type: type ?? 'server_error', param: null, code: null } }));
    return frames;
  }
  reply.toolCalls.forEach((call, index) => {
    frames.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const piece of splitArguments(call.arguments)) {
      frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  frames.push(chunk({}, reply.toolCalls.length > 0 ? 'tool_calls' : 'stop'));
  if (includeUsage) {
    const { input, output } = reply.usage;
    frames.push(
      sseData({
        id,
        object: 'chat.completion.chunk',
        created,
        model: reply.model,
        choices: [],
        usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
      }),
    );
  }
  frames.push('data: [DONE]\n\n');
  return frames;
}

function openAiCompletion(reply: Reply): JsonObject {
  const { input, output } = reply.usage;
  const message: JsonObject = { role: 'assistant', content: reply.chunks.length > 0 ? reply.chunks.join('') : null };
  if (reply.toolCalls.length > 0) {
    message.tool_calls = reply.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    id: newId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: reply.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: reply.toolCalls.length > 0 ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
  };
}

function anthropicStreamFrames(reply: Reply): string[] {
  const ping = sseEvent('ping', { type: 'ping' });
  const frames = [
    sseEvent('message_start', {
      type: 'message_start',
      message: {
        id: newId('msg_'),
        type: 'message',
        role: 'assistant',
        model: reply.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // Anthropic counts output cumulatively: message_delta carries the final total.
        usage: { input_tokens: reply.usage.input, output_tokens: 1 },
      },
    }),
  ];
  let blocks = 0;
  const block = (contentBlock: JsonObject, deltas: JsonObject[]): void => {
    const index = blocks++;
    frames.push(sseEvent('content_block_start', { type: 'content_block_start', index, content_block: contentBlock }));
    // Anthropic sends its ping right after the first content_block_start.
    if (index === 0) frames.push(ping);
    for (const delta of deltas) frames.push(sseEvent('content_block_delta', { type: 'content_block_delta', index, delta }));
    if (!reply.midStreamError) frames.push(sseEvent('content_block_stop', { type: 'content_block_stop', index }));
  };

  if (reply.chunks.length > 0) {
    block(
      { type: 'text', text: '' },
      reply.chunks.map((text) => ({ type: 'text_delta', text })),
    );
  }
  if (reply.midStreamError) {
    const { message, type } = reply.midStreamError;
    frames.push(sseEvent('error', { type: 'error', error: { type: type ?? 'overloaded_error', message } }));
    return frames;
  }
  for (const call of reply.toolCalls) {
    block(
      { type: 'tool_use', id: call.id, name: call.name, input: {} },
      splitArguments(call.arguments).map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    );
  }
  if (blocks === 0) frames.push(ping);
  frames.push(
    sseEvent('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: reply.toolCalls.length > 0 ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: reply.usage.output },
    }),
    sseEvent('message_stop', { type: 'message_stop' }),
  );
  return frames;
}

function anthropicMessage(reply: Reply): JsonObject {
  const content: JsonObject[] = reply.chunks.length > 0 ? [{ type: 'text', text: reply.chunks.join('') }] : [];
  for (const call of reply.toolCalls) {
    content.push({ type: 'tool_use', id: call.id, name: call.name, input: parseOrRaw(call.arguments) });
  }
  return {
    id: newId('msg_'),
    type: 'message',
    role: 'assistant',
    model: reply.model,
    content,
    stop_reason: reply.toolCalls.length > 0 ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: reply.usage.input, output_tokens: reply.usage.output },
  };
}

/** Scripted arguments may be deliberately invalid JSON; those are passed on as the raw string. */
function parseOrRaw(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

// ---- CLI ------------------------------------------------------------------------------------

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '8790' }, script: { type: 'string' } } });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`Invalid --port ${values.port}`);
  let turns: ScriptTurn[] = [];
  if (values.script !== undefined) {
    const file: unknown = JSON.parse(await readFile(values.script, 'utf8'));
    if (!isObject(file) || !Array.isArray(file.turns)) throw new Error(`${values.script}: expected {"turns": [...]}`);
    turns = file.turns;
  }
  const server = await startLlmServer({ port, turns });
  console.log(`mimo-llm-server listening on ${server.url}`);
}
