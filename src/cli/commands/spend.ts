/** `agw spend [--range 30d] [--project UID]`: the portal spend reports (session cookie only, by spec). */
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

export async function spend(opts: GlobalOpts & { range?: string; project?: string }): Promise<void> {
  const range = opts.range ?? '30d';
  const m = /^(\d{1,3})d$/.exec(range);
  if (!m || Number(m[1]) < 1 || Number(m[1]) > 365) throw new UsageError(`--range must look like 7d, 30d or 90d (at most 365d), got ${range}`);
  const api = await Api.open(opts);
  if (opts.project) {
    const p = await api.get<ProjectSpend>(`/portal/spend/projects/${encodeURIComponent(opts.project)}`, { auth: 'session', query: { range } });
    if (opts.json) return printJson(p);
    process.stdout.write(`${bold(p.project.name)} (${p.project.uid}), last ${p.range.days} days since ${when(p.range.since)}\n`);
    printTable(PROJECT_HEAD, [...p.byProvider.map((x) => projectRow(x.providerId, x)), projectRow('total', p.totals)]);
    return;
  }
  const s = await api.get<Summary>('/portal/spend/summary', { auth: 'session', query: { range } });
  if (opts.json) return printJson(s);
  process.stdout.write(`last ${s.range.days} days since ${when(s.range.since)}\n\n`);
  printTable(['PROVIDER', ...HEAD.slice(1)], [...s.byProvider.map((x) => row(x.providerId, x)), row('total', s.totals)]);
  process.stdout.write('\n');
  printTable(['PROJECT', ...HEAD.slice(1)], s.byProject.map((x) => row(x.projectId ? `${x.projectName} (${x.projectId})` : x.projectName, x)));
  // skill purchases are charged too, but are not calls (older daemons do not report them)
  if (s.purchases) {
    const all = Math.round((s.totals.customerCost + s.purchases.amount) * 1e9) / 1e9;
    process.stdout.write(`\nskill purchases: ${s.purchases.count}, ${usd(s.purchases.amount)}\ncharged in all: ${usd(all)} (calls ${usd(s.totals.customerCost)} + skills ${usd(s.purchases.amount)})\n`);
  }
}
