import type { Db } from '../../src/daemon/store/db.js';
import { startAnthropicSim, startOpenAiSim, type SimUpstream } from '../../src/daemon/demo/upstreams.js';
import { findModelPrice } from '../../src/shared/providers/index.js';
import { tokenCostNano } from '../../src/shared/money.js';
import { startTestDaemon, type TestDaemon } from './daemon.js';

export const OPENAI_KEY = 'sk-test-openai-0123456789';
export const ANTHROPIC_KEY = 'sk-ant-test-0123456789';

export interface GatewayFixture {
  d: TestDaemon;
  openai: SimUpstream;
  anthropic: SimUpstream;
  db: Db;
  close(): Promise<void>;
}

/**
 * A real daemon whose two chat providers point at simulated upstreams on loopback. The
 * sims demand agw's provider keys (OPENAI_KEY / ANTHROPIC_KEY), so a call that reaches
 * them with anything else fails. `openaiKey/anthropicKey: false` leaves that provider
 * without a key; `chunkDelayMs` spaces out the sims' stream chunks; `store` picks the
 * daemon's store (else the test matrix's).
 */
export async function startGatewayFixture(
  opts: { yaml?: string; env?: Record<string, string>; openaiKey?: boolean; anthropicKey?: boolean; chunkDelayMs?: number; store?: string } = {},
): Promise<GatewayFixture> {
  const openai = await startOpenAiSim({ apiKey: OPENAI_KEY, chunkDelayMs: opts.chunkDelayMs });
  const anthropic = await startAnthropicSim({ apiKey: ANTHROPIC_KEY, chunkDelayMs: opts.chunkDelayMs });
  const env: Record<string, string> = {
    AGW_PROVIDER_OPENAI_BASE_URL: openai.url,
    AGW_PROVIDER_ANTHROPIC_BASE_URL: anthropic.url,
    ...(opts.openaiKey === false ? {} : { AGW_PROVIDER_OPENAI_KEY: OPENAI_KEY }),
    ...(opts.anthropicKey === false ? {} : { AGW_PROVIDER_ANTHROPIC_KEY: ANTHROPIC_KEY }),
    ...opts.env,
  };
  const d = await startTestDaemon({ yaml: opts.yaml, env, store: opts.store });
  return {
    d,
    openai,
    anthropic,
    db: d.daemon.ctx.db,
    async close() {
      await d.close();
      await Promise.all([openai.close(), anthropic.close()]);
    },
  };
}

/** Customer cost in nano-USD from the catalog's raw prices x margin (no cached tokens). */
export function expectedCostNano(provider: string, model: string, prompt: number, completion: number, margin = 2): number {
  const p = findModelPrice(provider, model);
  if (!p) throw new Error(`no catalog price for ${provider}/${model}`);
  const raw = tokenCostNano(prompt, p.inputPer1M) + tokenCostNano(completion, p.outputPer1M);
  return Math.round(raw * margin);
}

export async function walletRow(db: Db, userId: string): Promise<{ balance: number; allowanceUsed: number }> {
  const r = await db.get<{ balance_nusd: number; allowance_used_nusd: number }>(
    'SELECT balance_nusd, allowance_used_nusd FROM wallets WHERE user_id = ?',
    [userId],
  );
  return { balance: Number(r!.balance_nusd), allowanceUsed: Number(r!.allowance_used_nusd) };
}

export interface TxRow {
  type: string;
  amount: number;
  provider: string | null;
  model: string | null;
  project: string | null;
  usageId: string | null;
}

export async function usageTransactions(db: Db, userId: string): Promise<TxRow[]> {
  const rows = await db.all<{ type: string; amount_nusd: number; provider_id: string | null; model: string | null; project_id: string | null; usage_id: string | null }>(
    "SELECT type, amount_nusd, provider_id, model, project_id, usage_id FROM wallet_transactions WHERE user_id = ? AND type = 'usage' ORDER BY id",
    [userId],
  );
  return rows.map((r) => ({ type: r.type, amount: Number(r.amount_nusd), provider: r.provider_id, model: r.model, project: r.project_id, usageId: r.usage_id }));
}

export interface UsageRow {
  id: string;
  status: string;
  provider: string;
  model: string | null;
  alias: string | null;
  project: string | null;
  prompt: number;
  completion: number;
  units: number;
  raw: number;
  customer: number;
  httpStatus: number | null;
  usageType: string;
  /** what agw answered, its error code, the call's hold and what was written off (nano-USD) */
  answerStatus: number | null;
  code: string | null;
  hold: number;
  writtenOff: number;
}

/** The user's records of calls that reached admission's end: finalized and failed (`refused: true` adds refused ones). */
export async function usageRecords(db: Db, userId: string, opts: { refused?: boolean } = {}): Promise<UsageRow[]> {
  const rows = await db.all<Record<string, unknown>>(
    `SELECT * FROM usage_records WHERE user_id = ?${opts.refused ? '' : " AND status <> 'refused'"} ORDER BY created_at, id`,
    [userId],
  );
  return rows.map((r) => ({
    id: String(r.id),
    status: String(r.status),
    provider: String(r.provider_id),
    model: (r.model as string | null) ?? null,
    alias: (r.alias as string | null) ?? null,
    project: (r.project_id as string | null) ?? null,
    prompt: Number(r.prompt_tokens),
    completion: Number(r.completion_tokens),
    units: Number(r.units),
    raw: Number(r.raw_cost_nusd),
    customer: Number(r.customer_cost_nusd),
    httpStatus: r.http_status === null ? null : Number(r.http_status),
    usageType: String(r.usage_type),
    answerStatus: r.answer_status === null ? null : Number(r.answer_status),
    code: (r.error_code as string | null) ?? null,
    hold: Number(r.hold_nusd),
    writtenOff: Number(r.written_off_nusd),
  }));
}

export async function quotaUsed(db: Db, userId: string, usageType = 'ai_chat'): Promise<number> {
  const r = await db.get<{ used: number }>('SELECT SUM(used) AS used FROM quota_counters WHERE user_id = ? AND usage_type = ?', [userId, usageType]);
  return Number(r?.used ?? 0);
}

/** Every header value the upstream saw, lower-cased names, as one string (to look for leaked secrets). */
export function headerDump(headers: Record<string, string | string[] | undefined>): string {
  return Object.entries(headers)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(',') : (v ?? '')}`)
    .join('\n');
}

/** Parses an SSE body into its data payloads. */
export function sseData(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6));
}
