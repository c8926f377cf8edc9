import { findModelPrice } from '../../src/shared/providers/index.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { CALLERS, TARGETS, type Caller, type Feature, type Target } from './cases.js';
import { load, loadJson, type Meaning } from './load.js';
import { startMockUpstream, type MockUpstream, type Received } from './mock-upstream.js';
import { readJson, readStream, ssePayloads } from './read.js';

/**
 * The conformance runner's world: one loopback mock per LLM provider, a real agw daemon
 * whose providers point at them, an alias `conf-<provider>` per provider, and a user. A
 * case sends a caller-side fixture to one of agw's base URLs and judges what the mock
 * received and what the caller got (README.md: "How a case is judged").
 */
export type Outcome = 'carried' | 'dropped' | 'refused' | 'lost' | 'broken' | 'pending';

export interface Harness {
  d: TestDaemon;
  key: string;
  mocks: Map<string, MockUpstream>;
  /** which callers' routes exist, which targets unified chat can reach */
  callers: Record<string, boolean>;
  targets: Record<string, boolean>;
  close(): Promise<void>;
}

export const aliasOf = (t: Target) => `conf-${t.id}`;
const envName = (id: string) => id.toUpperCase().replace(/[^A-Z0-9]/g, '_');

export async function startHarness(): Promise<Harness> {
  const mocks = new Map<string, MockUpstream>();
  for (const t of TARGETS) mocks.set(t.id, await startMockUpstream());
  const env: Record<string, string> = {};
  for (const t of TARGETS) {
    env[`AGW_PROVIDER_${envName(t.id)}_BASE_URL`] = mocks.get(t.id)!.url;
    env[`AGW_PROVIDER_${envName(t.id)}_KEY`] = `sk-conf-${t.id}-0123456789`;
  }
  const aliases = TARGETS.map((t) => `  ${aliasOf(t)}: [{ provider: ${t.id}, model: ${JSON.stringify(t.model)} }]`).join('\n');
  const d = await startTestDaemon({ yaml: `aliases:\n${aliases}\n`, env });
  const u = await d.user({ tier: 'pro', unlimited: true });
  const h: Harness = {
    d,
    key: u.key,
    mocks,
    callers: {},
    targets: {},
    async close() {
      await d.close();
      await Promise.all([...mocks.values()].map((m) => m.close()));
    },
  };
  // capability probes: a route that is not there answers 404 even without a key
  for (const c of CALLERS) h.callers[c.id] = (await fetch(`${d.api}${c.path}`, { method: 'POST' })).status !== 404;
  // a target is reachable when a plain call through unified chat gets its answer
  for (const t of TARGETS) {
    const r = await call(h, CALLERS[0], t, { ...loadJson('openai/request-text.json').body, model: aliasOf(t) }, loadAnswer(t, 'text', false));
    h.targets[t.id] = r.status === 200 && r.received.length === 1;
  }
  return h;
}

export function loadAnswer(t: Target, kind: 'text' | 'tool', stream: boolean) {
  return load(stream ? (kind === 'text' ? t.answers.streamText : t.answers.streamTool) : kind === 'text' ? t.answers.text : t.answers.tool);
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  /** what the caller got, read in the caller's format (undefined when not a 200) */
  got?: Meaning;
  received: Received[];
}

/** Sends `body` to the caller's route for target `t`, the mock answering with `answer`. */
export async function call(h: Harness, c: Caller, t: Target, body: Record<string, unknown>, answer: ReturnType<typeof load>, headers: Record<string, string> = {}): Promise<CallResult> {
  const mock = h.mocks.get(t.id)!;
  mock.serve(answer);
  const before = mock.received.length;
  const hdrs: Record<string, string> = { 'content-type': 'application/json', ...headers };
  if (c.format === 'messages') Object.assign(hdrs, { 'x-api-key': h.key, 'anthropic-version': '2023-06-01' });
  else hdrs.authorization = `Bearer ${h.key}`;
  if (c.id === 'chat') hdrs['x-service-response-format'] = 'openai';
  const res = await fetch(`${h.d.api}${c.path}`, { method: 'POST', headers: hdrs, body: JSON.stringify(body) });
  const text = await res.text();
  const received = mock.received.slice(before);
  let got: Meaning | undefined;
  if (res.status === 200) {
    const fmt = c.format === 'messages' ? 'messages' : 'chat';
    got = (res.headers.get('content-type') ?? '').includes('event-stream') ? readStream(fmt, ssePayloads(text)) : readJson(fmt, JSON.parse(text) as Record<string, unknown>);
  }
  return { status: res.status, headers: res.headers, text, got, received };
}

/** The caller-side body of a case: the fixture with the target's alias, streamed when the case is. */
export function caseBody(c: Caller, f: Feature, t: Target): Record<string, unknown> {
  const body: Record<string, unknown> = { ...loadJson(f.request).body, model: aliasOf(t) };
  if (f.stream) {
    body.stream = true;
    if (c.format === 'common') body.stream_options = { include_usage: true };
  }
  return body;
}

/** Prompt and completion totals an answer fixture reports, in the target's own terms. */
function totals(t: Target, m: Meaning): { prompt: number; completion: number; cached: number } {
  const u = m.usage ?? {};
  if (t.format === 'messages') {
    return { prompt: (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0), completion: u.output_tokens ?? 0, cached: u.cache_read_input_tokens ?? 0 };
  }
  if (t.format === 'gemini') return { prompt: u.promptTokenCount ?? 0, completion: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0), cached: u.cachedContentTokenCount ?? 0 };
  return { prompt: u.prompt_tokens ?? 0, completion: u.completion_tokens ?? 0, cached: u.cached_tokens ?? u.prompt_cache_hit_tokens ?? 0 };
}

/** What is wrong with what the caller got (empty: nothing). */
export function answerProblems(c: Caller, f: Feature, t: Target, answer: Meaning, got: Meaning): string[] {
  const out: string[] = [];
  const messages = c.format === 'messages';
  if (f.answer === 'tool') {
    if (JSON.stringify(got.toolCalls ?? []) !== JSON.stringify(answer.toolCalls ?? [])) out.push(`tool calls ${JSON.stringify(got.toolCalls ?? [])}, want ${JSON.stringify(answer.toolCalls)}`);
    if (got.finish !== (messages ? 'tool_use' : 'tool_calls')) out.push(`finish ${got.finish}, want ${messages ? 'tool_use' : 'tool_calls'}`);
  } else {
    if (got.text !== answer.text) out.push(`text ${JSON.stringify(got.text)}, want ${JSON.stringify(answer.text)}`);
    if (got.finish !== (messages ? 'end_turn' : 'stop')) out.push(`finish ${got.finish}, want ${messages ? 'end_turn' : 'stop'}`);
  }
  const want = totals(t, answer);
  const u = got.usage ?? {};
  const prompt = messages ? (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) : u.prompt_tokens;
  const completion = messages ? u.output_tokens : u.completion_tokens;
  if (prompt !== want.prompt || completion !== want.completion) out.push(`usage ${prompt}/${completion}, want ${want.prompt}/${want.completion}`);
  if (want.cached > 0) {
    const cached = messages ? u.cache_read_input_tokens : u.cached_tokens;
    if (cached !== want.cached) out.push(`cached tokens ${cached}, want ${want.cached}`);
  }
  return out;
}

/** The model's output limit, as the catalog says. */
export const limitOf = (t: Target) => findModelPrice(t.id, t.model)?.maxOutputTokens ?? 0;

export interface Judged {
  outcome: Outcome;
  problems: string[];
}

/** Runs one case and judges it: carried (and answered right), dropped (said, and refused under strict), refused, lost, broken. */
export async function judge(h: Harness, c: Caller, f: Feature, t: Target): Promise<Judged> {
  const answerFixture = loadAnswer(t, f.answer, f.stream === true);
  const r = await call(h, c, t, caseBody(c, f, t), answerFixture);
  if (r.status === 400 && /UNSUPPORTED_PARAMETER/.test(r.text) && r.received.length === 0) return { outcome: 'refused', problems: [] };
  if (r.status !== 200) return { outcome: 'broken', problems: [`HTTP ${r.status}: ${r.text.slice(0, 300)}`] };
  if (r.received.length !== 1 || !r.received[0].body) return { outcome: 'broken', problems: [`the upstream got ${r.received.length} calls`] };
  const problems = answerProblems(c, f, t, answerFixture.meaning!, r.got!);
  const dropped = (r.headers.get('x-service-dropped-params') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const carried = f.carried(t.format, r.received[0].body, limitOf(t));
  if (carried) return { outcome: problems.length ? 'broken' : 'carried', problems };
  if (!f.params.some((p) => dropped.includes(p))) return { outcome: 'lost', problems: [`not in the upstream body and not named as dropped (X-Service-Dropped-Params: ${dropped.join(',') || 'absent'})`, ...problems] };
  // said out loud: with X-Service-Strict-Params: 1 the same call is refused before the upstream
  const strict = await call(h, c, t, caseBody(c, f, t), answerFixture, { 'x-service-strict-params': '1' });
  if (strict.status !== 400 || !/UNSUPPORTED_PARAMETER/.test(strict.text) || strict.received.length !== 0) {
    problems.push(`strict mode answered ${strict.status} and reached the upstream ${strict.received.length} times`);
  }
  return { outcome: problems.length ? 'broken' : 'dropped', problems };
}
