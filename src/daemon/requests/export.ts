import { Readable } from 'node:stream';
import type { RequestRecordT } from '../../shared/schemas/requests.js';
import type { Queryable } from '../store/db.js';
import { eachRequest, type RequestFilter } from '../store/requests.js';
import { requestView } from './view.js';

/**
 * GET /api/requests/export: every matching record, newest first, as NDJSON (one Request
 * per line) or CSV (a header row, then one row per Request). Read a page at a time and
 * written as the client takes it (a Readable with backpressure): memory stays constant
 * however long the log.
 */
export const CSV_COLUMNS: (keyof RequestRecordT)[] = [
  'id',
  'createdAt',
  'endpoint',
  'keyId',
  'projectId',
  'provider',
  'model',
  'alias',
  'stream',
  'status',
  'code',
  'promptTokens',
  'completionTokens',
  'cachedTokens',
  'cacheWriteTokens',
  'reasoningTokens',
  'cost',
  'latencyMs',
  'ttfbMs',
  'attempts',
  'droppedParams',
];

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break; a text
 * starting with = + - @ (a spreadsheet formula) is prefixed with ' so opening the file
 * runs nothing. Numbers are written as they are.
 */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return csvField(v.join(' '));
  let s = String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function exportStream(q: Queryable, f: RequestFilter, format: 'ndjson' | 'csv', withUser: boolean): Readable {
  const columns = withUser ? [...CSV_COLUMNS, 'userId' as const] : CSV_COLUMNS;
  async function* lines(): AsyncGenerator<string> {
    if (format === 'csv') yield `${columns.join(',')}\r\n`;
    let chunk = '';
    for await (const row of eachRequest(q, f)) {
      const v = requestView(row, withUser);
      chunk += format === 'csv' ? `${columns.map((c) => csvField(v[c])).join(',')}\r\n` : `${JSON.stringify(v)}\n`;
      if (chunk.length >= 64 * 1024) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
  }
  return Readable.from(lines(), { objectMode: false });
}
