import { priced } from './prices.js';
import type { ChatApi, ChatUpstream, CloudSettings, ProviderDef, ProxyCall, ProxyTarget } from './types.js';

/**
 * Azure OpenAI: the OpenAI API on an Azure resource. Calls go to
 * {resource}/openai/deployments/{deployment}/…?api-version=… with the key in `api-key`
 * (https://learn.microsoft.com/azure/ai-services/openai/reference). A caller may use the
 * Azure path as it is, or an OpenAI path (/v1/chat/completions) whose body's `model` picks
 * the deployment through `providers.azure-openai.deployments` (else the model id is the
 * deployment name).
 */
const withApiVersion = (path: string, query: string, s: CloudSettings): string =>
  /(^|&)api-version=/.test(query) || path.startsWith('/openai/v1/') || !s.apiVersion
    ? query
    : `${query ? `${query}&` : ''}api-version=${encodeURIComponent(s.apiVersion)}`;

/** The model a deployment serves (the mapping read backwards), for pricing. */
function modelOfDeployment(s: CloudSettings, deployment: string): string | null {
  for (const [model, d] of Object.entries(s.deployments)) if (d === deployment) return model;
  return null; // the answer's own `model` prices it
}

function proxyTarget(call: ProxyCall, s: CloudSettings): ProxyTarget {
  if (call.path.startsWith('/openai/')) {
    const m = /^\/openai\/deployments\/([^/]+)\//.exec(call.path);
    const model = call.bodyModel ?? (m ? modelOfDeployment(s, decodeURIComponent(m[1])) : null);
    return { path: call.path, query: withApiVersion(call.path, call.query, s), model };
  }
  if (/^(\/v1)?\/models\/?$/.test(call.path)) return { path: '/openai/models', query: withApiVersion('/openai/models', call.query, s), model: null };
  if (!call.bodyModel) return { error: 'name the model in the body (it picks the Azure deployment), or call /openai/deployments/{deployment}/…' };
  const deployment = s.deployments[call.bodyModel] ?? call.bodyModel;
  const path = `/openai/deployments/${encodeURIComponent(deployment)}${call.path.replace(/^\/v1(?=\/)/, '')}`;
  return { path, query: withApiVersion(path, call.query, s), model: call.bodyModel };
}

/**
 * As an alias / smart-route target every model takes the common format (chat completions of
 * its deployment). The GA api-version's request body (2024-10-21) has no store, metadata,
 * service_tier, modalities, audio or prediction; reasoning_effort needs a later api-version.
 */
const CHAT: ChatApi = {
  format: 'common',
  unsupported: ['store', 'metadata', 'service_tier', 'modalities', 'audio', 'prediction'],
  reasoningModels: /^(o\d|gpt-5)/,
  reference: 'https://learn.microsoft.com/azure/ai-services/openai/reference#chat-completions',
};

/** Alias / smart-route target: a common-format body goes to the deployment's chat completions. */
function chatUpstream(format: string, body: Record<string, unknown>, model: string, s: CloudSettings): ChatUpstream | undefined {
  if (format !== 'common') return undefined;
  const path = `/openai/deployments/${encodeURIComponent(s.deployments[model] ?? model)}/chat/completions`;
  const stream = body.stream === true;
  return {
    path,
    query: withApiVersion(path, '', s),
    headers: { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' },
    body: JSON.stringify(body),
    usageFormat: 'openai',
    eventStream: false,
  };
}

export const azureOpenai = {
  id: 'azure-openai',
  name: 'Azure OpenAI',
  description: 'OpenAI models deployed on your own Azure OpenAI resource, called by deployment name with an api-version.',
  category: 'LLM',
  // no default: every resource has its own host (config providers.azure-openai.baseUrl)
  baseUrl: 'https://your-resource.openai.azure.com',
  auth: { style: 'header', header: 'api-key' },
  usageFormat: 'openai',
  usageType: 'ai_chat',
  pricing: {
    kind: 'llm',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    // Global deployments, per 1M tokens; cached input is the prompt-cache price
    sourceUrl: 'https://azure.microsoft.com/en-us/pricing/details/cognitive-services/openai-service/',
    // prices: the bundled price data (genai-prices.ts), unless a row states its own
    models: priced('azure-openai', [
      { model: 'gpt-4.1-nano', band: 'lite', maxOutputTokens: 32_768, contextTokens: 1_047_576 },
      { model: 'gpt-4o-mini', band: 'lite', maxOutputTokens: 16_384, contextTokens: 128_000 },
      { model: 'gpt-4.1-mini', band: 'standard', maxOutputTokens: 32_768, contextTokens: 1_047_576 },
      { model: 'gpt-4.1', band: 'pro', maxOutputTokens: 32_768, contextTokens: 1_047_576 },
      { model: 'gpt-4o', band: 'pro', maxOutputTokens: 16_384, contextTokens: 128_000 },
    ]),
  },
  // inference on a deployment (and the v1 API's, the deployment named by `model`); batches refused;
  // not fine-tuning, files, assistants or stored completions; GETs: the model list and model info
  // the OpenAI models' own limits, refused above as OpenAI does ("max_tokens is too large")
  outputCapEnforced: true,
  proxyPaths: {
    post: [/^\/openai\/deployments\/[^/]+\/(chat\/completions|completions|embeddings)$/, /^\/openai\/v1\/(chat\/completions|embeddings)$/],
    get: [/^\/openai\/(v1\/)?models(\/[^/]+)?$/],
  },
  batchPaths: [/^\/openai\/(v1\/)?batches\/?$/],
  proxyTarget,
  imageTokensAs: () => 'openai',
  chatFor: () => CHAT,
  chatUpstream,
} satisfies ProviderDef;
