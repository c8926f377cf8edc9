/** `agw logs [--follow] [filters] [--limit N] [--json]`, `agw logs show ID`: the request log (GET /api/requests). */
import { Api } from '../api.js';
import type { GlobalOpts } from '../auth.js';
import { CliError, UsageError } from '../errors.js';
import { usd, when } from '../format.js';
import { bold, dim, green, isTty, printJson, printKv, red } from '../output.js';
import { sseEvents } from '../sse.js';
import { CURSOR_PATTERN, REQUEST_ID_PATTERN, REQUESTS_MAX_LIMIT, SINCE_PATTERN, type RequestDetailT, type RequestListT, type RequestRecordT } from '../../shared/schemas/requests.js';

interface LogsOpts extends GlobalOpts {
  follow?: boolean;
  model?: string;
  provider?: string;
  status?: string;
  since?: string;
  keyId?: string;
  project?: string;
  endpoint?: string;
  limit?: string;
  cursor?: string;
}

const SINCE = new RegExp(SINCE_PATTERN);
const CURSOR = new RegExp(CURSOR_PATTERN);
const REQUEST_ID = new RegExp(REQUEST_ID_PATTERN);

/** The API's filters from the options, checked here so a typo is a usage error (exit 2), not a 400. */
function filters(o: LogsOpts): Record<string, string | undefined> {
  if (o.status !== undefined && o.status !== 'ok' && o.status !== 'error') throw new UsageError(`--status must be ok or error, got ${o.status}`);
  // a date must also be one (2024-13-45 has the shape but no day)
  if (o.since !== undefined && (!SINCE.test(o.since) || (o.since.includes('-') && !Number.isFinite(Date.parse(o.since))))) {
    throw new UsageError(`--since must be a duration like 30m, 24h, 7d or an ISO date-time, got ${o.since}`);
  }
  if (o.endpoint !== undefined && !['proxy', 'smart', 'chat'].includes(o.endpoint)) throw new UsageError(`--endpoint must be proxy, smart or chat, got ${o.endpoint}`);
  return { model: o.model, provider: o.provider, status: o.status, since: o.since, keyId: o.keyId, project: o.project, endpoint: o.endpoint };
}

function limitOf(o: LogsOpts, fallback: number): number {
  if (o.limit === undefined) return fallback;
  const n = Number(o.limit);
  if (!Number.isInteger(n) || n < 1 || n > REQUESTS_MAX_LIMIT) throw new UsageError(`--limit must be a whole number from 1 to ${REQUESTS_MAX_LIMIT}`);
  return n;
}

const HEAD = ['TIME (UTC)', 'ID', 'STATUS', 'MODEL', 'PROVIDER', 'TOKENS', 'COST', 'LATENCY'];
const WIDTH = [19, 22, 6, 26, 10, 13, 10, 8];
const ms = (v: number | null) => (v === null ? '-' : `${Math.round(v)} ms`);

function cells(r: RequestRecordT): string[] {
  const status = r.code ? `${r.status} ${r.code}` : String(r.status);
  return [
    r.createdAt.replace('T', ' ').slice(0, 19),
    r.id,
    status,
    r.model ?? (r.alias ? `(${r.alias})` : '-'),
    r.provider,
    `${r.promptTokens}→${r.completionTokens}`,
    usd(r.cost),
    ms(r.latencyMs),
  ];
}

/** One record as a line: padded columns on a terminal (status coloured), tab-separated otherwise. */
function line(c: string[]): string {
  if (!isTty()) return c.join('\t');
  return c
    .map((x, i) => {
      const padded = i === c.length - 1 ? x : x.padEnd(WIDTH[i]);
      if (i !== 2) return padded;
      return /^[23]/.test(x) ? green(padded) : red(padded);
    })
    .join('  ')
    .trimEnd();
}

const header = () => (isTty() ? bold(HEAD.map((h, i) => (i === HEAD.length - 1 ? h : h.padEnd(WIDTH[i]))).join('  ')) : HEAD.join('\t'));

export async function logs(opts: LogsOpts): Promise<void> {
  const f = filters(opts);
  const limit = limitOf(opts, opts.follow ? 10 : 20);
  if (opts.follow && opts.cursor) throw new UsageError('--cursor pages back through older calls; it does not go with --follow');
  if (opts.cursor !== undefined && !CURSOR.test(opts.cursor)) throw new UsageError(`--cursor takes the nextCursor an earlier page printed; got ${opts.cursor}`);
  const api = await Api.open(opts);
  if (!opts.follow) {
    const page = await api.get<RequestListT>('/requests', { query: { ...f, limit, cursor: opts.cursor } });
    if (opts.json) return printJson(page);
    if (!page.items.length) {
      process.stdout.write(isTty() ? 'No calls match. Make one with: agw chat "Hello"\n' : '');
      return;
    }
    // newest last, as a log reads
    process.stdout.write([header(), ...[...page.items].reverse().map((r) => line(cells(r)))].join('\n') + '\n');
    if (page.nextCursor && isTty()) process.stdout.write(dim(`older calls: agw logs --cursor ${page.nextCursor}`) + '\n');
    return;
  }
  await follow(api, opts, f, limit);
}

/**
 * `--follow`: the newest `limit` calls, then each new one as it settles (GET
 * /api/requests/stream). The stream is opened first and the list read after, so no call
 * falls between them; one in both is printed once. `--json`: one Request per line.
 */
async function follow(api: Api, opts: LogsOpts, f: Record<string, string | undefined>, limit: number): Promise<void> {
  const res = await api.send('GET', '/requests/stream', { query: f, headers: { accept: 'text/event-stream' }, timeoutMs: 0 });
  const page = await api.get<RequestListT>('/requests', { query: { ...f, limit } });
  const shown = new Set<string>();
  const print = (r: RequestRecordT) => {
    if (shown.has(r.id)) return;
    shown.add(r.id);
    if (shown.size > 10_000) shown.clear(); // only the list's ids can repeat, and only at the start
    process.stdout.write((opts.json ? JSON.stringify(r) : line(cells(r))) + '\n');
  };
  if (!opts.json) process.stdout.write(header() + '\n');
  for (const r of [...page.items].reverse()) print(r);
  let ended = 'the daemon ended the stream';
  try {
    for await (const ev of sseEvents(res.body!)) {
      if (ev.event === 'request') print(JSON.parse(ev.data) as RequestRecordT);
      else if (ev.event === 'overflow') {
        ended = 'this terminal read the stream too slowly and the daemon dropped it';
        break;
      }
    }
  } catch (e) {
    ended = `the stream broke off: ${(e as Error).message}`;
  }
  throw new CliError(ended, 'run agw logs --follow again (agw logs lists what you missed)', 'STREAM_ENDED');
}

export async function show(id: string, opts: GlobalOpts): Promise<void> {
  if (!REQUEST_ID.test(id)) throw new UsageError(`${id} is not a request id (they look like use_…, from an answer's x-request-id or agw logs)`);
  const r = await (await Api.open(opts)).get<RequestDetailT>(`/requests/${encodeURIComponent(id)}`);
  if (opts.json) return printJson(r);
  printKv([
    ['id', r.id],
    ['when', when(r.createdAt)],
    ['status', r.code ? `${r.status} ${r.code}` : r.status],
    ['endpoint', r.endpoint],
    ['provider', r.provider],
    ['model', r.model ?? '-'],
    ['alias', r.alias ?? '-'],
    ['stream', r.stream ? 'yes' : 'no'],
    ['tokens', tokensLine(r)],
    ['cost', usd(r.cost)],
    ['latency', ms(r.latencyMs)],
    ['first byte', ms(r.ttfbMs)],
    ['attempts', r.attempts],
    ['dropped', r.droppedParams?.length ? r.droppedParams.join(', ') : '-'],
    ['key', r.keyId ?? '-'],
    ['project', r.projectId ?? '-'],
  ]);
  if (!r.bodies) return;
  for (const [title, b] of [['request body', r.bodies.request], ['answer body', r.bodies.response]] as const) {
    process.stdout.write(`\n${bold(title)} (${b.bytes} bytes${b.truncated ? ', the first 32 KB' : ''})\n${b.text ?? ''}\n`);
  }
}

/** A record's tokens by class; classes a call did not use are left out. */
function tokensLine(r: RequestRecordT): string {
  const parts = [`${r.promptTokens} prompt`, `${r.completionTokens} completion`, `${r.cachedTokens} cached`];
  if (r.cacheWriteTokens) parts.push(`${r.cacheWriteTokens} cache-write`);
  if (r.reasoningTokens) parts.push(`${r.reasoningTokens} reasoning`);
  return parts.join(', ');
}
