import { providerSecrets, type ResolvedConfig } from './config/resolve.js';

/**
 * "Secrets never reach a caller" (the contract): every configured provider key is replaced
 * by `[redacted]` in what agw passes back from an upstream (the body of a non-2xx answer,
 * every header), in agw's own messages built from upstream text (daemon/gateway), and in
 * the request bodies the request log keeps (redact.ts).
 *
 * What counts as the secret, per key, is decided once when the redactor is built:
 *   - the key itself, URL-encoded (a query-parameter key echoed in a URL) and JSON-escaped;
 *   - its base64 (standard and URL alphabets) at each of the three byte alignments, so the
 *     key is found inside an echoed `Authorization: Basic base64(user:key)` too;
 *   - and of each of those forms, every piece of at least MIN_PIECE (8) characters: the
 *     partial echoes providers show ("sk-proj-…abcd") lose their longer part. Pieces shorter
 *     than 8 characters are left: a provider showing the last 4 characters shows nothing
 *     usable, and shorter pieces would also match ordinary text. A key shorter than 8
 *     characters is matched whole only.
 * Matching works on bytes (latin1 strings), so binary bodies pass unchanged but for the
 * replaced ranges. Pieces are found with a rolling hash over the text (a bit table in
 * front of the hash set), so a scan costs O(text length) whatever the number of keys;
 * nothing is compiled per request. 2xx bodies are never scanned (the hot path); headers
 * are, and are short (~1 µs for a typical answer's headers with 21 keys configured).
 */
export const REDACTED = '[redacted]';
export const MIN_PIECE = 8;

const BASE = 257;
const POW = (() => {
  let p = 1;
  for (let i = 1; i < MIN_PIECE; i++) p = Math.imul(p, BASE);
  return p;
})();

/** 64 Ki slots of a one-bit-per-hash prefilter: most positions of a text are rejected by one array read. */
const FILTER_BITS = 16;
const FILTER_MASK = (1 << FILTER_BITS) - 1;
const slot = (h: number): number => (h ^ (h >>> FILTER_BITS)) & FILTER_MASK;

function hashAt(s: string, from: number): number {
  let h = 0;
  for (let i = from; i < from + MIN_PIECE; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) | 0;
  return h;
}

/** The base64 characters that depend on `bytes` only, when they start at byte `offset` of a longer text. */
function base64Core(bytes: Buffer, offset: number, encoding: 'base64' | 'base64url'): string {
  const enc = Buffer.concat([Buffer.alloc(offset), bytes]).toString(encoding);
  return enc.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
}

/** Every form a secret may take in an echo, as latin1 strings of its bytes. */
export function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = new Set<string>([bytes.toString('latin1')]);
  forms.add(Buffer.from(encodeURIComponent(secret)).toString('latin1'));
  forms.add(Buffer.from(JSON.stringify(secret).slice(1, -1)).toString('latin1'));
  for (const offset of [0, 1, 2]) {
    for (const enc of ['base64', 'base64url'] as const) {
      const core = base64Core(bytes, offset, enc);
      if (core.length >= MIN_PIECE) forms.add(core);
    }
  }
  return [...forms];
}

export class SecretRedactor {
  /** every MIN_PIECE-character piece of every form of every secret, and their hashes */
  private pieces = new Set<string>();
  private hashes = new Set<number>();
  private filter = new Uint8Array(1 << FILTER_BITS);
  /** forms shorter than MIN_PIECE: matched whole */
  private short: string[] = [];
  private readonly secrets: string[];
  /**
   * Credentials derived from the configured ones while the daemon runs (a service account's
   * access token), one per slot: setting a slot replaces its secret and rebuilds the tables
   * (an access token changes about once an hour). The slot's previous secret stays in them
   * until `previousUntil` (a token refreshed before it expires is still valid, and calls
   * sent with it may still be answering); it is dropped at a later rebuild.
   */
  private readonly derived = new Map<string, { secret: string; previous?: string; previousUntil?: number }>();
  /** secrets of one call only (a request's signature), matched whole: see `with` */
  private extras?: readonly string[];

  constructor(secrets: Iterable<string>) {
    this.secrets = [...secrets].filter(Boolean);
    this.build(this.secrets);
  }

  private build(secrets: Iterable<string>): void {
    for (const secret of secrets) {
      if (!secret) continue;
      for (const form of secretForms(secret)) {
        if (form.length < MIN_PIECE) {
          if (!this.short.includes(form)) this.short.push(form);
          continue;
        }
        for (let i = 0; i + MIN_PIECE <= form.length; i++) {
          const h = hashAt(form, i);
          this.pieces.add(form.slice(i, i + MIN_PIECE));
          this.hashes.add(h);
          this.filter[slot(h)] = 1;
        }
      }
    }
  }

  /** The provider secrets of a resolved config (every key of every provider, enabled or not). */
  static fromConfig(config: ResolvedConfig): SecretRedactor {
    return new SecretRedactor(providerSecrets(config));
  }

  /**
   * Sets the derived secret of `slot`, replacing the one it had, which is still redacted
   * until `previousUntil` (epoch ms; absent: dropped at once).
   */
  setDerived(slot: string, secret: string, previousUntil?: number): void {
    const had = this.derived.get(slot);
    if (had?.secret === secret) return;
    const now = Date.now();
    this.derived.set(slot, had && previousUntil !== undefined && previousUntil > now ? { secret, previous: had.secret, previousUntil } : { secret });
    this.pieces = new Set();
    this.hashes = new Set();
    this.filter = new Uint8Array(1 << FILTER_BITS);
    this.short = [];
    this.cleanNames.clear();
    const live: string[] = [];
    for (const d of this.derived.values()) {
      live.push(d.secret);
      if (d.previous !== undefined && d.previousUntil! > now) live.push(d.previous);
    }
    this.build([...this.secrets, ...live]);
  }

  /**
   * This redactor plus secrets of one call (a request's signature), matched whole; the
   * tables are shared, not copied.
   */
  with(extras: readonly string[]): SecretRedactor {
    const r = Object.create(SecretRedactor.prototype) as SecretRedactor;
    Object.assign(r, this);
    r.extras = [...(this.extras ?? []), ...extras.filter((e) => e.length > 0)];
    return r;
  }

  get empty(): boolean {
    return this.pieces.size === 0 && this.short.length === 0 && !this.extras?.length;
  }

  /** `s` (a latin1 / header string) with every secret range replaced. */
  binary(s: string): string {
    if (this.extras?.length) {
      let out = s;
      for (const e of this.extras) out = out.split(e).join(REDACTED);
      s = out;
    }
    if (this.empty || (s.length < MIN_PIECE && !this.short.length)) return s;
    let ranges: [number, number][] = [];
    if (s.length >= MIN_PIECE && this.hashes.size) {
      const filter = this.filter;
      let h = hashAt(s, 0);
      for (let i = 0; ; i++) {
        if (filter[slot(h)] === 1 && this.hashes.has(h) && this.pieces.has(s.slice(i, i + MIN_PIECE))) {
          const last = ranges[ranges.length - 1];
          if (last && i <= last[1]) last[1] = i + MIN_PIECE;
          else ranges.push([i, i + MIN_PIECE]);
        }
        if (i + MIN_PIECE >= s.length) break;
        h = (Math.imul(h - Math.imul(s.charCodeAt(i), POW), BASE) + s.charCodeAt(i + MIN_PIECE)) | 0;
      }
    }
    if (this.short.length) {
      for (const form of this.short) {
        for (let at = s.indexOf(form); at !== -1; at = s.indexOf(form, at + form.length)) ranges.push([at, at + form.length]);
      }
      ranges = merge(ranges);
    }
    if (!ranges.length) return s;
    let out = '';
    let from = 0;
    for (const [a, b] of ranges) {
      out += s.slice(from, a) + REDACTED;
      from = b;
    }
    return out + s.slice(from);
  }

  /** A JS string (agw's own messages): matched on its UTF-8 bytes. */
  text(s: string): string {
    if (this.empty) return s;
    const bin = Buffer.from(s, 'utf8').toString('latin1');
    const out = this.binary(bin);
    return out === bin ? s : Buffer.from(out, 'latin1').toString('utf8');
  }

  buffer(b: Buffer): Buffer {
    if (this.empty) return b;
    const bin = b.toString('latin1');
    const out = this.binary(bin);
    return out === bin ? b : Buffer.from(out, 'latin1');
  }

  /** Header names found clean (a provider sends the same few names on every answer): not scanned again. */
  private readonly cleanNames = new Set<string>();

  /** True when a header name carries a secret (such a header is dropped: `[redacted]` is no valid name). */
  taints(name: string): boolean {
    if (this.extras?.some((e) => name.includes(e))) return true;
    if (this.empty || this.cleanNames.has(name)) return false;
    if (this.binary(name) !== name) return true;
    if (this.cleanNames.size < 1024) this.cleanNames.add(name);
    return false;
  }

  headerValue<V extends string | string[]>(v: V): V {
    if (this.empty) return v;
    return (typeof v === 'string' ? this.binary(v) : v.map((x) => this.binary(x))) as V;
  }
}

function merge(ranges: [number, number][]): [number, number][] {
  ranges.sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const r of ranges) {
    const last = out[out.length - 1];
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}
