import { converseBody } from './bedrock-converse.js';
import { priced } from './prices.js';
import type { ChatApi, ChatUpstream, ProviderDef, ProxyCall, ProxyTarget } from './types.js';

/**
 * Amazon Bedrock runtime (https://docs.aws.amazon.com/bedrock/latest/APIReference/):
 * POST /model/{modelId}/converse | converse-stream | invoke | invoke-with-response-stream,
 * every request signed with AWS Signature V4 (service `bedrock`). Streams come as AWS
 * event stream frames. A model id may carry a cross-region inference profile's prefix
 * (`us.`, `eu.`, `apac.`, … priced as the model in its region; `global.` priced apart).
 */
const GEO_PREFIX = /^(us|eu|apac|jp|au|ca|us-gov)\./;

/** The model of a path's /model/{modelId}/ segment, as it is priced. */
export function bedrockModelOfPath(path: string): string | null {
  const m = /^\/model\/([^/]+)\//.exec(path);
  if (!m) return null;
  let id: string;
  try {
    id = decodeURIComponent(m[1]);
  } catch {
    id = m[1];
  }
  return pricedAs(id);
}

/** A model id as it is priced: an inference profile's ARN names the profile last; a geographic profile as its model. */
function pricedAs(id: string): string {
  return (id.startsWith('arn:') ? id.slice(id.lastIndexOf('/') + 1) : id).replace(GEO_PREFIX, '');
}

/** The path with its model segment encoded as AWS signs it (`:` as %3A). */
function canonicalModelPath(path: string): string {
  return path.replace(/^\/model\/([^/]+)\//, (_all, seg: string) => {
    let id = seg;
    try {
      id = decodeURIComponent(seg);
    } catch {
      /* sent as it is */
    }
    return `/model/${encodeURIComponent(id)}/`;
  });
}

function proxyTarget(call: ProxyCall): ProxyTarget {
  if (!call.path.startsWith('/model/')) return { error: 'Bedrock calls are POST /model/{modelId}/converse, converse-stream, invoke or invoke-with-response-stream' };
  return { path: canonicalModelPath(call.path), query: call.query, model: bedrockModelOfPath(call.path) };
}

/** The Anthropic-on-Bedrock body: the messages format with anthropic_version, the model in the path, no `stream`. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

const isAnthropic = (model: string) => /(^|\.)anthropic\./.test(model);

/** The top-level fields of the Anthropic body Bedrock's InvokeModel takes (its request reference); others are left out and named. */
const ANTHROPIC_FIELDS = new Set(['max_tokens', 'system', 'messages', 'temperature', 'top_p', 'top_k', 'tools', 'tool_choice', 'stop_sequences', 'thinking']);

/**
 * As an alias / smart-route target every model takes the messages format: an Anthropic model
 * (`anthropic.` or an inference profile's `us.anthropic.`, …) as that body through InvokeModel;
 * any other (Nova, Llama, Mistral, …) mapped onto the Converse API. Neither takes a JSON
 * schema for the answer; extended thinking: the Claude models that have it, through InvokeModel.
 */
const CLAUDE: ChatApi = {
  format: 'messages',
  reasoningModels: /anthropic\.claude-(3-7-sonnet|(sonnet|opus|haiku)-4)/,
  jsonSchemaModels: /^$/,
  reference: 'https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html',
};
const CONVERSE: ChatApi = {
  format: 'messages',
  reasoningModels: /^$/,
  jsonSchemaModels: /^$/,
  reference: 'https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html',
};

/** A messages-format body as Bedrock takes it: Anthropic models through InvokeModel, the others through Converse. */
function chatUpstream(format: string, body: Record<string, unknown>, model: string, _s: unknown, extra: Readonly<Record<string, string>> = {}): ChatUpstream | undefined {
  if (format !== 'messages') return undefined;
  const streamed = body.stream === true;
  const id = encodeURIComponent(model);
  const headers = { 'content-type': 'application/json', accept: streamed ? 'application/vnd.amazon.eventstream' : 'application/json' };
  const dropped: string[] = [];
  if (!isAnthropic(model)) {
    if (extra['anthropic-beta']) dropped.push('anthropic-beta');
    const converse = converseBody(body, dropped);
    return { path: `/model/${id}/${streamed ? 'converse-stream' : 'converse'}`, query: '', headers, body: JSON.stringify(converse), usageFormat: 'bedrock', eventStream: streamed, answer: 'converse', dropped };
  }
  const out: Record<string, unknown> = { anthropic_version: BEDROCK_ANTHROPIC_VERSION };
  for (const [k, v] of Object.entries(body)) {
    if (ANTHROPIC_FIELDS.has(k)) out[k] = v;
    else if (k !== 'model' && k !== 'stream' && k !== 'anthropic_version') dropped.push(k);
  }
  // betas go in the body here (anthropic_beta), not in a header
  const betas = extra['anthropic-beta']?.split(',').map((b) => b.trim()).filter(Boolean);
  if (betas?.length) out.anthropic_beta = betas;
  return {
    path: `/model/${id}/${streamed ? 'invoke-with-response-stream' : 'invoke'}`,
    query: '',
    headers,
    body: JSON.stringify(out),
    usageFormat: 'bedrock',
    eventStream: streamed,
    dropped,
  };
}

export const bedrock = {
  id: 'bedrock',
  name: 'Amazon Bedrock',
  description: 'Claude, Nova and Llama models on your AWS account through Amazon Bedrock, requests signed with AWS Signature V4.',
  category: 'LLM',
  // the default region's endpoint; config providers.bedrock.region picks another
  baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com',
  auth: { style: 'aws-sigv4', service: 'bedrock' },
  usageFormat: 'bedrock',
  usageType: 'ai_chat',
  pricing: {
    kind: 'llm',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    // on-demand, per 1M tokens; ids as Bedrock takes them (docs.aws.amazon.com/bedrock/latest/userguide/models-supported.html).
    // A geographic profile's id (us.…, eu.…) is priced as its model's row. Claude 4.5 models: a `global.` inference profile costs about
    // 10% less than a geographic or in-region one (docs.aws.amazon.com/bedrock/latest/userguide/global-cross-region-inference.html)
    sourceUrl: 'https://aws.amazon.com/bedrock/pricing/',
    // prices: the bundled price data (genai-prices.ts), unless a row states its own
    models: priced('bedrock', [
      { model: 'amazon.nova-micro-v1:0', band: 'lite', maxOutputTokens: 10_000, contextTokens: 128_000 },
      { model: 'amazon.nova-lite-v1:0', band: 'lite', maxOutputTokens: 10_000, contextTokens: 300_000 },
      { model: 'amazon.nova-pro-v1:0', band: 'standard', maxOutputTokens: 10_000, contextTokens: 300_000 },
      { model: 'meta.llama3-3-70b-instruct-v1:0', band: 'standard', maxOutputTokens: 8_192, contextTokens: 128_000 },
      // the bundled data has these models' base and 5-minute-write prices but neither 1-hour writes
      // nor the long-context tier: Anthropic's rules added (1-hour writes 2× input; above 200k
      // prompt tokens 2× input, 1.5× output), so a call using them is never under-billed
      { model: 'anthropic.claude-3-5-haiku-20241022-v1:0', band: 'lite', maxOutputTokens: 8_192, contextTokens: 200_000, price: { inputPer1M: 0.8, outputPer1M: 4.0, cachedInputPer1M: 0.08, cacheWritePer1M: 1, cacheWrite1hPer1M: 1.6 } },
      { model: 'anthropic.claude-haiku-4-5-20251001-v1:0', band: 'standard', maxOutputTokens: 64_000, contextTokens: 200_000, price: { inputPer1M: 1.1, outputPer1M: 5.5, cachedInputPer1M: 0.11, cacheWritePer1M: 1.375, cacheWrite1hPer1M: 2.2 } },
      { model: 'global.anthropic.claude-haiku-4-5-20251001-v1:0', band: 'standard', maxOutputTokens: 64_000, contextTokens: 200_000, price: { inputPer1M: 1.0, outputPer1M: 5.0, cachedInputPer1M: 0.1, cacheWritePer1M: 1.25, cacheWrite1hPer1M: 2 } },
      { model: 'anthropic.claude-sonnet-4-5-20250929-v1:0', band: 'pro', maxOutputTokens: 64_000, contextTokens: 1_000_000, price: { inputPer1M: 3.3, outputPer1M: 16.5, cachedInputPer1M: 0.33, cacheWritePer1M: 4.125, cacheWrite1hPer1M: 6.6, tiers: [{ aboveInputTokens: 200_000, inputPer1M: 6.6, outputPer1M: 24.75, cachedInputPer1M: 0.66, cacheWritePer1M: 8.25, cacheWrite1hPer1M: 13.2 }] } },
      { model: 'global.anthropic.claude-sonnet-4-5-20250929-v1:0', band: 'pro', maxOutputTokens: 64_000, contextTokens: 1_000_000, price: { inputPer1M: 3.0, outputPer1M: 15.0, cachedInputPer1M: 0.3, cacheWritePer1M: 3.75, cacheWrite1hPer1M: 6, tiers: [{ aboveInputTokens: 200_000, inputPer1M: 6, outputPer1M: 22.5, cachedInputPer1M: 0.6, cacheWritePer1M: 7.5, cacheWrite1hPer1M: 12 }] } },
    ]),
  },
  // the runtime's inference operations on one model (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_Operations_Amazon_Bedrock_Runtime.html);
  // not StartAsyncInvoke (video, billed later) or ApplyGuardrail (per text unit); no GETs
  // every model's inference parameters are checked against its documented range (ValidationException above
  // it: https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters.html)
  outputCapEnforced: true,
  proxyPaths: { post: [/^\/model\/[^/]+\/(converse|converse-stream|invoke|invoke-with-response-stream)$/], get: [] },
  // free: CountTokens (https://docs.aws.amazon.com/bedrock/latest/userguide/count-tokens.html: "no charge")
  freePaths: [/^\/model\/[^/]+\/count-tokens$/],
  // a model id may be an inference profile's ARN, its slash encoded
  encodedSlashIn: /^\/model\/[^/]+\/[a-z-]+$/,
  proxyTarget,
  imageTokensAs: (model: string) => (isAnthropic(model) ? 'anthropic' : undefined),
  chatFor: (model: string) => (isAnthropic(model) ? CLAUDE : CONVERSE),
  chatUpstream,
  pricedAs,
} satisfies ProviderDef;
