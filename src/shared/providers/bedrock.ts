import { priced } from './prices.js';
import type { ChatUpstream, ProviderDef, ProxyCall, ProxyTarget } from './types.js';

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
  // an inference profile's ARN names the profile last
  if (id.startsWith('arn:')) id = id.slice(id.lastIndexOf('/') + 1);
  return id.replace(GEO_PREFIX, '');
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

/** Alias / smart-route target: a messages-format body for an Anthropic model, through InvokeModel. */
function chatUpstream(format: string, body: Record<string, unknown>, model: string): ChatUpstream | undefined {
  if (format !== 'messages' || !/(^|\.)anthropic\./.test(model)) return undefined;
  const { model: _m, stream, ...rest } = body;
  const streamed = stream === true;
  return {
    path: `/model/${encodeURIComponent(model)}/${streamed ? 'invoke-with-response-stream' : 'invoke'}`,
    query: '',
    headers: { 'content-type': 'application/json', accept: streamed ? 'application/vnd.amazon.eventstream' : 'application/json' },
    body: JSON.stringify({ anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest }),
    usageFormat: 'bedrock',
    eventStream: streamed,
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
    // on-demand, per 1M tokens. Claude 4.5 models: a `global.` inference profile costs about
    // 10% less than a geographic or in-region one (docs.aws.amazon.com/bedrock/latest/userguide/global-cross-region-inference.html)
    sourceUrl: 'https://aws.amazon.com/bedrock/pricing/',
    // prices: the bundled price data (genai-prices.ts), unless a row states its own
    models: priced('bedrock', [
      { model: 'amazon.nova-micro-v1', band: 'lite', maxOutputTokens: 10_000, contextTokens: 128_000 },
      { model: 'amazon.nova-lite-v1', band: 'lite', maxOutputTokens: 10_000, contextTokens: 300_000 },
      { model: 'amazon.nova-pro-v1', band: 'standard', maxOutputTokens: 10_000, contextTokens: 300_000 },
      { model: 'meta.llama3-3-70b-instruct-v1', band: 'standard', maxOutputTokens: 8_192, contextTokens: 128_000 },
      // not in the bundled data: the pricing page's on-demand prices, with Anthropic's cache rules
      // (reads 0.1× input, 5-minute writes 1.25×, 1-hour writes 2×; above 200k prompt tokens 2× in, 1.5× out)
      { model: 'anthropic.claude-3-5-haiku', band: 'lite', maxOutputTokens: 8_192, contextTokens: 200_000, price: { inputPer1M: 0.8, outputPer1M: 4.0, cachedInputPer1M: 0.08, cacheWritePer1M: 1, cacheWrite1hPer1M: 1.6 } },
      { model: 'anthropic.claude-haiku-4-5', band: 'standard', maxOutputTokens: 64_000, contextTokens: 200_000, price: { inputPer1M: 1.1, outputPer1M: 5.5, cachedInputPer1M: 0.11, cacheWritePer1M: 1.375, cacheWrite1hPer1M: 2.2 } },
      { model: 'global.anthropic.claude-haiku-4-5', band: 'standard', maxOutputTokens: 64_000, contextTokens: 200_000, price: { inputPer1M: 1.0, outputPer1M: 5.0, cachedInputPer1M: 0.1, cacheWritePer1M: 1.25, cacheWrite1hPer1M: 2 } },
      { model: 'anthropic.claude-sonnet-4-5', band: 'pro', maxOutputTokens: 64_000, contextTokens: 1_000_000, price: { inputPer1M: 3.3, outputPer1M: 16.5, cachedInputPer1M: 0.33, cacheWritePer1M: 4.125, cacheWrite1hPer1M: 6.6, tiers: [{ aboveInputTokens: 200_000, inputPer1M: 6.6, outputPer1M: 24.75, cachedInputPer1M: 0.66, cacheWritePer1M: 8.25, cacheWrite1hPer1M: 13.2 }] } },
      { model: 'global.anthropic.claude-sonnet-4-5', band: 'pro', maxOutputTokens: 64_000, contextTokens: 1_000_000, price: { inputPer1M: 3.0, outputPer1M: 15.0, cachedInputPer1M: 0.3, cacheWritePer1M: 3.75, cacheWrite1hPer1M: 6, tiers: [{ aboveInputTokens: 200_000, inputPer1M: 6, outputPer1M: 22.5, cachedInputPer1M: 0.6, cacheWritePer1M: 7.5, cacheWrite1hPer1M: 12 }] } },
    ]),
  },
  proxyTarget,
  chatUpstream,
} satisfies ProviderDef;
