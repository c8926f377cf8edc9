/**
 * `agw spend [--range 30d] [--project UID] [--by provider|project|key]`: the spend reports.
 * With a key or an OAuth login: `/api/spend/*` (agw's addition, the account's credentials);
 * with only a portal session: the spec's `/api/portal/spend/*` (session cookie).
 */
import { Api } from '../api.js';
import type { GlobalOpts } from '../auth.js';
import { UsageError } from '../errors.js';
import { usd, when } from '../format.js';
import { bold, printJson, printTable } from '../output.js';

import type { ProjectSpendT as ProjectSpend, SpendSummaryT as Summary } from '../../shared/schemas/portal-spend.js';

interface Totals { calls: number; failures?: number; rawCost: number; customerCost: number }

/** A summary row (with FAILURES); a project's report has no failures, so no such column. */
const row = (name: string, t: Totals) => [name, t.calls, t.failures ?? 0, usd(t.customerCost), usd(t.rawCost)];
const HEAD = ['', 'CALLS', 'FAILURES', 'COST', 'RAW COST'];
const projectRow = (name: string, t: Totals) => [name, t.calls, usd(t.customerCost), usd(t.rawCost)];
const PROJECT_HEAD = ['PROVIDER', 'CALLS', 'COST', 'RAW COST'];

const BY = ['provider', 'project', 'key'];

export async function spend(opts: GlobalOpts & { range?: string; project?: string; by?: string }): Promise<void> {
  const range = opts.range ?? '30d';
  const m = /^(\d{1,3})d$/.exec(range);
  if (!m || Number(m[1]) < 1 || Number(m[1]) > 365) throw new UsageError(`--range must look like 7d, 30d or 90d (at most 365d), got ${range}`);
  if (opts.by !== undefined && !BY.includes(opts.by)) throw new UsageError(`--by must be one of ${BY.join(', ')}, got ${opts.by}`);
  if (opts.by !== undefined && opts.project) throw new UsageError('--by and --project do not go together: a project’s spend is by provider');
  const api = await Api.open(opts);
  const get = <T>(path: string) => report<T>(api, path, range);
  if (opts.project) {
    const p = await get<ProjectSpend>(`/projects/${encodeURIComponent(opts.project)}`);
    if (opts.json) return printJson(p);
    process.stdout.write(`${bold(p.project.name)} (${p.project.uid}), last ${p.range.days} days since ${when(p.range.since)}\n`);
    printTable(PROJECT_HEAD, [...p.byProvider.map((x) => projectRow(x.providerId, x)), projectRow('total', p.totals)]);
    return;
  }
  const s = await get<Summary>('/summary');
  if (opts.json) return printJson(s);
  process.stdout.write(`last ${s.range.days} days since ${when(s.range.since)}\n\n`);
  const by = new Set(opts.by ? [opts.by] : ['provider', 'project']);
  const tables: (() => void)[] = [];
  if (by.has('provider')) tables.push(() => printTable(['PROVIDER', ...HEAD.slice(1)], [...s.byProvider.map((x) => row(x.providerId, x)), row('total', s.totals)]));
  if (by.has('project')) tables.push(() => printTable(['PROJECT', ...HEAD.slice(1)], s.byProject.map((x) => row(x.projectId ? `${x.projectName} (${x.projectId})` : x.projectName, x))));
  if (by.has('key')) tables.push(() => printTable(['KEY', ...HEAD.slice(1)], s.byKey.map((x) => row(x.keyName ? `${x.keyName} (${x.keyId})` : x.keyId, x))));
  tables.forEach((t, i) => {
    if (i) process.stdout.write('\n');
    t();
  });
  // skill purchases are charged too, but are not calls (older daemons do not report them)
  if (s.purchases && by.has('provider')) {
    const all = Math.round((s.totals.customerCost + s.purchases.amount) * 1e9) / 1e9;
    process.stdout.write(`\nskill purchases: ${s.purchases.count}, ${usd(s.purchases.amount)}\ncharged in all: ${usd(all)} (calls ${usd(s.totals.customerCost)} + skills ${usd(s.purchases.amount)})\n`);
  }
}

/**
 * One report. One login is enough: a key or an OAuth login reads it at `/spend` (agw's
 * addition); a portal session at the spec's `/portal/spend`. A key with limits is refused
 * at `/spend` (403): then a portal session, if there is one, reads it.
 */
async function report<T>(api: Api, path: string, range: string): Promise<T> {
  if (api.auth.bearer) {
    try {
      return await api.get<T>(`/spend${path}`, { auth: 'bearer', query: { range } });
    } catch (e) {
      if (!api.auth.session || (e as { status?: number }).status !== 403) throw e;
    }
  }
  return api.get<T>(`/portal/spend${path}`, { auth: 'session', query: { range } });
}
