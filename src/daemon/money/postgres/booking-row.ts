/**
 * A booking as it travels to PostgreSQL: the composite type agw_booking_v16 (one column
 * list, from which the field order, the start-up check and the binary encoding derive),
 * and a batch of them in PostgreSQL's binary format. The function that books a batch is
 * in postgres/book.ts. agw_booking_v7 (migration 7) is the type of the previous version,
 * still in the store for daemons of that version; `encoderOf` writes batches of it too.
 */
import { StoreOpenError } from '../../store/errors.js';
import type { Queryable } from '../../store/db.js';

/** The type a batch travels as; a change to its fields is a new type (and a new booking function). */
export const BOOKING_TYPE = 'agw_booking_v16';

/**
 * The columns of a booking as agw_book_v16 reads them (money/bookings.ts Booking, plus what
 * postgres/batches.ts adds): agw_booking_v7's, then the token classes and the dropped
 * parameters (migration 16).
 */
const BOOKING_COLUMNS = `ord int, id text, "userId" text, "keyId" text, "usageType" text, endpoint text, "providerId" text, model text,
  alias text, "projectId" text, "periodKey" text, budgets jsonb, "createdAt" bigint, status text, "httpStatus" bigint,
  "promptTokens" bigint, "completionTokens" bigint, "cachedTokens" bigint, units double precision, "rawNano" bigint,
  "customerNano" bigint, "holdNano" bigint, "writtenOffNano" bigint, "settledAt" bigint, "monthlyAllowance" bigint,
  description text, stream boolean, "answerStatus" bigint, "errorCode" text, "latencyMs" double precision,
  "ttfbMs" double precision, attempts bigint, month text, "monthStart" bigint, "leasedWallet" boolean,
  "leasedQuota" boolean, "cacheWriteTokens" bigint, "reasoningTokens" bigint, "droppedParams" text`;

/** The fields of a column list, in the type's order (no column type has a comma). */
const fieldsOf = (columns: string): readonly string[] => columns.split(',').map((c) => c.trim().split(/\s+/)[0].replace(/"/g, ''));

/** The fields of agw_booking_v16, in the type's order. */
export const BOOKING_FIELDS: readonly string[] = fieldsOf(BOOKING_COLUMNS);

/**
 * A batch's fields reach agw_booking_v16 by position (bookingRecords), so a daemon whose
 * column list is not the store's type would book one field as another: it refuses to
 * start instead. The type is created once (migration 7); a change to it is a new type.
 */
export async function checkBookingType(db: Queryable): Promise<void> {
  const rows = await db.all<{ name: string }>(
    `SELECT a.attname AS name FROM pg_attribute a
      WHERE a.attrelid = (SELECT typrelid FROM pg_type WHERE oid = to_regtype('${BOOKING_TYPE}')) AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
  );
  const store = rows.map((r) => r.name).join(', ');
  if (store !== BOOKING_FIELDS.join(', ')) {
    throw new StoreOpenError(
      'SCHEMA_MISMATCH',
      `the store's type ${BOOKING_TYPE} has the fields (${store}), this agw books (${BOOKING_FIELDS.join(', ')})`,
      'this agw build does not match the schema it finds: run the agw version that migrated the store, or report it as a bug',
    );
  }
}

/** The store's OID of a booking type (default agw_booking_v16), which a binary batch names (bookingRecords). */
export async function bookingTypeOid(db: Queryable, type = BOOKING_TYPE): Promise<number> {
  const row = await db.get<{ oid: number | string | null }>(`SELECT to_regtype('${type}')::oid AS oid`);
  if (!row?.oid) throw new StoreOpenError('SCHEMA_MISMATCH', `the store has no type ${type}`, 'run `agw serve` once to migrate the store');
  return Number(row.oid);
}

/**
 * What no PostgreSQL text or jsonb holds: NUL, and a UTF-16 surrogate without its pair
 * (JSON escapes it as \ud800, which jsonb refuses). Either would refuse a whole booking.
 */
const UNSTORABLE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A JSON.stringify replacer for what goes to jsonb: each unstorable character as U+FFFD. */
export const storableJson = (_k: string, x: unknown) => (typeof x === 'string' ? x.replace(UNSTORABLE, '\uFFFD') : x);

/** How each field of a booking type goes in PostgreSQL's binary format: its type's OID and writer. */
type Kind = 'int4' | 'int8' | 'float8' | 'bool' | 'text' | 'jsonb';
const KINDS: Record<string, Kind> = { int: 'int4', bigint: 'int8', 'double precision': 'float8', boolean: 'bool', text: 'text', jsonb: 'jsonb' };
const OIDS: Record<Kind, number> = { int4: 23, int8: 20, float8: 701, bool: 16, text: 25, jsonb: 3802 };
/** The kind of each field of a column list, in its order. */
const kindsOf = (columns: string): readonly Kind[] =>
  columns.split(',').map((c) => {
    const type = c.trim().replace(/^\S+\s+/, '');
    const kind = KINDS[type];
    if (!kind) throw new Error(`booking type: no binary writer for ${type}`);
    return kind;
  });

/** A text or jsonb field's characters (jsonb: its JSON text), a NUL as U+FFFD (a lone surrogate becomes one as UTF-8). */
function chars(v: unknown, kind: Kind): string {
  if (typeof v === 'string') return v.includes('\0') ? v.replaceAll('\0', '\uFFFD') : v;
  if (kind === 'jsonb' || typeof v === 'object') return JSON.stringify(v, storableJson);
  return typeof v === 'boolean' ? (v ? 't' : 'f') : String(v);
}

function numberOf(v: unknown, field: string, integer: boolean): number {
  if (typeof v !== 'number' || (integer && !Number.isSafeInteger(v))) {
    throw new TypeError(`booking field ${field}: ${String(v)} is not ${integer ? 'an integer' : 'a number'}`);
  }
  return v;
}

/** The scratch a batch is written into (grown as needed), then copied out. */
let scratch = Buffer.allocUnsafe(64 * 1024);
let view = new DataView(scratch.buffer, scratch.byteOffset, scratch.byteLength);

/** Room for `need` more bytes at `o`. */
function room(o: number, need: number): void {
  if (o + need <= scratch.length) return;
  const bigger = Buffer.allocUnsafe(Math.max(scratch.length * 2, o + need + 1024));
  scratch.copy(bigger, 0, 0, o);
  scratch = bigger;
  view = new DataView(scratch.buffer, scratch.byteOffset, scratch.byteLength);
}

/** Writes a string as UTF-8 at `o`; returns the bytes written. ASCII, the usual case, without a call into C++. */
function utf8(t: string, o: number): number {
  const n = t.length;
  room(o, n * 3);
  for (let i = 0; i < n; i++) {
    const c = t.charCodeAt(i);
    if (c >= 0x80) return scratch.write(t, o, 'utf8');
    scratch[o + i] = c;
  }
  return n;
}

/**
 * A batch as an agw_booking_v16[] in PostgreSQL's binary format (array_recv of record_recv):
 * PostgreSQL reads each field with its type's receive function instead of scanning text
 * character by character and unescaping it (docs/performance.md). `elementOid` is the
 * store's OID of agw_booking_v16 (bookingTypeOid). A model name or a description is the
 * caller's text: as bytes with a length, it needs no quoting. A field that does not fit
 * its column (a fraction in a bigint) throws: the booking is refused, as PostgreSQL
 * refused the same text.
 */
export const bookingRecords = encoderOf(BOOKING_COLUMNS);

/** The binary batch writer of a booking type's column list (agw_booking_v16's above; tests write agw_booking_v7's). */
export function encoderOf(columns: string): (rows: readonly Record<string, unknown>[], elementOid: number) => Buffer {
  const fields = fieldsOf(columns);
  const kinds = kindsOf(columns);
  return (rows, elementOid) => encode(rows, elementOid, fields, kinds);
}

function encode(rows: readonly Record<string, unknown>[], elementOid: number, BOOKING_FIELDS: readonly string[], BOOKING_KINDS: readonly Kind[]): Buffer {
  const n = BOOKING_FIELDS.length;
  room(0, 20);
  view.setInt32(0, 1); // one dimension
  view.setInt32(4, 0); // no NULL elements
  view.setUint32(8, elementOid);
  view.setInt32(12, rows.length);
  view.setInt32(16, 1); // lower bound
  let o = 20;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    room(o, 8 + n * 16);
    const start = o;
    view.setInt32(o + 4, n);
    o += 8; // the element's length goes at `start` once known
    for (let j = 0; j < n; j++) {
      const field = BOOKING_FIELDS[j];
      const v = r[field];
      const kind = BOOKING_KINDS[j];
      room(o, 16);
      view.setUint32(o, OIDS[kind]);
      if (v === null || v === undefined) {
        view.setInt32(o + 4, -1);
        o += 8;
        continue;
      }
      switch (kind) {
        case 'int4': {
          const x = numberOf(v, field, true);
          if (x !== (x | 0)) throw new TypeError(`booking field ${field}: ${x} is beyond a 32-bit integer`);
          view.setInt32(o + 4, 4);
          view.setInt32(o + 8, x);
          o += 12;
          break;
        }
        case 'int8': {
          const x = numberOf(v, field, true);
          const hi = Math.floor(x / 2 ** 32);
          view.setInt32(o + 4, 8);
          view.setInt32(o + 8, hi);
          view.setUint32(o + 12, x - hi * 2 ** 32);
          o += 16;
          break;
        }
        case 'float8':
          view.setInt32(o + 4, 8);
          view.setFloat64(o + 8, numberOf(v, field, false));
          o += 16;
          break;
        case 'bool':
          if (typeof v !== 'boolean') throw new TypeError(`booking field ${field}: ${String(v)} is not a boolean`);
          view.setInt32(o + 4, 1);
          scratch[o + 8] = v ? 1 : 0;
          o += 9;
          break;
        default: {
          const lenAt = o + 4;
          o += 8;
          if (kind === 'jsonb') scratch[o++] = 1; // jsonb's binary format: version 1, then the JSON text
          o += utf8(chars(v, kind), o);
          view.setInt32(lenAt, o - lenAt - 4);
        }
      }
    }
    view.setInt32(start, o - start - 4);
  }
  return Buffer.from(scratch.subarray(0, o)); // a copy: the scratch is the next batch's
}

/** The type a batch travels as (migration 16); a change to its fields is a new type. */
export const PG_BOOK_TYPE = `CREATE TYPE ${BOOKING_TYPE} AS (${BOOKING_COLUMNS});`;
