/** `agw skill mine` and `agw skill stats`: a creator's skills, installs and revenue. */
import type { MySkillsT, TimeseriesT } from '../../../shared/schemas/skills.js';
import { Api } from '../../api.js';
import type { GlobalOpts } from '../../auth.js';
import { UsageError } from '../../errors.js';
import { sparkline, usd } from '../../format.js';
import { bold, dim, green, isTty, printJson, printTable } from '../../output.js';

export async function mine(opts: GlobalOpts): Promise<void> {
  const r = await (await Api.open(opts)).get<MySkillsT>('/skills/mine');
  if (opts.json) return printJson(r);
  if (r.items.length === 0) {
    process.stdout.write(`you have not published a skill yet ${dim('(agw skill init, then agw skill publish)')}\n`);
    return;
  }
  printTable(
    ['ID', 'SLUG', 'STATUS', 'VERSION', 'PRICE', 'INSTALLS', 'REVENUE'],
    r.items.map((s) => [s.id, s.slug, s.status, s.currentVersion, s.price ? usd(s.price) : 'free', s.installs, usd(s.revenue)]),
  );
}

export async function stats(opts: GlobalOpts & { days?: string }): Promise<void> {
  const days = Number(opts.days ?? 30);
  if (!Number.isInteger(days) || days < 1 || days > 365) throw new UsageError('--days must be an integer from 1 to 365');
  const r = await (await Api.open(opts)).get<TimeseriesT>('/skills/mine/timeseries', { query: { days } });
  if (opts.json) return printJson(r);
  const installs = r.series.reduce((n, d) => n + d.installs, 0);
  const revenue = r.series.reduce((n, d) => n + d.revenue, 0);
  if (isTty()) {
    const from = r.series[0]?.date ?? '';
    const to = r.series[r.series.length - 1]?.date ?? '';
    process.stdout.write(`${bold(`last ${r.days} days`)} ${dim(`${from} … ${to}`)}\n`);
    process.stdout.write(`installs  ${green(sparkline(r.series.map((d) => d.installs)))}  ${installs}\n`);
    process.stdout.write(`revenue   ${green(sparkline(r.series.map((d) => d.revenue)))}  ${usd(revenue)}\n\n`);
    const active = r.series.filter((d) => d.installs > 0 || d.revenue > 0);
    if (active.length > 0) printTable(['DATE', 'INSTALLS', 'REVENUE'], active.map((d) => [d.date, d.installs, usd(d.revenue)]));
    return;
  }
  printTable(['DATE', 'INSTALLS', 'REVENUE'], [...r.series.map((d) => [d.date, d.installs, usd(d.revenue)]), ['total', installs, usd(revenue)]]);
}
