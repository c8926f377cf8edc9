import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventFrame } from '../helpers/cloud-mocks.js';

/**
 * The conformance corpus's loader (see README.md beside this file). Two kinds of fixture:
 * - `*.json`: `{source, proves, meaning?, body}`; `body` is the wire document (a request the
 *   caller sends, or an answer the provider gives), the rest says where it comes from.
 * - `*.sse.txt`: `# key: value` header lines (source, proves, meaning, events), then one
 *   event per line: its data payload (a JSON document, or `[DONE]`). `# events: named`
 *   means each event is sent with `event: <payload.type>` as the provider names them;
 *   `data` (the default) means data lines only. `# events: eventstream` is an AWS event stream
 *   (Bedrock's ConverseStream, InvokeModelWithResponseStream), not SSE: each line is one
 *   decoded event as the API reference's union names it, `{"<event type>": <payload>}`, and
 *   the loader encodes the binary frames (`:event-type` the key; a `chunk`'s payload is the
 *   model's own event, sent base64 in `{"bytes": …}`; a key ending in `Exception` is an
 *   exception frame).
 */
export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
export const COST_FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'cost');

/** What an answer means, written by hand beside it: what a translation must keep. */
export interface Meaning {
  /** the generated text, all text blocks/deltas joined */
  text?: string;
  /** tool calls in order, arguments as parsed JSON */
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
  /** the provider's own stop reason (stop, tool_calls, end_turn, tool_use, STOP, …) */
  finish?: string;
  /** thinking text, when the answer carries it */
  thinking?: string;
  /** token counts in the provider's own terms, as its documentation defines them */
  usage?: Record<string, number>;
}

export interface JsonFixture {
  kind: 'json';
  path: string;
  source: string;
  proves: string;
  meaning?: Meaning;
  body: Record<string, unknown>;
}

export interface SseFixture {
  kind: 'sse';
  path: string;
  source: string;
  proves: string;
  meaning?: Meaning;
  events: 'named' | 'data' | 'eventstream';
  /** each event's data payload, parsed (`[DONE]` stays a string); an event stream's decoded events */
  payloads: unknown[];
  /** the stream as the provider sends it (SSE; empty for an event stream, see `frames`) */
  wire: string;
  /** an AWS event stream as the provider sends it: one binary frame per event */
  frames?: Buffer[];
}

export type Fixture = JsonFixture | SseFixture;

function need(path: string, v: unknown, what: string): string {
  if (typeof v !== 'string' || !v) throw new Error(`${path}: ${what} is required`);
  return v;
}

/** Loads one fixture by its path under fixtures/ (or an absolute path). */
export function load(path: string): Fixture {
  const file = path.startsWith('/') ? path : join(FIXTURES, path);
  const rel = relative(FIXTURES, file);
  const text = readFileSync(file, 'utf8');
  if (file.endsWith('.json')) {
    const doc = JSON.parse(text) as Record<string, unknown>;
    if (!doc.body || typeof doc.body !== 'object') throw new Error(`${rel}: body is required`);
    const source = need(rel, doc.source, 'source');
    if (!/^https:\/\//.test(source)) throw new Error(`${rel}: source must be the public reference's https URL`);
    return { kind: 'json', path: rel, source, proves: need(rel, doc.proves, 'proves'), meaning: doc.meaning as Meaning | undefined, body: doc.body as Record<string, unknown> };
  }
  if (!file.endsWith('.sse.txt')) throw new Error(`${rel}: a fixture is *.json or *.sse.txt`);
  const header: Record<string, string> = {};
  const payloads: unknown[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const h = /^# ([a-z]+): (.*)$/.exec(line);
    if (h) {
      header[h[1]] = h[2];
      continue;
    }
    if (line.startsWith('#')) continue;
    if (line === '[DONE]') payloads.push(line);
    else {
      try {
        payloads.push(JSON.parse(line));
      } catch {
        throw new Error(`${rel}:${i + 1}: an event line must be one JSON document or [DONE]`);
      }
    }
  }
  const events = header.events === 'named' || header.events === 'eventstream' ? header.events : 'data';
  const source = need(rel, header.source, '# source:');
  return {
    kind: 'sse',
    path: rel,
    source,
    proves: need(rel, header.proves, '# proves:'),
    meaning: header.meaning ? (JSON.parse(header.meaning) as Meaning) : undefined,
    events,
    payloads,
    wire: events === 'eventstream' ? '' : renderSse(events, payloads),
    ...(events === 'eventstream' ? { frames: renderEventStream(payloads) } : {}),
  };
}

/**
 * An AWS event stream's frames from its decoded events (`{"<event type>": <payload>}` each,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStreamOutput.html,
 * API_runtime_ResponseStream.html): headers `:event-type`, `:content-type`, `:message-type`;
 * a `chunk` carries the model's event as base64 `bytes`; `…Exception` is an exception frame.
 */
export function renderEventStream(payloads: unknown[]): Buffer[] {
  return payloads.map((p) => {
    const entries = p && typeof p === 'object' ? Object.entries(p) : [];
    if (entries.length !== 1) throw new Error('an event stream line is one {"<event type>": payload} object');
    const [type, body] = entries[0];
    if (type.endsWith('Exception')) return eventFrame({ ':message-type': 'exception', ':exception-type': type, ':content-type': 'application/json' }, JSON.stringify(body));
    const payload = type === 'chunk' ? { bytes: Buffer.from(JSON.stringify(body)).toString('base64') } : body;
    return eventFrame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify(payload));
  });
}

/** A stream as the provider sends it: `event: <payload.type>` lines when its events are named. */
export function renderSse(events: 'named' | 'data', payloads: unknown[]): string {
  return payloads
    .map((p) => {
      if (typeof p === 'string') return `data: ${p}\n\n`;
      const name = events === 'named' ? `event: ${String((p as { type?: unknown }).type)}\n` : '';
      return `${name}data: ${JSON.stringify(p)}\n\n`;
    })
    .join('');
}

export function loadJson(path: string): JsonFixture {
  const f = load(path);
  if (f.kind !== 'json') throw new Error(`${path} is not a JSON fixture`);
  return f;
}

export function loadSse(path: string): SseFixture {
  const f = load(path);
  if (f.kind !== 'sse') throw new Error(`${path} is not a stream fixture`);
  return f;
}

/** Every fixture path under a folder (relative to `root`), sorted. */
export function listFixtures(root = FIXTURES, under = ''): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.json') || e.name.endsWith('.sse.txt')) out.push(relative(root, p));
    }
  };
  walk(join(root, under));
  return out.sort();
}
