import type { Queryable } from './db.js';
import { where, type RequestFilter } from './requests.js';

export interface ModelRow {
  provider: string;
  model: string | null;
  /** completed at a provider ('finalized' or 'failed'), as the spend reports count calls */
  calls: number;
  failed: number;
  refused: number;
  promptTokens: number;
  completionTokens: number;
  costNano: number;
}

/**
 * The request log per (provider, model) since `since`: calls, failed, refused, tokens and
 * what was charged, dearest first (the Activity page's "By model"; a request refused before a
 * model was chosen counts under the alias or class it named). One grouped query over
 * the (user, created_at) index the log's other views use.
 */
export async function requestsByModel(q: Queryable, f: RequestFilter, since: number): Promise<ModelRow[]> {
  const w = where({ ...f, since });
  const rows = await q.all<{ provider_id: string; model: string | null; calls: number; failed: number; refused: number; pt: number; ct: number; cost: number }>(
    `SELECT provider_id, COALESCE(model, alias) AS model,
            SUM(CASE WHEN status IN ('finalized', 'failed') THEN 1 ELSE 0 END) AS calls,
            SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) AS failed,
            SUM(CASE WHEN status = 'refused' THEN 1 ELSE 0 END) AS refused,
            SUM(prompt_tokens) AS pt, SUM(completion_tokens) AS ct, SUM(customer_cost_nusd) AS cost
       FROM usage_records WHERE ${w.sql}
      GROUP BY provider_id, COALESCE(model, alias)`,
    w.params,
  );
  return rows
    .map((r) => ({
      provider: r.provider_id,
      model: r.model,
      calls: Number(r.calls ?? 0),
      failed: Number(r.failed ?? 0),
      refused: Number(r.refused ?? 0),
      promptTokens: Number(r.pt ?? 0),
      completionTokens: Number(r.ct ?? 0),
      costNano: Number(r.cost ?? 0),
    }))
    .sort((a, b) => b.costNano - a.costNano || b.calls - a.calls || `${a.provider}/${a.model}`.localeCompare(`${b.provider}/${b.model}`));
}
