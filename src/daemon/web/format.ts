import { escapeHtml } from './escape.js';

/**
 * Figures on server-rendered pages: shown formatted, with the exact value in a `<data>`
 * element's `value` so scripts and tests read the number, not its rendering.
 */
export function usd(v: number): string {
  const a = Math.abs(v);
  const digits = a === 0 || a >= 1 ? 2 : a >= 0.01 ? 4 : 6;
  const s = a.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return `${v < 0 ? '-' : ''}$${s}`;
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
