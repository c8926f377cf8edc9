// The cost of translation (#28): microseconds per call of the request and answer
// converters in dist/ (run `npm run build` first), on the conformance suite's fixtures
// (test/conformance/fixtures/, written from the providers' references). No network, no
// daemon: what translation adds to a call, not the call itself.
//
//   node bench/translate.js [--runs 7] [--ms 300]
//
// Each case runs for about `ms` milliseconds per run, `runs` times, interleaved (a burst
// of load on a shared machine hits every case alike); the report gives µs per call as the
// median and the range (min–max) of the runs.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => import(join(root, 'dist', p));
const { outbound } = await dist('daemon/gateway/translate/plan.js');
const { jsonRewriter, StreamRewriter } = await dist('daemon/gateway/translate/answer.js');
const { loadConfig } = await dist('shared/config/load.js');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const RUNS = arg('runs', 7);
const MS = arg('ms', 300);

const FIX = join(root, 'test', 'conformance', 'fixtures');
const json = (p) => JSON.parse(readFileSync(join(FIX, p), 'utf8')).body;
/** A stream fixture as the provider sends it, one Buffer per event (as a provider flushes them). */
function sse(p) {
  const lines = readFileSync(join(FIX, p), 'utf8').split('\n');
  const named = lines.some((l) => l === '# events: named');
  return lines
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => {
      if (l === '[DONE]') return Buffer.from('data: [DONE]\n\n');
      const name = named ? `event: ${JSON.parse(l).type}\n` : '';
      return Buffer.from(`${name}data: ${l}\n\n`);
    });
}

const config = loadConfig(undefined, {});
const target = (provider, model) => ({ provider: config.providers.get(provider), model, maxOutput: config.models.get(`${provider}/${model}`).maxOutputTokens });
const openai = target('openai', 'gpt-4o-mini');
const anthropic = target('anthropic', 'claude-sonnet-4-5');

// an agent's turn: its tools and the loop so far (call, result), the all-features request's extras
const agentBody = (() => {
  const all = json('openai/request-all-features.json');
  const loop = json('openai/request-tool-result-turn.json');
  return { ...all, model: 'x', messages: [...all.messages, ...loop.messages.slice(1)], tools: [...all.tools, ...json('openai/request-tools-auto.json').tools] };
})();
const textBody = { ...json('openai/request-text.json'), model: 'x' };
const toolUseAnswer = Buffer.from(JSON.stringify(json('anthropic/messages-answer-tool-use-thinking.json')));
const messagesToolStream = sse('anthropic/messages-stream-tool-use-thinking.sse.txt');
const commonToolStream = sse('openai/chat-stream-tool-call-deltas.sse.txt');

const streamThrough = (from, to, events) => {
  const r = new StreamRewriter(from, to, 'm');
  let n = 0;
  for (const e of events) n += r.push(e).length;
  return n + r.end().length;
};

/** The floor of any rewrite: each event's JSON read and written once. */
const roundTrip = (events) => {
  let n = 0;
  for (const e of events) {
    const data = e.toString('utf8').split('data: ')[1].trim();
    if (data !== '[DONE]') n += JSON.stringify(JSON.parse(data)).length;
  }
  return n;
};

const CASES = [
  ['unified chat without tools, common → common (request)', () => outbound({ format: 'common', body: textBody }, openai).text.length],
  ['  for scale: JSON.stringify of the same body', () => JSON.stringify({ ...textBody, model: 'gpt-4o-mini' }).length],
  ['agent body with tools, common → messages (request)', () => outbound({ format: 'common', body: agentBody }, anthropic).text.length],
  ['tool_use answer, messages → common (JSON answer)', () => jsonRewriter('messages', 'common', 'm')(toolUseAnswer).length],
  [`streamed tool call, messages → common (${messagesToolStream.length} events)`, () => streamThrough('messages', 'common', messagesToolStream)],
  [`streamed tool call, common → messages (${commonToolStream.length} events)`, () => streamThrough('common', 'messages', commonToolStream)],
  [`  for scale: JSON.parse + JSON.stringify of those ${messagesToolStream.length} events`, () => roundTrip(messagesToolStream)],
];

/** µs per call of `fn`, run for about `ms` milliseconds. */
function measure(fn, ms) {
  let sink = 0;
  let n = 0;
  const start = process.hrtime.bigint();
  const until = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < until) {
    for (let i = 0; i < 100; i++) sink += fn();
    n += 100;
    now = process.hrtime.bigint();
  }
  if (sink === -1) console.log('');
  return Number(now - start) / 1000 / n;
}

for (const [, fn] of CASES) measure(fn, 200); // warm-up: JIT
const perCase = CASES.map(() => []);
for (let r = 0; r < RUNS; r++) CASES.forEach(([, fn], i) => perCase[i].push(measure(fn, MS)));

const fmt = (x) => x.toFixed(2).padStart(7);
console.log(`µs per call, ${RUNS} runs of ~${MS} ms each (node ${process.version}): median  [min – max]`);
CASES.forEach(([name], i) => {
  const xs = [...perCase[i]].sort((a, b) => a - b);
  console.log(`${fmt(xs[Math.floor(xs.length / 2)])}  [${fmt(xs[0])} – ${fmt(xs.at(-1))}]  ${name}`);
});
