import { expect } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startScriptedUpstream, type ScriptedCall, type ScriptedUpstream } from './scripted-upstream.js';

/**
 * The one place a client test gets its endpoint from. `mock`: the clients talk straight to
 * a scripted loopback provider in their own format (proves the client and the mock work
 * here, offline). `proxy`: through agw's proxy to the same format's provider
 * (`/api/external/anthropic`, `/api/external/openai/v1`), which works today. `agw`: the same clients point at agw's two base URLs, `/api/gateway`
 * (Anthropic-compatible) and `/api/gateway/v1` (OpenAI-compatible), with a model alias
 * whose target is the OTHER format; agw runs as a real daemon (test/helpers/daemon.ts)
 * whose openai and anthropic providers are the scripted mocks. Until those base URLs exist
 * (they answer 404) the `agw` target reports why it is unavailable and the tests skip.
 */
export type Via = 'mock' | 'proxy' | 'agw';

export interface ClientTarget {
  via: Via;
  /** what an Anthropic-format client takes as its base URL (it appends /v1/messages) */
  anthropicBase: string;
  /** what an OpenAI-format client takes as its base URL (it appends /chat/completions) */
  openaiBase: string;
  key: string;
  /** the model an Anthropic-format client names, and an OpenAI-format client */
  anthropicModel: string;
  openaiModel: string;
  /** the provider that plays the model for an Anthropic-format client, and for an OpenAI-format one */
  forAnthropicClients: ScriptedUpstream;
  forOpenaiClients: ScriptedUpstream;
  /** why this target cannot be used yet ('' when it can) */
  unavailable: string;
  /** agw's request log for the test user, newest first (through agw only) */
  records?: () => Promise<RequestRecord[]>;
  close(): Promise<void>;
}

/** The fields of a request record (GET /api/requests) the client tests look at. */
export interface RequestRecord {
  endpoint: string;
  provider: string;
  model: string | null;
  alias: string | null;
  stream: boolean;
  status: number;
  droppedParams: string[];
}

export const ALIAS_TO_OPENAI = 'clients-to-openai';
export const ALIAS_TO_ANTHROPIC = 'clients-to-anthropic';

export async function startTarget(via: Via, call: ScriptedCall, final: (result: string) => string): Promise<ClientTarget> {
  const anthropic = await startScriptedUpstream('anthropic', call, final);
  const openai = await startScriptedUpstream('openai', call, final);
  const closeMocks = () => Promise.all([anthropic.close(), openai.close()]).then(() => undefined);
  if (via === 'mock') {
    return {
      via,
      anthropicBase: anthropic.url,
      openaiBase: `${openai.url}/v1`,
      key: 'sk-scripted-0123456789',
      anthropicModel: 'claude-sonnet-4-5',
      openaiModel: 'gpt-4o-mini',
      forAnthropicClients: anthropic,
      forOpenaiClients: openai,
      unavailable: '',
      close: closeMocks,
    };
  }
  let d: TestDaemon;
  try {
    d = await startTestDaemon({
      yaml: `aliases:\n  ${ALIAS_TO_OPENAI}: [{ provider: openai, model: gpt-4o-mini }]\n  ${ALIAS_TO_ANTHROPIC}: [{ provider: anthropic, model: claude-sonnet-4-5 }]\n`,
      env: {
        AGW_PROVIDER_OPENAI_BASE_URL: openai.url,
        AGW_PROVIDER_OPENAI_KEY: 'sk-openai-scripted-0123456789',
        AGW_PROVIDER_ANTHROPIC_BASE_URL: anthropic.url,
        AGW_PROVIDER_ANTHROPIC_KEY: 'sk-ant-scripted-0123456789',
      },
    });
  } catch (e) {
    await closeMocks();
    throw e;
  }
  const u = await d.user({ tier: 'pro', balance: 20 });
  const records = async () => ((await (await d.fetch('/requests?limit=50', { key: u.key })).json()) as { items: RequestRecord[] }).items;
  const missing: string[] = [];
  for (const path of ['/gateway/v1/messages', '/gateway/v1/chat/completions']) {
    if ((await fetch(`${d.api}${path}`, { method: 'POST' })).status === 404) missing.push(`/api${path}`);
  }
  if (via === 'proxy') {
    return {
      via,
      anthropicBase: `${d.api}/external/anthropic`,
      openaiBase: `${d.api}/external/openai/v1`,
      key: u.key,
      anthropicModel: 'claude-sonnet-4-5',
      openaiModel: 'gpt-4o-mini',
      forAnthropicClients: anthropic,
      forOpenaiClients: openai,
      unavailable: '',
      async close() {
        await d.close();
        await closeMocks();
      },
    };
  }
  return {
    via,
    anthropicBase: `${d.api}/gateway`,
    openaiBase: `${d.api}/gateway/v1`,
    key: u.key,
    anthropicModel: ALIAS_TO_OPENAI,
    openaiModel: ALIAS_TO_ANTHROPIC,
    // through agw each client is served by the other format's provider
    forAnthropicClients: openai,
    forOpenaiClients: anthropic,
    unavailable: missing.length ? `${missing.join(' and ')} answer 404 until the translate branch (#28) lands` : '',
    records,
    async close() {
      await d.close();
      await closeMocks();
    },
  };
}

/**
 * Through agw, clients that send nothing a target must drop (the AI SDK, LangChain) run
 * with `X-Service-Strict-Params: 1`: a call that would lose a field is refused with 400,
 * so a passing loop proves nothing was dropped on the way to the other format.
 */
export const strictHeaders = (t: ClientTarget): Record<string, string> => (t.via === 'agw' ? { 'X-Service-Strict-Params': '1' } : {});

/** agw's records of the last `n` calls: metered as unified chat, answered 200, nothing dropped. */
export async function expectRecordedCalls(t: ClientTarget, alias: string, n: number): Promise<RequestRecord[]> {
  const recs = (await t.records!()).slice(0, n);
  expect(recs.map((r) => [r.endpoint, r.alias, r.status, r.droppedParams])).toEqual(Array.from({ length: n }, () => ['chat', alias, 200, []]));
  return recs;
}

/** What the scripted provider answered, in order, for the model calls it got. */
export const loop = (up: ScriptedUpstream) => up.requests.filter((r) => r.answered !== 'other').map((r) => r.answered);
