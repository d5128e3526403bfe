import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startLlmServer } from './server.ts';
import type { LlmServer } from './server.ts';

type SseEvent = { event?: string; data: string };
// Response payloads are checked field by field, so they are read loosely.
type Json = any;

/** Reads a whole SSE body into its events (`event:` name and joined `data:` lines). */
async function readSse(res: Response): Promise<SseEvent[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event: SseEvent = { data: '' };
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event.event = line.slice('event: '.length);
        else if (line.startsWith('data: ')) data.push(line.slice('data: '.length));
      }
      event.data = data.join('\n');
      return event;
    });
}

let server: LlmServer;

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

function openAi(userText: string, extra: Record<string, unknown> = {}): Promise<Response> {
  return post('/v1/chat/completions', {
    model: 'gpt-test',
    stream: true,
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: userText },
    ],
    ...extra,
  });
}

function anthropic(userText: string, extra: Record<string, unknown> = {}): Promise<Response> {
  return post('/v1/messages', {
    model: 'claude-test',
    stream: true,
    max_tokens: 1024,
    messages: [{ role: 'user', content: [{ type: 'text', text: userText }] }],
    ...extra,
  });
}

/** Parses the JSON chunks of an OpenAI stream; `[DONE]` must be the last event. */
async function openAiChunks(res: Response): Promise<Json[]> {
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events = await readSse(res);
  assert.equal(events.at(-1)?.data, '[DONE]');
  return events.slice(0, -1).map((e) => JSON.parse(e.data));
}

/** Parses an Anthropic stream, checking each event name matches its payload type. */
async function anthropicEvents(res: Response): Promise<Json[]> {
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events = (await readSse(res)).map((e) => ({ event: e.event, payload: JSON.parse(e.data) }));
  for (const { event, payload } of events) assert.equal(payload.type, event);
  return events.map((e) => e.payload);
}

before(async () => {
  server = await startLlmServer({ port: 0 });
});

after(async () => {
  await server.close();
});

beforeEach(() => {
  server.reset();
});

describe('OpenAI chat completions', () => {
  test('streams text as several deltas, then stop, usage and [DONE]', async () => {
    const text = 'Hello there, this is a scripted answer.';
    server.script([{ text, usage: { input: 12, output: 7 }, chunkDelayMs: 0 }]);
    const chunks = await openAiChunks(await openAi('hi', { stream_options: { include_usage: true } }));

    for (const chunk of chunks) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      assert.equal(chunk.model, 'gpt-test');
      assert.equal(chunk.id, chunks[0].id);
    }
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    const choiceChunks = chunks.filter((c) => c.choices.length > 0);
    const contents = choiceChunks.map((c) => c.choices[0].delta.content).filter((c) => typeof c === 'string' && c !== '');
    assert.ok(contents.length > 3, `expected several content deltas, got ${contents.length}`);
    assert.equal(contents.join(''), text);
    assert.equal(choiceChunks.at(-1).choices[0].finish_reason, 'stop');
    for (const chunk of choiceChunks.slice(0, -1)) assert.equal(chunk.choices[0].finish_reason, null);

    const usageChunk = chunks.at(-1);
    assert.deepEqual(usageChunk.choices, []);
    assert.deepEqual(usageChunk.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
  });

  test('sends explicit chunks as is and no usage chunk unless asked', async () => {
    server.script([{ chunks: ['Hel', 'lo', ' wor', 'ld'], chunkDelayMs: 0 }]);
    const chunks = await openAiChunks(await openAi('hi'));
    const contents = chunks.slice(1, -1).map((c) => c.choices[0].delta.content);
    assert.deepEqual(contents, ['Hel', 'lo', ' wor', 'ld']);
    assert.ok(chunks.every((c) => c.choices.length === 1 && !('usage' in c)));
  });

  test('streams tool calls with arguments split across at least 3 chunks', async () => {
    const args = { url: 'https://example.com/search?q=mimo', selector: '#results > li', waitMs: 500 };
    const invalid = '{"text": "unterminated';
    server.script([
      {
        toolCalls: [
          { id: 'call_fixed', name: 'navigate', arguments: args },
          { name: 'type_text', arguments: invalid },
        ],
        chunkDelayMs: 0,
      },
    ]);
    const chunks = await openAiChunks(await openAi('find mimo'));
    const choiceChunks = chunks.filter((c) => c.choices.length > 0);
    assert.equal(choiceChunks[0].choices[0].delta.role, 'assistant');
    assert.equal(choiceChunks.at(-1).choices[0].finish_reason, 'tool_calls');

    const toolDeltas = choiceChunks.flatMap((c) => c.choices[0].delta.tool_calls ?? []);
    for (const [index, expected] of [JSON.stringify(args), invalid].entries()) {
      const deltas = toolDeltas.filter((d) => d.index === index);
      const [first, ...rest] = deltas;
      assert.equal(first.type, 'function');
      assert.equal(first.function.arguments, '');
      assert.ok(rest.length >= 3, `call ${index}: expected >= 3 argument chunks, got ${rest.length}`);
      assert.ok(rest.every((d) => d.id === undefined && d.function.name === undefined));
      assert.equal(rest.map((d) => d.function.arguments).join(''), expected);
    }
    const firstDeltas = toolDeltas.filter((d) => d.id !== undefined);
    assert.equal(firstDeltas[0].id, 'call_fixed');
    assert.equal(firstDeltas[0].function.name, 'navigate');
    assert.match(firstDeltas[1].id, /^call_/);
    assert.equal(firstDeltas[1].function.name, 'type_text');
  });

  test('answers a non-streaming request with a chat.completion body', async () => {
    server.script([{ text: 'Plain answer.', toolCalls: [{ id: 'call_1', name: 'click', arguments: { ref: 'e1' } }] }]);
    const res = await openAi('hi', { stream: false });
    assert.equal(res.status, 200);
    const body: Json = await res.json();
    assert.equal(body.object, 'chat.completion');
    assert.equal(body.choices[0].message.content, 'Plain answer.');
    assert.deepEqual(body.choices[0].message.tool_calls, [
      { id: 'call_1', type: 'function', function: { name: 'click', arguments: '{"ref":"e1"}' } },
    ]);
    assert.equal(body.choices[0].finish_reason, 'tool_calls');
    assert.equal(body.usage.total_tokens, body.usage.prompt_tokens + body.usage.completion_tokens);
  });

  test('reports a mid-stream error as an error chunk without [DONE]', async () => {
    server.script([{ text: 'Partial answer', midStreamError: { message: 'boom' }, chunkDelayMs: 0 }]);
    const events = await readSse(await openAi('hi'));
    const payloads = events.map((e) => JSON.parse(e.data));
    assert.equal(payloads[1].choices[0].delta.content, 'Partial ');
    assert.deepEqual(payloads.at(-1), { error: { message: 'boom', type: 'server_error', param: null, code: null } });
    assert.ok(payloads.every((p) => p.choices?.[0]?.finish_reason == null));
  });
});

describe('Anthropic messages', () => {
  test('streams text with the exact event order', async () => {
    const text = 'Sure, here is the answer you asked for.';
    server.script([{ text, usage: { input: 20, output: 9 }, chunkDelayMs: 0 }]);
    const events = await anthropicEvents(await anthropic('hi'));
    const deltas = events.filter((e) => e.type === 'content_block_delta');
    assert.ok(deltas.length > 3);
    assert.deepEqual(
      events.map((e) => e.type),
      [
        'message_start',
        'content_block_start',
        'ping',
        ...deltas.map(() => 'content_block_delta'),
        'content_block_stop',
        'message_delta',
        'message_stop',
      ],
    );

    const { message } = events[0];
    assert.match(message.id, /^msg_/);
    assert.equal(message.type, 'message');
    assert.equal(message.role, 'assistant');
    assert.equal(message.model, 'claude-test');
    assert.deepEqual(message.content, []);
    assert.equal(message.stop_reason, null);
    assert.equal(message.usage.input_tokens, 20);
    assert.deepEqual(events[1].content_block, { type: 'text', text: '' });
    assert.ok(deltas.every((d) => d.index === 0 && d.delta.type === 'text_delta'));
    assert.equal(deltas.map((d) => d.delta.text).join(''), text);
    assert.deepEqual(events.at(-2).delta, { stop_reason: 'end_turn', stop_sequence: null });
    assert.deepEqual(events.at(-2).usage, { output_tokens: 9 });
  });

  test('streams tool_use blocks with partial_json split across at least 3 deltas', async () => {
    const args = { ref: 'e42', text: 'hello world', submit: true };
    server.script([{ text: 'Typing now.', toolCalls: [{ name: 'type_text', arguments: args }], chunkDelayMs: 0 }]);
    const events = await anthropicEvents(await anthropic('type it'));
    const types = events.map((e) => e.type);
    const textDeltas = events.filter((e) => e.type === 'content_block_delta' && e.index === 0).length;
    const toolDeltas = events.filter((e) => e.type === 'content_block_delta' && e.index === 1);
    assert.deepEqual(types, [
      'message_start',
      'content_block_start',
      'ping',
      ...Array(textDeltas).fill('content_block_delta'),
      'content_block_stop',
      'content_block_start',
      ...Array(toolDeltas.length).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);

    const toolStart = events.find((e) => e.type === 'content_block_start' && e.index === 1);
    assert.equal(toolStart.content_block.type, 'tool_use');
    assert.match(toolStart.content_block.id, /^toolu_/);
    assert.equal(toolStart.content_block.name, 'type_text');
    assert.deepEqual(toolStart.content_block.input, {});
    assert.ok(toolDeltas.length >= 3);
    assert.ok(toolDeltas.every((d) => d.delta.type === 'input_json_delta'));
    assert.equal(toolDeltas.map((d) => d.delta.partial_json).join(''), JSON.stringify(args));
    assert.equal(events.at(-2).delta.stop_reason, 'tool_use');
  });

  test('reports a mid-stream error as an error event', async () => {
    server.script([{ text: 'Partial answer', midStreamError: { message: 'Overloaded' }, chunkDelayMs: 0 }]);
    const events = await anthropicEvents(await anthropic('hi'));
    assert.deepEqual(
      events.map((e) => e.type),
      ['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'error'],
    );
    assert.deepEqual(events.at(-1).error, { type: 'overloaded_error', message: 'Overloaded' });
  });
});

describe('HTTP errors', () => {
  test('OpenAI error shape for 429, 500 and 401', async () => {
    server.script([
      { error: { status: 429, message: 'Slow down', retryAfter: 7 } },
      { error: { status: 500 } },
      { error: { status: 401, message: 'Bad key' } },
    ]);
    const limited = await openAi('hi');
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '7');
    assert.deepEqual(await limited.json(), {
      error: { message: 'Slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    });

    const failed = await openAi('hi');
    assert.equal(failed.status, 500);
    const failedBody: Json = await failed.json();
    assert.equal(failedBody.error.type, 'server_error');
    assert.equal(typeof failedBody.error.message, 'string');
    assert.equal(failedBody.error.code, null);

    const unauthorized = await openAi('hi');
    assert.equal(unauthorized.status, 401);
    assert.deepEqual(await unauthorized.json(), {
      error: { message: 'Bad key', type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
    });
  });

  test('Anthropic error shape for 429, 500, 401 and a custom type', async () => {
    server.script([
      { error: { status: 429, message: 'Slow down', retryAfter: 3 } },
      { error: { status: 500, message: 'Internal' } },
      { error: { status: 401, message: 'Bad key' } },
      { error: { status: 529, message: 'Overloaded', type: 'overloaded_error' } },
    ]);
    const expected: Array<[number, string, string]> = [
      [429, 'rate_limit_error', 'Slow down'],
      [500, 'api_error', 'Internal'],
      [401, 'authentication_error', 'Bad key'],
      [529, 'overloaded_error', 'Overloaded'],
    ];
    for (const [status, type, message] of expected) {
      const res = await anthropic('hi');
      assert.equal(res.status, status);
      assert.deepEqual(await res.json(), { type: 'error', error: { type, message } });
      if (status === 429) assert.equal(res.headers.get('retry-after'), '3');
    }
  });

  test("a context overflow is each provider's own 400, and an error may carry OpenAI's code", async () => {
    server.script([{ contextOverflow: true }, { contextOverflow: true }, { error: { status: 503, message: 'The server is overloaded', code: 'overloaded', retryAfter: 2 } }]);
    const openAiOverflow = await openAi('a very long prompt');
    assert.equal(openAiOverflow.status, 400);
    const body: Json = await openAiOverflow.json();
    assert.deepEqual([body.error.type, body.error.param, body.error.code], ['invalid_request_error', 'messages', 'context_length_exceeded']);
    assert.match(body.error.message, /^This model's maximum context length is \d+ tokens\./);
    const anthropicOverflow = await anthropic('a very long prompt');
    assert.equal(anthropicOverflow.status, 400);
    assert.deepEqual(await anthropicOverflow.json(), {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' },
    });
    const overloaded = await openAi('hi');
    assert.equal(overloaded.status, 503);
    assert.equal(overloaded.headers.get('retry-after'), '2');
    assert.deepEqual(await overloaded.json(), {
      error: { message: 'The server is overloaded', type: 'server_error', param: null, code: 'overloaded' },
    });
  });
});

describe('title requests', () => {
  const TITLE = 'Name this conversation: reply with a short title for it.';
  const asked = '<first_message>\nfind me  a cheap\nflight to Lisbon\n</first_message>\n<first_answer>\nHere are three.\n</first_answer>';
  const textOf = async (res: Response): Promise<string> =>
    (await openAiChunks(res))
      .map((c) => c.choices[0]?.delta?.content ?? '')
      .join('');

  test('are answered with the first message unless a title is scripted, taking no other turn and logged apart', async () => {
    server.script([{ text: 'The next chat turn.', chunkDelayMs: 0 }]);
    const openAiTitle = () =>
      post('/v1/chat/completions', { stream: true, messages: [{ role: 'system', content: TITLE }, { role: 'user', content: asked }] });
    assert.equal(await textOf(await openAiTitle()), 'find me a cheap flight to Lisbon');
    server.script([{ title: true, text: 'Cheap flights to Lisbon', chunkDelayMs: 0 }]);
    const anthropicTitle = await post('/v1/messages', { stream: true, system: [{ type: 'text', text: TITLE }], messages: [{ role: 'user', content: asked }] });
    const text = (await anthropicEvents(anthropicTitle))
      .filter((e) => e.type === 'content_block_delta')
      .map((e) => e.delta.text)
      .join('');
    assert.equal(text, 'Cheap flights to Lisbon');
    // A request that offers tools is not a title request, whatever its prompt.
    const withTools = await openAi('hi', { messages: [{ role: 'system', content: TITLE }, { role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] });
    assert.equal(await textOf(withTools), 'The next chat turn.');
    assert.equal(server.requests().length, 1);
    assert.equal(server.titleRequests().length, 2);
    const logged: Json = await (await fetch(`${server.url}/__control/title-requests`)).json();
    assert.equal(logged.length, 2);
  });

  test('summary requests take only summary turns and are answered with what the person said, after the earlier summary', async () => {
    const SUMMARY = 'Summarize this conversation for your own later use: it is too long.';
    const quoted = '<earlier_summary>\nThey want a mug.\n</earlier_summary>\n<conversation>\n[person] the blue one, please\n[you] Added.\n[person] and a lid\n</conversation>';
    server.script([{ text: 'The next chat turn.', chunkDelayMs: 0 }]);
    const summarize = () =>
      post('/v1/chat/completions', { stream: true, messages: [{ role: 'system', content: SUMMARY }, { role: 'user', content: quoted }] });
    assert.equal(await textOf(await summarize()), 'They want a mug. The person said: the blue one, please; and a lid.');
    server.script([{ summary: true, text: 'A scripted summary.', chunkDelayMs: 0 }]);
    assert.equal(await textOf(await summarize()), 'A scripted summary.');
    assert.equal(await textOf(await openAi('hi')), 'The next chat turn.', 'the chat turn was not taken');
    assert.equal(server.summaryRequests().length, 2);
    assert.equal(server.titleRequests().length, 0);
    assert.equal(server.requests().length, 1);
    const logged: Json = await (await fetch(`${server.url}/__control/summary-requests`)).json();
    assert.equal(logged.length, 2);
  });
});

describe('timing', () => {
  test('stallMs delays the response headers', async () => {
    server.script([{ text: 'late', stallMs: 300, chunkDelayMs: 0 }]);
    const started = performance.now();
    const res = await openAi('hi');
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 300, `headers after ${elapsed} ms`);
    await res.body?.cancel();
  });

  test('stallAfterFirstChunkMs sends the first chunk, then stalls', async () => {
    server.script([{ text: 'slow answer', stallAfterFirstChunkMs: 250, chunkDelayMs: 0 }]);
    const started = performance.now();
    const res = await anthropic('hi');
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /^event: message_start\n/);
    assert.ok(performance.now() - started < 200, 'the first chunk should not wait for the stall');
    while (!(await reader.read()).done);
    assert.ok(performance.now() - started >= 250);
  });

  test('close() ends stalled responses promptly', async () => {
    const stalled = await startLlmServer({ port: 0, turns: [{ stallMs: 60_000 }] });
    const pending = fetch(`${stalled.url}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    while (stalled.requests().length === 0) await new Promise((r) => setTimeout(r, 10));
    const started = performance.now();
    await stalled.close();
    assert.ok(performance.now() - started < 1000);
    await assert.rejects(pending);
  });
});

describe('script routing', () => {
  test('match routes turns by the last user message; unmatched requests get the echo', async () => {
    server.script([
      { match: 'alpha', text: 'Answer A', chunkDelayMs: 0 },
      { match: 'beta', text: 'Answer B', chunkDelayMs: 0 },
    ]);
    const textOf = async (res: Response): Promise<string> =>
      (await anthropicEvents(res))
        .filter((e) => e.type === 'content_block_delta')
        .map((e) => e.delta.text)
        .join('');
    assert.equal(await textOf(await anthropic('this is the beta test')), 'Answer B');
    assert.equal(await textOf(await anthropic('gamma')), 'You said: gamma');
    assert.equal(await textOf(await anthropic('now alpha')), 'Answer A');
    assert.equal(await textOf(await anthropic('alpha again')), 'You said: alpha again');
  });

  test('the default turn echoes the last user message word by word', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'gpt-test',
      stream: true,
      messages: [
        { role: 'user', content: 'first message' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'text', text: 'open the docs page' }] },
      ],
    });
    const contents = (await openAiChunks(res)).slice(1, -1).map((c) => c.choices[0].delta.content);
    assert.deepEqual(contents, ['You ', 'said: ', 'open ', 'the ', 'docs ', 'page']);
  });

  test('an Anthropic tool_result message keeps the previous user text for matching', async () => {
    server.script([{ match: 'weather', text: 'Sunny.', chunkDelayMs: 0 }]);
    const res = await anthropic('', {
      messages: [
        { role: 'user', content: 'what is the weather?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
      ],
    });
    const events = await anthropicEvents(res);
    assert.equal(events.find((e) => e.type === 'content_block_delta').delta.text, 'Sunny.');
  });
});

describe('control API', () => {
  test('logs provider requests with lower-cased headers and parsed bodies', async () => {
    server.script([{ text: 'ok', chunkDelayMs: 0 }]);
    const before = Date.now();
    await (await anthropic('logged', { system: 'sys' })).text();
    await (await fetch(`${server.url}/__control/health`)).text();

    const log = (await (await fetch(`${server.url}/__control/requests`)).json()) as Json[];
    assert.equal(log.length, 1);
    assert.equal(log[0].path, '/v1/messages');
    assert.equal(log[0].headers['content-type'], 'application/json');
    assert.equal(log[0].body.system, 'sys');
    assert.equal(log[0].body.messages[0].content[0].text, 'logged');
    assert.ok(log[0].at >= before);
    assert.deepEqual(server.requests(), log);
  });

  test('script, replace, reset and health over HTTP', async () => {
    const control = (path: string, body?: unknown): Promise<Response> =>
      fetch(`${server.url}/__control/${path}`, { method: 'POST', body: JSON.stringify(body ?? {}) });

    assert.deepEqual(await (await fetch(`${server.url}/__control/health`)).json(), { ok: true });
    assert.equal((await control('script', { turns: [{ text: 'dropped' }] })).status, 200);
    assert.equal((await control('script?replace=1', { turns: [{ text: 'kept', chunkDelayMs: 0 }] })).status, 200);
    assert.equal((await control('script', { nope: true })).status, 400);

    const res = await openAi('hi', { stream: false });
    assert.equal(((await res.json()) as Json).choices[0].message.content, 'kept');
    assert.equal(server.requests().length, 1);

    await control('script', { turns: [{ text: 'never used' }] });
    assert.equal((await control('reset')).status, 200);
    assert.equal(server.requests().length, 0);
    const echoed: Json = await (await openAi('after reset', { stream: false })).json();
    assert.equal(echoed.choices[0].message.content, 'You said: after reset');
  });

  test('invalid JSON bodies get a 400 in the provider shape and are still logged', async () => {
    const res = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: '{not json' });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as Json).error.type, 'invalid_request_error');
    assert.equal(server.requests()[0].body, '{not json');
  });
});

describe('images', () => {
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
  const openAiPage = (text: string) => ({
    role: 'user',
    content: [
      { type: 'text', text },
      { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${jpeg.toString('base64')}`, detail: 'auto' } },
    ],
  });

  test('are recorded in both formats, and the text beside them still routes the turn', async () => {
    server.script([
      { match: 'page one', text: 'saw one', chunkDelayMs: 0 },
      { match: 'page two', text: 'saw two', chunkDelayMs: 0 },
    ]);
    const openAiRes = await post('/v1/chat/completions', {
      model: 'gpt-4o',
      stream: false,
      messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'goal' }, openAiPage('<page> page one')],
    });
    assert.equal(((await openAiRes.json()) as Json).choices[0].message.content, 'saw one');
    const anthropicRes = await post('/v1/messages', {
      model: 'claude-sonnet-4-5',
      stream: false,
      max_tokens: 64,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' },
            { type: 'text', text: '<page> page two' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: jpeg.toString('base64') } },
          ],
        },
      ],
    });
    assert.equal(((await anthropicRes.json()) as Json).content[0].text, 'saw two');
    assert.deepEqual(
      server.requests().map((r) => r.images),
      [[{ message: 2, mediaType: 'image/jpeg', bytes: jpeg.length }], [{ message: 0, mediaType: 'image/png', bytes: jpeg.length }]],
    );
  });

  test('a turn that refuses images answers one with a 400 and waits for the request without it', async () => {
    server.script([{ refuseImages: true, text: 'text only', chunkDelayMs: 0 }]);
    const withImage = await post('/v1/chat/completions', { model: 'llama3.1', stream: false, messages: [openAiPage('look')] });
    assert.equal(withImage.status, 400);
    const error = ((await withImage.json()) as Json).error;
    assert.equal(error.type, 'invalid_request_error');
    assert.match(error.message, /image_url is only supported/);
    const res = await openAi('look', { stream: false });
    assert.equal(((await res.json()) as Json).choices[0].message.content, 'text only');
    assert.deepEqual(
      server.requests().map((r) => r.images.length),
      [1, 0],
    );
  });
});
