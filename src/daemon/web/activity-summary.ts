import type { RequestsDailyT } from '../../shared/schemas/requests.js';
import { barChart } from './bar-chart.js';
import { definitionNote } from './definitions.js';
import { escapeHtml } from './escape.js';
import { countData, moneyData, plural, usd } from './format.js';
import { lineChart } from './line-chart.js';

/** One model's figures over the chart range (store/requests-by-model.ts, in USD). */
export interface ModelSpend {
  provider: string;
  model: string | null;
  calls: number;
  failed: number;
  refused: number;
  promptTokens: number;
  completionTokens: number;
  cost: number;
}

export const ms = (v: number | null) => (v === null ? '–' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v).toLocaleString('en-US')} ms`);

type Day = RequestsDailyT['days'][number];

/** The Activity page's per-day section: totals (calls, failed, refused, charged), calls, failures and latency per day. */
export function perDay(daily: Day[], days: number, ranges: string): string {
  const labels = daily.map((x) => x.date);
  const t = daily.reduce((a, x) => ({ calls: a.calls + x.calls, failed: a.failed + x.failed, refused: a.refused + x.refused, cost: a.cost + x.cost }), {
    calls: 0,
    failed: 0,
    refused: 0,
    cost: 0,
  });
  const stat = (id: string, label: string, value: string) => `<div><dt>${label}</dt><dd id="${id}">${value}</dd></div>`;
  return `<section class="card wide" aria-labelledby="per-day-h">
  <h2 id="per-day-h">Per day</h2>
  <p class="toolbar">${ranges}</p>
  <dl class="stats" id="activity-totals">${stat('total-calls', 'Calls', countData(t.calls))}${stat('total-failed', 'Failed calls', countData(t.failed))}${stat('total-refused', 'Refused requests', countData(t.refused))}${stat('total-cost', 'Charged', moneyData(t.cost))}</dl>
  ${definitionNote('call-definition')}
  <h3 id="calls-h">Calls per day</h3>
  ${barChart({ id: 'calls-chart', labelledBy: 'calls-h', points: daily.map((x) => ({ label: x.date, value: x.calls })), format: (v) => plural(v, 'call'), describe: `${plural(t.calls, 'call')} in ${days} days` })}
  <h3 id="errors-h">Failed calls and refused requests per day</h3>
  ${barChart({ id: 'errors-chart', labelledBy: 'errors-h', points: daily.map((x) => ({ label: x.date, value: x.failed + x.refused })), format: (v) => plural(v, 'failure or refusal', 'failures or refusals'), describe: `${plural(t.failed, 'failed call')} and ${plural(t.refused, 'refused request')} in ${days} days` })}
  <h3 id="latency-h">Latency per day (p50, p95)</h3>
  ${lineChart({
    id: 'latency-chart',
    labelledBy: 'latency-h',
    labels,
    series: [
      { name: 'p50', values: daily.map((x) => x.latencyP50Ms) },
      { name: 'p95', values: daily.map((x) => x.latencyP95Ms) },
    ],
    format: (v) => ms(v),
    describe: `Latency of calls that reached a provider, per day`,
  })}
  <details><summary>Daily figures as a table</summary><div class="scroll"><table id="daily-table"><thead><tr><th scope="col">Day (UTC)</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Failed</th><th scope="col" class="num">Refused</th><th scope="col" class="num">p50</th><th scope="col" class="num">p95</th><th scope="col" class="num">Charged</th></tr></thead>
  <tbody>${[...daily]
    .reverse()
    .map(
      (x) =>
        `<tr><td>${x.date}</td><td class="num">${countData(x.calls)}</td><td class="num">${countData(x.failed)}</td><td class="num">${countData(x.refused)}</td><td class="num">${ms(x.latencyP50Ms)}</td><td class="num">${ms(x.latencyP95Ms)}</td><td class="num">${moneyData(x.cost)}</td></tr>`,
    )
    .join('')}</tbody></table></div></details>
</section>`;
}

/** Spend and tokens per model over the same days: a chart of what each model was charged, and the table. */
export function byModel(models: ModelSpend[], days: number): string {
  const name = (m: ModelSpend) => `${m.provider}/${m.model ?? '–'}`;
  const charged = models.filter((m) => m.cost > 0);
  const chart = charged.length
    ? barChart({
        id: 'models-chart',
        labelledBy: 'models-h',
        points: charged.map((m) => ({ label: name(m), value: m.cost })),
        format: usd,
        describe: `Charged per model in ${days} days`,
      }).replace('highest day', 'dearest model')
    : '<p class="note">Nothing was charged in these days.</p>';
  const rows = models
    .map(
      (m) => `<tr data-model="${escapeHtml(name(m))}"><td class="wrap">${escapeHtml(m.model ?? '–')}</td><td class="hide-sm">${escapeHtml(m.provider)}</td>
<td class="num">${countData(m.calls)}</td><td class="num hide-sm">${countData(m.failed)}</td><td class="num hide-sm">${countData(m.refused)}</td>
<td class="num">${countData(m.promptTokens)}</td><td class="num">${countData(m.completionTokens)}</td><td class="num">${moneyData(m.cost)}</td></tr>`,
    )
    .join('\n');
  return `<section class="card wide" aria-labelledby="models-h">
  <h2 id="models-h">By model</h2>
  ${chart}
  <div class="scroll"><table id="by-model"><caption class="sr">Spend and tokens per model, dearest first</caption><thead><tr><th scope="col">Model</th><th scope="col" class="hide-sm">Provider</th><th scope="col" class="num">Calls</th><th scope="col" class="num hide-sm">Failed</th><th scope="col" class="num hide-sm">Refused</th><th scope="col" class="num">Tokens in</th><th scope="col" class="num">Tokens out</th><th scope="col" class="num">Charged</th></tr></thead>
<tbody>${rows || '<tr><td colspan="8" class="note">No requests in these days.</td></tr>'}</tbody></table></div>
</section>`;
}
