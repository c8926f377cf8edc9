// Simulated chat upstreams for `agw serve --demo`, the test suite and the benchmark.
// See sim-core.ts for modes, recording and the token-count formula.
import { startAnthropicSim } from './anthropic-sim.js';
import { startOpenAiSim } from './openai-sim.js';
import type { SimUpstream } from './sim-core.js';

export {
  DEFAULT_SLOW_DELAY_MS,
  MAX_RECORDED,
  PER_MESSAGE_TOKENS,
  SIM_MODES,
  chunkText,
  countTokens,
  messageText,
  simReply,
} from './sim-core.js';
export type { RecordedRequest, SimMode, SimOptions, SimUpstream } from './sim-core.js';
export { OPENAI_SIM_MODELS, openAiPromptTokens, startOpenAiSim } from './openai-sim.js';
export { ANTHROPIC_SIM_MODELS, anthropicInputTokens, startAnthropicSim } from './anthropic-sim.js';

export interface DemoUpstreamsOptions {
  host?: string;
  /** 0 / unset = ephemeral port */
  openaiPort?: number;
  anthropicPort?: number;
  /** default false (the demo does not need request recording) */
  record?: boolean;
  /** spacing between streamed chunks (default 0) */
  chunkDelayMs?: number;
  openaiApiKey?: string;
  anthropicApiKey?: string;
  /** Each provider's models (see SimOptions.knownModels); unset: any model is served. */
  knownModels?: (provider: 'openai' | 'anthropic', model: string) => boolean;
}

export interface DemoUpstreams {
  openai: SimUpstream;
  anthropic: SimUpstream;
  close(): Promise<void>;
}

export async function startDemoUpstreams(opts: DemoUpstreamsOptions = {}): Promise<DemoUpstreams> {
  const common = { host: opts.host, record: opts.record ?? false, chunkDelayMs: opts.chunkDelayMs };
  const known = opts.knownModels;
  const knows = (provider: 'openai' | 'anthropic') => (known ? (m: string) => known(provider, m) : undefined);
  const openai = await startOpenAiSim({ ...common, port: opts.openaiPort, apiKey: opts.openaiApiKey, knownModels: knows('openai') });
  let anthropic: SimUpstream;
  try {
    anthropic = await startAnthropicSim({ ...common, port: opts.anthropicPort, apiKey: opts.anthropicApiKey, knownModels: knows('anthropic') });
  } catch (err) {
    await openai.close();
    throw err;
  }
  return {
    openai,
    anthropic,
    async close() {
      await Promise.all([openai.close(), anthropic.close()]);
    },
  };
}
