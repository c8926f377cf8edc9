/** The API shapes the account commands read (spec: Entitlements, Aliases, public catalog; contract: wallet). */

export interface Wallet {
  balance: number;
  currency: string;
  unlimited: boolean;
  monthlyAllowance: number;
  monthlyAllowanceUsed: number;
  monthlyAllowanceRemaining: number;
  monthlyAllowanceResetsAt: string;
  lastAllowanceAt: string | null;
}

export interface Entitlements {
  userId: string;
  tier: string;
  tierDisplayName: string;
  capabilities: string[];
  modelBands: string[];
  wallet: Wallet;
  period: { start: string; end: string; resetsAt: string };
  quotas: Record<string, { used: number; limit: number; remaining: number; unlimited: boolean }>;
  models: { alias: string; provider: string; modelId: string }[];
  cacheTtlSeconds: number;
}

export interface Aliases {
  tier: string;
  modelBands: string[];
  aliases: { alias: string; allowed: boolean; targets: { provider: string; model: string; allowed: boolean }[] }[];
  allowedModels: { provider: string; model: string; band: string }[];
  smartRouteProviderOrder: string[];
}

export interface ProviderCatalog {
  providers: {
    id: string;
    description: string;
    category: string;
    baseUrl: string;
    hasKey: boolean;
    effectiveMargin: number;
    pricing: {
      kind: 'llm' | 'units';
      currency: string;
      models: { model: string; inputPer1M: number; outputPer1M: number; cachedInputPer1M: number; inputPer1MRetail: number; outputPer1MRetail: number }[];
      units: { unit: string; description: string; price: number; priceRetail: number }[];
      lastUpdated: string;
      sourceUrl: string;
    };
  }[];
}

export interface Transactions {
  items: {
    id: string;
    type: string;
    amount: number;
    balanceAfter: number;
    createdAt: string;
    description: string | null;
    providerId?: string;
    model?: string;
    skillId?: number;
  }[];
  nextCursor: string | null;
}
