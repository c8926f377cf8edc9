import { escapeHtml } from './escape.js';

/**
 * A bar chart as server-rendered SVG (no script, no library): one bar per point, each
 * with a <title> (its tooltip), the sum and the highest point in the accessible name. The
 * portal's CSS colours `rect.b`. An empty series draws only the base line.
 */
export interface BarPoint {
  label: string;
  value: number;
}

export function barChart(opts: { id: string; labelledBy: string; points: BarPoint[]; format: (v: number) => string; describe: string }): string {
  const W = 800;
  const H = 160;
  const top = 4;
  const base = H - 2;
  const max = Math.max(0, ...opts.points.map((p) => p.value));
  const bw = W / Math.max(opts.points.length, 1);
  const bars = opts.points
    .map((p, i) => {
      const h = max > 0 ? (p.value / max) * (base - top) : 0;
      const x = (i * bw + bw * 0.1).toFixed(2);
      return `<rect class="b" x="${x}" y="${(base - h).toFixed(2)}" width="${Math.max(bw * 0.8, 0.6).toFixed(2)}" height="${h.toFixed(2)}" data-value="${p.value}"><title>${escapeHtml(`${p.label}: ${opts.format(p.value)}`)}</title></rect>`;
    })
    .join('');
  const first = opts.points[0]?.label ?? '';
  const last = opts.points[opts.points.length - 1]?.label ?? '';
  return `<svg id="${opts.id}" class="chart stretch" role="img" aria-labelledby="${opts.labelledBy} ${opts.id}-d" viewBox="0 0 ${W} ${H}" preserveAspectRatio="none">
<desc id="${opts.id}-d">${escapeHtml(opts.describe)}, highest day ${escapeHtml(opts.format(max))}</desc>
<line x1="0" x2="${W}" y1="${base}" y2="${base}"></line>${bars}</svg>
<div class="axis note"><span>${escapeHtml(first)}</span><span>highest ${escapeHtml(opts.format(max))}</span><span>${escapeHtml(last)}</span></div>`;
}
