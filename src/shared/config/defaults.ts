import type { ModelBand, UsageType } from '../providers/types.js';

export interface TierDef {
  id: string;
  displayName: string;
  bands: ModelBand[];
  capabilities: string[];
  /** USD per calendar month, spent before the wallet balance. */
  monthlyAllowance: number;
  quotas: Record<UsageType, number>;
}

export interface Target {
  provider: string;
  model: string;
}

export const DEFAULT_MARGIN = 2.0;

export const DEFAULT_TIERS: Record<string, Omit<TierDef, 'id'>> = {
  free: {
    displayName: 'Free',
    bands: ['lite'],
    capabilities: ['chat'],
    monthlyAllowance: 0,
    quotas: { ai_chat: 100, image_generation: 10, model_3d: 0, tts: 0, skybox: 0, npc_generation: 0, sound_effect: 0 },
  },
  pro: {
    displayName: 'Pro',
    bands: ['lite', 'standard', 'pro'],
    capabilities: ['chat', 'images', 'audio', '3d', 'skills'],
    monthlyAllowance: 5,
    quotas: {
      ai_chat: 5000,
      image_generation: 500,
      model_3d: 50,
      tts: 1000,
      skybox: 50,
      npc_generation: 500,
      sound_effect: 500,
    },
  },
  team: {
    displayName: 'Team',
    bands: ['lite', 'standard', 'pro'],
    capabilities: ['chat', 'images', 'audio', '3d', 'skills', 'projects'],
    monthlyAllowance: 25,
    quotas: {
      ai_chat: 50000,
      image_generation: 5000,
      model_3d: 500,
      tts: 10000,
      skybox: 500,
      npc_generation: 5000,
      sound_effect: 5000,
    },
  },
  enterprise: {
    displayName: 'Enterprise',
    bands: ['lite', 'standard', 'pro', 'premium'],
    capabilities: ['chat', 'images', 'audio', '3d', 'skills', 'projects', 'sso'],
    monthlyAllowance: 100,
    quotas: {
      ai_chat: -1,
      image_generation: -1,
      model_3d: -1,
      tts: -1,
      skybox: -1,
      npc_generation: -1,
      sound_effect: -1,
    },
  },
};

/** Alias -> ordered targets; the first target the caller's tier allows is used. */
export const DEFAULT_ALIASES: Record<string, Target[]> = {
  'smart-lite': [
    { provider: 'openai', model: 'gpt-4o-mini' },
    { provider: 'anthropic', model: 'claude-3-5-haiku-latest' },
  ],
  'smart-standard': [
    { provider: 'openai', model: 'gpt-4.1-mini' },
    { provider: 'anthropic', model: 'claude-haiku-4-5' },
  ],
  'smart-pro': [
    { provider: 'anthropic', model: 'claude-sonnet-4-5' },
    { provider: 'openai', model: 'gpt-4o' },
  ],
  'smart-premium': [
    { provider: 'anthropic', model: 'claude-opus-4-1' },
    { provider: 'openai', model: 'o3' },
  ],
};

export const SMART_ROUTE_CLASSES = ['best-cheap-llm', 'best-fast-llm', 'best-quality-llm'] as const;
export type SmartRouteClass = (typeof SMART_ROUTE_CLASSES)[number];

export const DEFAULT_SMART_ROUTES: Record<SmartRouteClass, Target[]> = {
  'best-cheap-llm': [
    { provider: 'openai', model: 'gpt-4o-mini' },
    { provider: 'anthropic', model: 'claude-3-5-haiku-latest' },
    { provider: 'groq', model: 'llama-3.1-8b-instant' },
    { provider: 'deepseek', model: 'deepseek-chat' },
  ],
  'best-fast-llm': [
    { provider: 'groq', model: 'llama-3.1-8b-instant' },
    { provider: 'openai', model: 'gpt-4.1-nano' },
    { provider: 'anthropic', model: 'claude-haiku-4-5' },
  ],
  'best-quality-llm': [
    { provider: 'anthropic', model: 'claude-sonnet-4-5' },
    { provider: 'openai', model: 'gpt-4.1' },
    { provider: 'xai', model: 'grok-4' },
  ],
};

/**
 * The contract's list (CONTRACT config example): general categories first, then the game
 * studio's (the spec's built-in tool categories), then `other`, the default of a first publish.
 */
export const DEFAULT_CATEGORIES = [
  'coding',
  'data',
  'writing',
  'research',
  'productivity',
  'design',
  'devops',
  'scene',
  'npc-dialogue',
  'audio-economy',
  'story-terrain',
  'generation-files',
  'physics-camera',
  'validation-registry',
  'other',
];

export const DEFAULT_PLATFORM_FEE = 0.2;

/** Publish uploads: idle and overall time limits, and how many one account may run at once. */
export const DEFAULT_UPLOADS = {
  uploadIdleTimeoutMs: 30_000,
  uploadTimeoutMs: 600_000,
  maxConcurrentUploads: 3,
};

/** Self top-up is off unless the config turns it on (money is minted by operators). */
export const DEFAULT_WALLET = { selfTopup: false };

export const DEFAULT_GATEWAY = {
  connectTimeoutMs: 5_000,
  responseTimeoutMs: 120_000,
  cooldownMs: 30_000,
  failureThreshold: 3,
  /** no longer used (reservations are held in memory; see leaseTtlMs): accepted so old config files still load */
  reservationTtlMs: 15 * 60_000,
  /**
   * PostgreSQL: a daemon's budget leases are returned this long after its last heartbeat
   * (it heartbeats every fifth of it; money/postgres/engine.ts). The bound on how long a killed
   * daemon's unused funds and units stay out of reach.
   */
  leaseTtlMs: 10_000,
  /** how often keys' lastUsedAt is written (auth/key-usage.ts) */
  keyLastUsedFlushMs: 60_000,
  /** provider keys (gateway/keys): the first cooldown without Retry-After, doubled per failure in a row, and the most any cooldown lasts */
  keyCooldownMs: 1_000,
  keyCooldownMaxMs: 300_000,
  /** a 5xx, or a connection broken after the request was sent, is tried once more on another key (the provider may bill both tries) */
  keyRetryServerErrors: true,
  /** how often provider keys' figures are written to the store (agw admin providers) */
  keyStatsFlushMs: 10_000,
  /** prompt-cache stickiness: how long a conversation stays where it was served, and how many are remembered */
  stickyTtlMs: 3_600_000,
  stickyMaxConversations: 100_000,
};

/** The request log (usage_records): how long records and bodies are kept. */
export const DEFAULT_LOGS = {
  /** records are deleted in whole UTC days once they are older than this */
  retentionDays: 30,
  /** keep request and answer bodies (size-capped, secrets redacted) */
  bodies: false,
  /** bodies go earlier than their records when this is lower than retentionDays */
  bodiesRetentionDays: 30,
};
