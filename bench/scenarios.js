// The measured scenarios: one request shape each, and the baseline it is compared with.
// The JSON scenarios are compared with `direct`, the streamed ones with `direct-stream`.

const MESSAGES = [
  { role: 'system', content: 'You are a terse assistant.' },
  { role: 'user', content: 'Say hello to the benchmark in one short sentence.' },
];
const CHAT_PATH = '/v1/chat/completions';
const json = (o) => JSON.stringify(o);

/**
 * Every scenario, in the interleaving order of a round. `floor` is the accounting floor
 * (servers.js startFloor: the least a gateway that books every call durably does), timed
 * sequentially as a reference for the latency targets, not loaded.
 */
export const SCENARIO_IDS = [
  'direct',
  'forwarder',
  'floor',
  'proxy',
  'chat',
  'direct-stream',
  'forwarder-stream',
  'chat-stream',
];

/** Scenarios timed sequentially only (no load phase). */
export const SEQUENTIAL_ONLY = new Set(['floor']);

/** Scenarios whose calls go through agw (counted by the bookkeeping check). */
export const AGW_SCENARIOS = new Set(['proxy', 'chat', 'chat-stream']);

/**
 * Builds the request of every scenario. `urls` = {mock, forwarder, floor, agw}; `key` = the
 * seeded user's agw_ key. Direct and forwarder calls carry their own upstream keys so the
 * mock can tell the traffic apart.
 */
export function buildScenarios(urls, key) {
  const upstreamBody = json({ model: 'gpt-4o-mini', messages: MESSAGES });
  // the raw stream asks for usage itself; agw's unified chat injects include_usage
  const upstreamStream = json({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true, stream_options: { include_usage: true } });
  const chatBody = json({ model: 'smart-lite', messages: MESSAGES });
  const chatStream = json({ model: 'smart-lite', messages: MESSAGES, stream: true });
  const h = (auth) => ({ 'content-type': 'application/json', authorization: `Bearer ${auth}` });
  const s = (id, origin, path, auth, body, extra) => ({ id, origin, path, headers: h(auth), body, stream: false, ...extra });
  const all = {
    direct: s('direct', urls.mock, CHAT_PATH, 'sk-bench-direct', upstreamBody),
    forwarder: s('forwarder', urls.forwarder, CHAT_PATH, 'sk-bench-forwarder', upstreamBody),
    floor: s('floor', urls.floor, CHAT_PATH, 'sk-bench-floor', upstreamBody),
    proxy: s('proxy', urls.agw, `/api/external/openai${CHAT_PATH}`, key, upstreamBody),
    chat: s('chat', urls.agw, '/api/gateway/chat', key, chatBody),
    'direct-stream': s('direct-stream', urls.mock, CHAT_PATH, 'sk-bench-direct', upstreamStream, { stream: true }),
    'forwarder-stream': s('forwarder-stream', urls.forwarder, CHAT_PATH, 'sk-bench-forwarder', upstreamStream, { stream: true }),
    'chat-stream': s('chat-stream', urls.agw, '/api/gateway/chat', key, chatStream, { stream: true }),
  };
  for (const sc of Object.values(all)) sc.baseline = sc.stream ? 'direct-stream' : 'direct';
  return all;
}

/**
 * The same scenario with a conversation of about `kb` KiB before its last user message: what a
 * coding agent sends on every turn (its whole history). The messages are plain text: no images,
 * nothing a provider bills beyond its tokens.
 */
export function withHistory(sc, kb) {
  const body = JSON.parse(sc.body);
  const para = 'The quick brown fox jumps over the lazy dog while the gateway counts every token. '.repeat(20);
  const history = [];
  for (let n = 0, bytes = 0; bytes < kb * 1024; n++) {
    const m = { role: n % 2 ? 'assistant' : 'user', content: `${para}(turn ${n})` };
    history.push(m);
    bytes += JSON.stringify(m).length + 1;
  }
  body.messages = [...body.messages.slice(0, -1), ...history, body.messages.at(-1)];
  return { ...sc, body: JSON.stringify(body) };
}

/** The same scenario with the last user message replaced (used by the paced-stream check). */
export function withUserText(sc, text) {
  const body = JSON.parse(sc.body);
  body.messages = [...body.messages.slice(0, -1), { role: 'user', content: text }];
  return { ...sc, body: JSON.stringify(body) };
}
