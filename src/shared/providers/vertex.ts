import { priced } from './prices.js';
import { anthropic } from './anthropic.js';
import { google } from './google.js';
import type { ChatApi, ChatUpstream, CloudSettings, ProviderDef, ProxyCall, ProxyTarget } from './types.js';

/**
 * Google Vertex AI (https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest):
 * /v1/projects/{project}/locations/{location}/publishers/{google|anthropic}/models/{model}:{method}
 * with an OAuth access token of a service account. Gemini: generateContent,
 * streamGenerateContent (`?alt=sse`); Claude: rawPredict, streamRawPredict (the messages
 * format with `anthropic_version` in the body and the model in the path,
 * https://docs.claude.com/en/api/claude-on-vertex-ai). A caller may leave the prefix out:
 * /publishers/… and /models/{gemini model}:… are completed with the configured project
 * and location.
 */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

const prefix = (s: CloudSettings) => `/v1/projects/${s.project}/locations/${s.location}`;

function proxyTarget(call: ProxyCall, s: CloudSettings): ProxyTarget {
  let path = call.path;
  if (path.startsWith('/publishers/')) path = `${prefix(s)}${path}`;
  else if (path.startsWith('/models/')) path = `${prefix(s)}/publishers/google${path}`;
  // the service account reaches every project it has a role in: only the configured one is served
  const scope = /^\/v1(?:beta1)?\/projects\/([^/]+)\/locations\/([^/]+)\//.exec(path);
  if (scope && (scope[1] !== s.project || scope[2] !== s.location)) {
    return { error: `only project ${s.project}, location ${s.location} is served (providers.vertex.project / location)`, notAllowed: true };
  }
  const m = /\/models\/([^/:]+)/.exec(path);
  let model: string | null = null;
  if (m) {
    try {
      model = decodeURIComponent(m[1]);
    } catch {
      model = m[1];
    }
  }
  return { path, query: call.query, model };
}

const isClaude = (model: string) => model.startsWith('claude-');

/**
 * As an alias / smart-route target: Claude in the messages format ("nearly identical to the
 * Messages API and supports all the same options": the model in the URL, anthropic_version in
 * the body), every other model (Gemini) in Google's format, as the Gemini API takes it.
 */
const CLAUDE: ChatApi = { ...anthropic.chat, reference: 'https://docs.claude.com/en/api/claude-on-vertex-ai' };
const GEMINI: ChatApi = { ...google.chat, reference: 'https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/projects.locations.publishers.models/generateContent' };

/** Alias / smart-route target: a gemini-format body for a Gemini model, a messages-format one for Claude (anthropic-beta passed on). */
function chatUpstream(format: string, body: Record<string, unknown>, model: string, s: CloudSettings, extra: Readonly<Record<string, string>> = {}): ChatUpstream | undefined {
  const streamed = body.stream === true;
  const accept = streamed ? 'text/event-stream' : 'application/json';
  if (format === 'messages' && isClaude(model)) {
    const { model: _m, ...rest } = body;
    const beta = extra['anthropic-beta'];
    return {
      path: `${prefix(s)}/publishers/anthropic/models/${encodeURIComponent(model)}:${streamed ? 'streamRawPredict' : 'rawPredict'}`,
      query: '',
      headers: { 'content-type': 'application/json', accept, ...(beta && { 'anthropic-beta': beta }) },
      body: JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest }),
      usageFormat: 'vertex',
      eventStream: false,
    };
  }
  if (format === 'gemini' && !isClaude(model)) {
    const { stream: _s, model: _m, ...rest } = body;
    return {
      path: `${prefix(s)}/publishers/google/models/${encodeURIComponent(model)}:${streamed ? 'streamGenerateContent' : 'generateContent'}`,
      query: streamed ? 'alt=sse' : '',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify(rest),
      usageFormat: 'vertex',
      eventStream: false,
    };
  }
  return undefined;
}

export const vertex = {
  id: 'vertex',
  name: 'Google Vertex AI',
  description: 'Gemini and Claude models on your Google Cloud project through Vertex AI, authorized by a service account.',
  category: 'LLM',
  // the global endpoint; config providers.vertex.location picks a regional one
  baseUrl: 'https://aiplatform.googleapis.com',
  auth: { style: 'google-service-account' },
  usageFormat: 'vertex',
  usageType: 'ai_chat',
  pricing: {
    kind: 'llm',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    // per 1M tokens, prompts up to 200k tokens; Claude at the global endpoint (a regional
    // location costs 10% more for Claude 4.5 models: https://docs.claude.com/en/api/claude-on-vertex-ai)
    sourceUrl: 'https://cloud.google.com/vertex-ai/generative-ai/pricing',
    // prices: the bundled price data (genai-prices.ts), unless a row states its own
    models: priced('vertex', [
      { model: 'gemini-2.5-flash-lite', band: 'lite', maxOutputTokens: 65_536, contextTokens: 1_048_576 },
      { model: 'gemini-2.5-flash', band: 'standard', maxOutputTokens: 65_536, contextTokens: 1_048_576 },
      { model: 'gemini-2.5-pro', band: 'pro', maxOutputTokens: 65_536, contextTokens: 1_048_576 },
      { model: 'claude-haiku-4-5', band: 'standard', maxOutputTokens: 64_000, contextTokens: 200_000 },
      // the bundled data lacks this model's 1-hour writes: 2× input, as Anthropic prices them and as
      // the data has them for claude-haiku-4-5 here (https://cloud.google.com/vertex-ai/generative-ai/pricing#claude-models)
      {
        model: 'claude-sonnet-4-5',
        band: 'pro',
        maxOutputTokens: 64_000,
        contextTokens: 1_000_000,
        price: {
          inputPer1M: 3,
          outputPer1M: 15,
          cachedInputPer1M: 0.3,
          cacheWritePer1M: 3.75,
          cacheWrite1hPer1M: 6,
          tiers: [{ aboveInputTokens: 200_000, inputPer1M: 6, outputPer1M: 22.5, cachedInputPer1M: 0.6, cacheWritePer1M: 7.5, cacheWrite1hPer1M: 12 }],
        },
      },
    ]),
  },
  // a publisher model's inference in the configured project and location (proxyTarget refuses any other);
  // not custom or batch prediction jobs, endpoints, tuning or any other resource of the project; GETs:
  // publisher model info (the public model garden, no project resource)
  // Gemini: "Unable to submit request because it has a maxOutputTokens value of … but the supported range
  // is from 1 (inclusive) to 65537 (exclusive)"; Claude: Anthropic's own check of max_tokens
  outputCapEnforced: true,
  proxyPaths: {
    post: [/^\/v1(beta1)?\/projects\/[^/]+\/locations\/[^/]+\/publishers\/(google|anthropic)\/models\/[^/:]+:(generateContent|streamGenerateContent|rawPredict|streamRawPredict)$/],
    get: [/^\/v1(beta1)?\/publishers\/(google|anthropic)\/models(\/[^/:]+)?$/],
  },
  batchPaths: [/^\/v1(beta1)?\/projects\/[^/]+\/locations\/[^/]+\/batchPredictionJobs\/?$/],
  // free: Gemini's countTokens / computeTokens, Claude's count-tokens endpoint ("no charge":
  // https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/count-tokens)
  freePaths: [
    /^\/v1(beta1)?\/projects\/[^/]+\/locations\/[^/]+\/publishers\/google\/models\/[^/:]+:(countTokens|computeTokens)$/,
    /^\/v1(beta1)?\/projects\/[^/]+\/locations\/[^/]+\/publishers\/anthropic\/models\/count-tokens:rawPredict$/,
  ],
  proxyTarget,
  imageTokensAs: (model: string) => (isClaude(model) ? 'anthropic' : 'google'),
  chatFor: (model: string) => (isClaude(model) ? CLAUDE : GEMINI),
  chatUpstream,
} satisfies ProviderDef;
