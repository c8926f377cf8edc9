import type { CloudSettings, ProviderDef } from '../providers/types.js';
import { isSnapshotOf } from '../providers/index.js';
import type { ConfigProblem } from './load.js';
import type { ProviderKey } from './provider-keys.js';

/** The cloud settings of `providers.ID` as the schema admits them. */
interface CloudInput {
  baseUrl?: string;
  deployments?: Record<string, string>;
  apiVersion?: string;
  region?: string;
  project?: string;
  location?: string;
}

/** Which provider takes which setting. */
const TAKES: Record<string, readonly (keyof CloudInput)[]> = {
  'azure-openai': ['deployments', 'apiVersion'],
  bedrock: ['region'],
  vertex: ['project', 'location'],
};

export const AZURE_DEFAULT_API_VERSION = '2024-10-21';
export const BEDROCK_DEFAULT_REGION = 'us-east-1';
export const VERTEX_DEFAULT_LOCATION = 'global';

/** The cloud's own endpoint for a region or location (CONTRACT "Cloud providers": the default baseUrl). */
export function bedrockEndpoint(region: string): string {
  return `https://bedrock-runtime.${region}.amazonaws.com`;
}
export function vertexEndpoint(location: string): string {
  return location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`;
}

/**
 * A provider's cloud settings with their defaults, and the base URL they imply (undefined:
 * the catalog's). Problems: a setting of another provider, an Azure key without the
 * resource's baseUrl, a Vertex key without a project.
 */
export function resolveCloud(
  def: ProviderDef,
  o: CloudInput,
  keys: readonly ProviderKey[],
  problems: ConfigProblem[],
  envBaseUrl: string | undefined,
): { settings: CloudSettings; baseUrl?: string } {
  const takes = TAKES[def.id] ?? [];
  for (const f of ['deployments', 'apiVersion', 'region', 'project', 'location'] as const) {
    if (o[f] !== undefined && !takes.includes(f)) {
      const owner = Object.keys(TAKES).find((id) => TAKES[id].includes(f));
      problems.push({ path: `providers.${def.id}.${f}`, rule: 'provider', message: `only ${owner} takes ${f}` });
    }
  }
  const settings: CloudSettings = { deployments: o.deployments ?? {} };
  if (def.id === 'azure-openai') {
    settings.apiVersion = o.apiVersion ?? AZURE_DEFAULT_API_VERSION;
    if (keys.length && !o.baseUrl && !envBaseUrl) {
      problems.push({ path: `providers.${def.id}.baseUrl`, rule: 'required', message: 'the URL of your Azure OpenAI resource, e.g. https://NAME.openai.azure.com' });
    }
    return { settings };
  }
  if (def.id === 'bedrock') {
    settings.region = o.region ?? BEDROCK_DEFAULT_REGION;
    return { settings, baseUrl: bedrockEndpoint(settings.region) };
  }
  if (def.id === 'vertex') {
    settings.location = o.location ?? VERTEX_DEFAULT_LOCATION;
    settings.project = o.project ?? keys.find((k) => k.serviceAccount?.project_id)?.serviceAccount?.project_id;
    if (keys.length && !settings.project) {
      problems.push({ path: `providers.${def.id}.project`, rule: 'required', message: 'name the Google Cloud project (the service account names none)' });
    }
    return { settings, baseUrl: vertexEndpoint(settings.location) };
  }
  return { settings };
}

/**
 * The row a cloud's own model id is priced as, when the catalog (or config) has no row of
 * that id: the longest row of the provider of which the id, as the cloud prices it
 * (`pricedAs`: Bedrock without a geographic inference profile's prefix), is a dated snapshot
 * (providers/index.ts isSnapshotOf: not another product that merely starts with it). Lets an alias,
 * smart-route or `models:` entry name the id the cloud takes (`us.anthropic.claude-…-v1:0`,
 * `claude-sonnet-4-5@20250929`, `gpt-4o-2024-11-20`) priced from the catalog.
 */
export function cloudModelRow<T extends { provider: string; model: string }>(def: ProviderDef, id: string, rows: Iterable<T>): T | undefined {
  if (!def.chatUpstream) return undefined;
  const key = def.pricedAs ? def.pricedAs(id) : id;
  let best: T | undefined;
  for (const r of rows) {
    if (r.provider === def.id && isSnapshotOf(key, r.model) && (!best || r.model.length > best.model.length)) best = r;
  }
  return best;
}
