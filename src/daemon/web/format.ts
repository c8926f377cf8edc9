import { formatUsd } from '../../shared/format.js';
import { escapeHtml } from './escape.js';

/**
 * Figures on server-rendered pages: shown formatted, with the exact value in a `<data>`
 * element's `value` so scripts and tests read the number, not its rendering.
 */
/** Money as every page and the CLI show it (src/shared/format.ts; the dashboard's script embeds the same function). */
export function usd(v: number): string {
  return formatUsd(v);
}

export function moneyData(v: number): string {
  return `<data value="${v}">${usd(v)}</data>`;
}

export function countData(v: number): string {
  return `<data value="${v}">${v.toLocaleString('en-US')}</data>`;
}

export function price(v: number): string {
  return v === 0 ? '<data value="0">Free</data>' : moneyData(v);
}

/** An ISO timestamp as a `<time>` showing its UTC day. */
export function day(iso: string): string {
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(iso.slice(0, 10))}</time>`;
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
