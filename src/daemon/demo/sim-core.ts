// Shared core of the simulated chat upstreams (OpenAI / Anthropic).
// Plain node:http for speed: the benchmark drives these servers hard, so the
// hot path avoids per-request logging, artificial delays and needless objects.
import http from 'node:http';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export type SimMode = 'ok' | 'rate_limit' | 'error' | 'slow' | 'hang' | 'down' | 'drop_mid_stream';

export const SIM_MODES: readonly SimMode[] = ['ok', 'rate_limit', 'error', 'slow', 'hang', 'down', 'drop_mid_stream'];

export interface RecordedRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface SimUpstream {
  /** http://127.0.0.1:PORT (no trailing slash) */
  url: string;
  port: number;
  /** Every request received, in order (at most MAX_RECORDED, oldest dropped). */
  requests: RecordedRequest[];
  setMode(mode: SimMode, opts?: { delayMs?: number }): void;
  close(): Promise<void>;
}

export interface SimOptions {
  port?: number;
  host?: string;
  /** Record requests into `requests` (default true; the benchmark passes false). */
  record?: boolean;
  /** When set, requests must carry this key (provider-specific header). */
  apiKey?: string;
  /** Delay between streamed chunks, for a realistic-looking demo (default 0). */
  chunkDelayMs?: number;
  /**
   * The models the provider has: a chat call naming another one is answered 404 as the
   * provider answers it (`agw serve --demo` passes the catalog's). Unset: any model is
   * served (the test suites send made-up ones on purpose).
   */
  knownModels?: (model: string) => boolean;
}

export const MAX_RECORDED = 10_000;
export const DEFAULT_SLOW_DELAY_MS = 2000;

/**
 * Deterministic token estimate used by both sims: ceil(chars / 4).
 *   prompt_tokens / input_tokens = sum over messages of (countTokens(text) + PER_MESSAGE_TOKENS)
 *     (Anthropic: a non-empty `system` counts as one more message)
 *   completion_tokens / output_tokens = countTokens(reply text), for a tool call
 *     countTokens(name + arguments JSON); a turn's text includes its tool calls and results
 */
export function countTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
export const PER_MESSAGE_TOKENS = 3;

/**
 * Flattens message content to plain text: a string, or an array of `{type:'text', text}`
 * parts; Anthropic's `tool_result` blocks count as their content, `tool_use` blocks as
 * name + input JSON (what a call costs in output tokens, see sim-tools.ts).
 */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const part of content) {
    if (!part || typeof part !== 'object') continue;
    const p = part as { type?: unknown; text?: unknown; content?: unknown; name?: unknown; input?: unknown };
    if (typeof p.text === 'string') out += p.text;
    else if (p.type === 'tool_result') out += messageText(p.content);
    else if (p.type === 'tool_use') out += String(p.name ?? '') + JSON.stringify(p.input ?? {});
  }
  return out;
}

/** Deterministic reply for the last user message (first 200 chars are echoed). */
export function simReply(lastUserText: string): string {
  const snippet = lastUserText.slice(0, 200);
  return snippet.length > 0
    ? `Echo: ${snippet} (simulated reply from the agw demo upstream)`
    : 'Echo: (simulated reply from the agw demo upstream)';
}

/** Splits text into groups of `wordsPerChunk` words; the pieces concatenate back to `text`. */
export function chunkText(text: string, wordsPerChunk = 2): string[] {
  const out: string[] = [];
  let start = 0;
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const space = text.charCodeAt(i) <= 32;
    if (!space && !inWord) {
      if (words === wordsPerChunk) {
        out.push(text.slice(start, i));
        start = i;
        words = 0;
      }
      words++;
    }
    inWord = !space;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

type Timer = ReturnType<typeof setTimeout>;

/** Per-request context handed to a provider handler. */
export interface SimContext {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  path: string;
  query: string;
  body: string;
  /** 'drop_mid_stream' active: streams send two chunks then die, other replies die at once. */
  drop: boolean;
  chunkDelayMs: number;
  /** Timers owned by the sim; close() clears them. */
  timers: Set<Timer>;
}

export interface SimProvider {
  handle(ctx: SimContext): void;
  /** JSON body for the 429 (rate_limit) and 500 (error) modes. */
  rateLimitBody: string;
  serverErrorBody: string;
}

export function sendJson(res: ServerResponse, status: number, body: string, extra?: OutgoingHttpHeaders): void {
  const headers: OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
  if (extra) Object.assign(headers, extra);
  res.writeHead(status, headers);
  res.end(body);
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

export async function startSim(provider: SimProvider, opts: SimOptions = {}): Promise<SimUpstream> {
  const host = opts.host ?? '127.0.0.1';
  const record = opts.record !== false;
  const chunkDelayMs = opts.chunkDelayMs ?? 0;
  const requests: RecordedRequest[] = [];
  const timers = new Set<Timer>();
  const sockets = new Set<Socket>();
  let mode: SimMode = 'ok';
  let delayMs = DEFAULT_SLOW_DELAY_MS;

  const dispatch = (req: IncomingMessage, res: ServerResponse, path: string, query: string, body: string): void => {
    const method = req.method ?? 'GET';
    if (record) {
      if (requests.length >= MAX_RECORDED) requests.splice(0, requests.length - MAX_RECORDED + 1);
      requests.push({ method, path, query, headers: req.headers, body });
    }
    switch (mode) {
      case 'down':
        req.socket.destroy();
        return;
      case 'hang':
        return; // never answer; close() destroys the socket
      case 'rate_limit':
        sendJson(res, 429, provider.rateLimitBody, { 'retry-after': '1' });
        return;
      case 'error':
        sendJson(res, 500, provider.serverErrorBody);
        return;
      case 'slow': {
        const ctx: SimContext = { req, res, method, path, query, body, drop: false, chunkDelayMs, timers };
        const t = setTimeout(() => {
          timers.delete(t);
          if (!res.destroyed) provider.handle(ctx);
        }, delayMs);
        timers.add(t);
        return;
      }
      default:
        provider.handle({ req, res, method, path, query, body, drop: mode === 'drop_mid_stream', chunkDelayMs, timers });
    }
  };

  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const query = q === -1 ? '' : url.slice(q + 1);
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => dispatch(req, res, path, query, body));
  });
  server.keepAliveTimeout = 65_000;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? 0);

  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost(host)}:${port}`,
    port,
    requests,
    setMode(next: SimMode, o?: { delayMs?: number }): void {
      if (!SIM_MODES.includes(next)) throw new Error(`unknown sim mode: ${String(next)}`);
      mode = next;
      delayMs = o?.delayMs ?? DEFAULT_SLOW_DELAY_MS;
    },
    close(): Promise<void> {
      if (closing) return closing;
      closing = new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
        sockets.clear();
      });
      return closing;
    },
  };
}
