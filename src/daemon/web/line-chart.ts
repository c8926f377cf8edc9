import { escapeHtml } from './escape.js';

/**
 * A chart of a few series over the same days as server-rendered SVG (no script): one
 * polyline per series, a dot per known point with a <title> (its tooltip), a legend, and
 * the highest value in the accessible name. A missing point (null) breaks its line. The
 * portal's CSS colours `.s0`, `.s1`.
 */
export interface LineSeries {
  name: string;
  values: (number | null)[];
}

export function lineChart(opts: { id: string; labelledBy: string; labels: string[]; series: LineSeries[]; format: (v: number) => string; describe: string }): string {
  const W = 800;
  const H = 160;
  const top = 6;
  const base = H - 4;
  const all = opts.series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  const max = Math.max(0, ...all);
  const n = opts.labels.length;
  const x = (i: number) => (n <= 1 ? W / 2 : 6 + (i * (W - 12)) / (n - 1));
  const y = (v: number) => (max > 0 ? base - (v / max) * (base - top) : base);
  const lines = opts.series
    .map((s, k) => {
      const runs: string[][] = [[]];
      const dots: string[] = [];
      s.values.forEach((v, i) => {
        if (v === null) return void (runs[runs.length - 1].length && runs.push([]));
        runs[runs.length - 1].push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
        dots.push(
          `<circle class="s${k}" cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3" data-value="${v}"><title>${escapeHtml(`${opts.labels[i]} ${s.name}: ${opts.format(v)}`)}</title></circle>`,
        );
      });
      const paths = runs.filter((r) => r.length > 1).map((r) => `<polyline class="s${k}" points="${r.join(' ')}"></polyline>`);
      return paths.join('') + dots.join('');
    })
    .join('');
  const legend = opts.series.map((s, k) => `<span class="key s${k}">${escapeHtml(s.name)}</span>`).join(' ');
  return `<svg id="${opts.id}" class="chart stretch lines" role="img" aria-labelledby="${opts.labelledBy} ${opts.id}-d" viewBox="0 0 ${W} ${H}" preserveAspectRatio="none">
<desc id="${opts.id}-d">${escapeHtml(opts.describe)}, highest ${escapeHtml(opts.format(max))}</desc>
<line x1="0" x2="${W}" y1="${base}" y2="${base}"></line>${lines}</svg>
<div class="axis note"><span>${escapeHtml(opts.labels[0] ?? '')}</span><span>${legend} · highest ${escapeHtml(opts.format(max))}</span><span>${escapeHtml(opts.labels[n - 1] ?? '')}</span></div>`;
}
