// The helper servers of the benchmark, each run as its own process so that none
// shares an event loop with the load generator or the daemon:
//   node bench/servers.js mock               OpenAI-style upstream (JSON + SSE), no delay
//   node bench/servers.js forwarder URL      bare undici forwarder to URL (the baseline)
//   node bench/servers.js floor URL JOURNAL  the least a metered call must do (see startFloor)
//   node bench/servers.js floor-fastify URL JOURNAL  the same behind fastify (startFastifyFloor)
// Each prints one JSON line {"event":"listening","url":…} on stdout when ready.
import { openSync, writeSync } from 'node:fs';
import { channel } from 'node:diagnostics_channel';
import http from 'node:http';
import { pipeline } from 'node:stream';
import { Pool } from 'undici';

const REPLY = 'Echo: hello from the benchmark (a short deterministic reply, split into chunks)';
const PIECES = REPLY.match(/\S+\s*/g);
const tokens = (s) => Math.ceil(s.length / 4);

/** Upstream calls answered, by the key they carried (direct, forwarder and agw use distinct keys). */
const served = new Map();

function chat(req, res, raw) {
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' });
    return res.end('{"error":{"message":"bad json"}}');
  }
  const auth = req.headers.authorization ?? req.headers['x-api-key'] ?? '';
  served.set(auth, (served.get(auth) ?? 0) + 1);
  const messages = Array.isArray(body.messages) ? body.messages : [];
  let prompt = 0;
  let last = '';
  for (const m of messages) {
    const text = typeof m?.content === 'string' ? m.content : '';
    prompt += tokens(text) + 3;
    if (m?.role === 'user') last = text;
  }
  const usage = { prompt_tokens: prompt, completion_tokens: tokens(REPLY), total_tokens: prompt + tokens(REPLY) };
  const id = `chatcmpl-bench${served.get(auth)}`;
  const model = JSON.stringify(String(body.model ?? ''));
  if (body.stream !== true) {
    const out = `{"id":"${id}","object":"chat.completion","created":1700000000,"model":${model},"choices":[{"index":0,"message":{"role":"assistant","content":${JSON.stringify(REPLY)}},"finish_reason":"stop"}],"usage":${JSON.stringify(usage)}}`;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    return res.end(out);
  }
  const head = `data: {"id":"${id}","object":"chat.completion.chunk","created":1700000000,"model":${model},"choices":`;
  const frames = [`${head}[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`];
  for (const p of PIECES) frames.push(`${head}[{"index":0,"delta":{"content":${JSON.stringify(p)}},"finish_reason":null}]}\n\n`);
  frames.push(`${head}[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n`);
  if (body.stream_options?.include_usage === true) frames.push(`${head}[],"usage":${JSON.stringify(usage)}}\n\n`);
  frames.push('data: [DONE]\n\n');
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  // "pace N" as the last user message spaces the frames N ms apart (the held-back check).
  const pace = /^pace (\d+)$/.exec(last);
  if (!pace) {
    for (const f of frames) res.write(f);
    return res.end();
  }
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    res.write(frames[i++]);
    if (i < frames.length) setTimeout(next, Number(pace[1]));
    else res.end();
  };
  next();
}

export function startMock(port = 0) {
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/__stats') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(Object.fromEntries(served)));
    }
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url.endsWith('/chat/completions')) return chat(req, res, raw);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"not found"}}');
    });
  });
  server.keepAliveTimeout = 65_000;
  return listen(server, port);
}

const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'upgrade', 'proxy-connection', 'te', 'trailer']);

function copyHeaders(src) {
  const out = {};
  for (const [k, v] of Object.entries(src)) if (!HOP.has(k)) out[k] = v;
  return out;
}

/** The floor: node:http in, undici Pool out, bodies streamed both ways, nothing else. */
export function startForwarder(upstream, port = 0) {
  const pool = new Pool(upstream, { connections: 256, keepAliveTimeout: 60_000 });
  const server = http.createServer(async (req, res) => {
    try {
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const up = await pool.request({ method: req.method, path: req.url, headers: copyHeaders(req.headers), body: hasBody ? req : null });
      res.writeHead(up.statusCode, copyHeaders(up.headers));
      pipeline(up.body, res, () => {});
    } catch (err) {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(err?.message ?? err) }));
    }
  });
  server.keepAliveTimeout = 65_000;
  return listen(server, port);
}

/** The accounting floor's call (startFloor), shared with its fastify variant (startFastifyFloor). */
function floorCalls(upstream, journalFile) {
  const pool = new Pool(upstream, { connections: 256, keepAliveTimeout: 60_000 });
  const journal = openSync(journalFile, 'a');
  const keys = new Map([['Bearer sk-bench-floor', { id: 'key_floor', userId: 'usr_floor' }]]);
  let n = 0;
  return {
    keyOf: (authorization) => keys.get(authorization),
    /** The call after authentication and parsing: upstream, usage, price, journal line; the answer to send. */
    async call(key, url, body) {
      body.model = String(body.model);
      const up = await pool.request({
        method: 'POST',
        path: url,
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench-floor' },
        body: JSON.stringify(body),
      });
      const answer = Buffer.from(await up.body.arrayBuffer());
      const usage = JSON.parse(answer.toString('utf8')).usage ?? {};
      const cost = (usage.prompt_tokens ?? 0) * 150 + (usage.completion_tokens ?? 0) * 600;
      writeSync(journal, `${JSON.stringify({ id: `use_${++n}`, keyId: key.id, userId: key.userId, model: body.model, prompt: usage.prompt_tokens, completion: usage.completion_tokens, costNusd: cost, at: Date.now() })}\n`);
      return { status: up.statusCode, answer };
    },
  };
}

/**
 * The accounting floor: what any gateway that books every call durably must do on a
 * call's path, and nothing else. It reads and parses the caller's JSON, finds the caller's
 * key in a Map (the cache hit of an authentication), writes the upstream body with the
 * concrete model, reads the upstream's JSON answer whole and parses it for its usage,
 * prices it, appends one JSON line for the booking to a journal file with write(2) before
 * the answer goes out (nothing answered is lost when the process is killed), then sends
 * the answer. No validation, no quota or wallet, no request record, no metrics: the work
 * no implementation of agw's rules can leave out, done plainly in Node.
 */
const phase = channel('agw:call:phase');

export function startFloor(upstream, journalFile, port = 0) {
  const floor = floorCalls(upstream, journalFile);
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      // for bench/timeline.js: the body received whole, the mark agw's proxy passes at the same step
      if (phase.hasSubscribers) phase.publish('body');
      try {
        const key = floor.keyOf(req.headers.authorization);
        if (!key) {
          res.writeHead(401, { 'content-type': 'application/json' });
          return res.end('{"error":{"message":"unknown key"}}');
        }
        const { status, answer } = await floor.call(key, req.url, JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': answer.length });
        res.end(answer);
      } catch (err) {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: String(err?.message ?? err) }));
      }
    });
  });
  server.keepAliveTimeout = 65_000;
  return listen(server, port);
}

/**
 * The same floor behind a one-route fastify app, in the way agw's gateway routes use
 * fastify: the key looked up in an onRequest hook, the JSON body read and parsed by fastify
 * and validated by a route schema (the chat body's outline and a header, agw's Ajv
 * options), the answer sent with `reply.send`. None of agw's global hooks, error handler or
 * other routes. Against startFloor it measures what the framework itself adds to a call
 * (bench/ab.js --fastify-floor).
 */
export async function startFastifyFloor(upstream, journalFile, port = 0) {
  const { default: Fastify } = await import('fastify');
  const floor = floorCalls(upstream, journalFile);
  const app = Fastify({ logger: false, ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: false, allowUnionTypes: true } } });
  const message = { type: 'object', required: ['role'], properties: { role: { type: 'string' }, content: { type: ['string', 'array'] } } };
  const schema = {
    body: { type: 'object', required: ['model', 'messages'], properties: { model: { type: 'string', maxLength: 256 }, messages: { type: 'array', minItems: 1, items: message }, stream: { type: 'boolean' } } },
    headers: { type: 'object', properties: { 'x-service-response-format': { type: 'string', enum: ['openai', 'anthropic', 'provider'] } } },
  };
  const onRequest = (req, reply, done) => {
    req.floorKey = floor.keyOf(req.headers.authorization);
    if (!req.floorKey) return reply.code(401).send({ error: { message: 'unknown key' } });
    done();
  };
  app.post('/v1/chat/completions', { onRequest, schema }, async (req, reply) => {
    const { status, answer } = await floor.call(req.floorKey, req.url, req.body);
    return reply.code(status).header('content-type', 'application/json').send(answer);
  });
  const url = await app.listen({ port, host: '127.0.0.1' });
  return { server: app.server, url };
}

function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` }));
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [role, upstream, journal] = process.argv.slice(2);
  const started =
    role === 'mock'
      ? startMock()
      : role === 'forwarder'
        ? startForwarder(upstream)
        : role === 'floor' && journal
          ? startFloor(upstream, journal)
          : role === 'floor-fastify' && journal
            ? startFastifyFloor(upstream, journal)
            : null;
  if (!started) {
    process.stderr.write('usage: node bench/servers.js mock | forwarder URL | floor URL JOURNAL | floor-fastify URL JOURNAL\n');
    process.exit(2);
  }
  const { url } = await started;
  process.stdout.write(`${JSON.stringify({ event: 'listening', url })}\n`);
  process.on('SIGTERM', () => process.exit(0));
  process.on('SIGINT', () => process.exit(0));
}
