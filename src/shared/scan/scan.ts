/**
 * The scanner: runs the rules of rules.ts over a skill's files and reports findings
 * `{rule, severity, path, line, message}` (`line` 1-based, null for a finding about the whole
 * file or its name). A file is text when its first 8 KiB hold no NUL byte and all of it is
 * valid UTF-8; the text rules read only text files, the magic-number rules every file.
 */
import { byPathBytes } from '../bundle/digest.js';
import { SCAN_RULES, type ScanRule, type Severity, type Signature } from './rules.js';
import { encodedRuns } from './runs.js';

export interface Finding {
  rule: string;
  severity: Severity;
  path: string;
  line: number | null;
  message: string;
}

/** Findings of one rule in one file beyond this many are summed up in one last finding. */
export const MAX_FINDINGS_PER_RULE_AND_FILE = 20;
/** Matches of one pattern in one file looked at, at most (a hostile file can hold millions). */
const MAX_MATCHES = 100_000;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The file's text, or null for a binary file. */
export function textOf(data: Uint8Array): string | null {
  const head = data.subarray(0, 8192);
  if (head.includes(0)) return null;
  try {
    return utf8.decode(data).replace(/^\uFEFF/, ''); // a byte order mark at the start is not hidden text
  } catch {
    return null;
  }
}

/** Invisible and control characters shown as <U+XXXX>; cut to `max` characters. */
export function excerpt(s: string, max = 80): string {
  const shown = s.replace(/[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]|[\u{E0000}-\u{E007F}]/gu, (c) => `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`);
  return shown.length > max ? `${shown.slice(0, max - 1)}…` : shown;
}

/** 1-based line of a string index (line starts computed once per file, on first use). */
class Lines {
  private starts: number[] | null = null;
  constructor(private readonly text: string) {}
  at(index: number): number {
    if (!this.starts) {
      this.starts = [0];
      for (let i = this.text.indexOf('\n'); i >= 0; i = this.text.indexOf('\n', i + 1)) this.starts.push(i + 1);
    }
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }
}

interface Hit {
  index: number;
  text: string;
}

interface Hits {
  hits: Hit[];
  /** More matches than MAX_MATCHES: the rest were not looked at. */
  truncated: boolean;
}

/** The matches of the patterns in `text` (at most MAX_MATCHES each); kept per pattern for the file (two rules share the credential patterns). */
function hits(text: string, patterns: readonly RegExp[], memo?: Map<RegExp, Hits>): Hits {
  const all: Hits = { hits: [], truncated: false };
  for (const p of patterns) {
    let found = memo?.get(p);
    if (!found) {
      found = { hits: [], truncated: false };
      for (const m of text.matchAll(p)) {
        if (found.hits.length >= MAX_MATCHES) {
          found.truncated = true;
          break;
        }
        found.hits.push({ index: m.index ?? 0, text: m[0] });
      }
      memo?.set(p, found);
    }
    for (const h of found.hits) all.hits.push(h);
    all.truncated ||= found.truncated;
  }
  return all;
}

/** A finding before its message is written (most are dropped by the cap, so theirs never is). */
interface Raw {
  line: number | null;
  message: () => string;
}

const sigMatches = (data: Uint8Array, s: Signature) => {
  const at = s.offset ?? 0;
  return data.length >= at + s.bytes.length && s.bytes.every((b, i) => data[at + i] === b) && (!s.confirm || s.confirm(data));
};

/** Findings of one rule in one file, one per line, capped (the cap's last finding says how many more there were). */
function capped(rule: ScanRule, path: string, found: { raws: Raw[]; truncated: boolean }): Finding[] {
  const byLine = new Map<number, Raw>();
  const whole: Raw[] = [];
  for (const r of found.raws) {
    if (r.line === null) whole.push(r);
    else if (!byLine.has(r.line)) byLine.set(r.line, r);
  }
  const seen = new Set<string>();
  const unique = [
    ...whole.map((r) => ({ line: null, message: r.message() })).filter((f) => !seen.has(f.message) && (seen.add(f.message), true)),
    ...[...byLine.values()].sort((a, b) => a.line! - b.line!),
  ];
  const out: Finding[] = unique.slice(0, MAX_FINDINGS_PER_RULE_AND_FILE).map((f) => ({
    rule: rule.id, severity: rule.severity, path, line: f.line, message: typeof f.message === 'string' ? f.message : f.message(),
  }));
  const more = unique.length - MAX_FINDINGS_PER_RULE_AND_FILE;
  if (more > 0 || found.truncated) {
    const next = unique[MAX_FINDINGS_PER_RULE_AND_FILE] ?? unique[unique.length - 1];
    const count = found.truncated ? `at least ${Math.max(more, 1)}` : String(more);
    out.push({ rule: rule.id, severity: rule.severity, path, line: next.line, message: `… and ${count} more like this in this file` });
  }
  return out;
}

/** The base64 alphabet with `=`, by char code (a line mostly of these is ENCODED_BLOB's, not minified code). */
const B64 = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-') B64[c.charCodeAt(0)] = 1;

/** Long lines counted character by character (no array of matches per line: a line can be 5 MiB). */
function longLines(text: string, minLength: number, maxSpaceRatio: number): { line: number; count: number; length: number } | null {
  let first: { line: number; length: number } | null = null;
  let count = 0;
  let lineNo = 0;
  for (let start = 0; start <= text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    lineNo++;
    const length = end - start;
    if (length >= minLength) {
      let b64 = 0;
      let blanks = 0;
      for (let i = start; i < end; i++) {
        const c = text.charCodeAt(i);
        if (c < 128 && B64[c] === 1) b64++;
        else if (c === 32 || c === 9) blanks++;
      }
      if (b64 < length * 0.9 && blanks < length * maxSpaceRatio) {
        count++;
        first ??= { line: lineNo, length };
      }
    }
    start = end + 1;
  }
  return first ? { ...first, count } : null;
}

/** What a finding quotes: a long match itself, a short one (an invisible character, "| sh") with up to 50 characters before and 30 after it on its line. */
function context(text: string, h: Hit): string {
  if (h.text.length >= 24) return h.text.slice(0, 80);
  const from = Math.max(0, h.index - 50);
  const to = Math.min(text.length, h.index + h.text.length + 30);
  const before = text.slice(from, h.index);
  const after = text.slice(h.index + h.text.length, to);
  const cut = after.indexOf('\n');
  return before.slice(before.lastIndexOf('\n') + 1) + h.text + (cut < 0 ? after : after.slice(0, cut));
}

/** What one rule finds in one file. */
function runRule(rule: ScanRule, path: string, data: Uint8Array, text: string | null, lines: Lines | null, memo: Map<RegExp, Hits>): { raws: Raw[]; truncated: boolean } {
  const m = rule.match;
  const quote = (s: string) => `"${excerpt(s.trim())}"`;
  const none = { raws: [], truncated: false };
  const inText = (found: Hits) => ({
    raws: found.hits.map((h) => ({ line: lines!.at(h.index), message: () => `${rule.says}: ${quote(context(text!, h))}` })),
    truncated: found.truncated,
  });
  switch (m.kind) {
    case 'magic': {
      const sig = m.signatures.find((s) => sigMatches(data, s));
      return sig ? { raws: [{ line: null, message: () => `${rule.says}: the file is ${sig.label}` }], truncated: false } : none;
    }
    case 'longLines': {
      const long = text === null ? null : longLines(text, m.minLength, m.maxSpaceRatio);
      if (!long) return none;
      const others = long.count > 1 ? ` (and ${long.count - 1} more such line${long.count === 2 ? '' : 's'})` : '';
      return { raws: [{ line: long.line, message: () => `${rule.says}: a ${long.length}-character line with almost no blanks${others}` }], truncated: false };
    }
    case 'text': {
      const named: Raw[] = m.paths && hits(path, m.patterns).hits.length > 0 ? [{ line: null, message: () => `${rule.says}, in the file name: ${quote(path)}` }] : [];
      if (text === null || !lines || (m.hint && !m.hint.test(text))) return { raws: named, truncated: false };
      const found = inText(hits(text, m.patterns, memo));
      return { raws: [...named, ...found.raws], truncated: found.truncated };
    }
    case 'runs': {
      if (text === null || !lines) return none;
      const { runs, truncated } = encodedRuns(text, m.limits, MAX_MATCHES);
      return { raws: inText({ hits: runs, truncated }).raws, truncated };
    }
    case 'together': {
      if (text === null || !lines || (m.hint && !m.hint.test(text))) return none;
      const sends = m.with.some((p) => p.test(text));
      if (sends === !!m.absent) return none;
      return inText(hits(text, m.patterns, memo));
    }
  }
}

/** Every finding of every rule in one file, in line order. */
export function scanFile(path: string, data: Uint8Array): Finding[] {
  const text = textOf(data);
  const lines = text === null ? null : new Lines(text);
  const out: Finding[] = [];
  const memo = new Map<RegExp, Hits>();
  for (const rule of SCAN_RULES) out.push(...capped(rule, path, runRule(rule, path, data, text, lines, memo)));
  const order = new Map(SCAN_RULES.map((r, i) => [r.id, i]));
  return out.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || order.get(a.rule)! - order.get(b.rule)!);
}

/** Findings of a whole bundle held in memory, files in path order. */
export function scanBundle(files: readonly { path: string; content: Uint8Array }[]): Finding[] {
  return [...files].sort((a, b) => byPathBytes(a.path, b.path)).flatMap((f) => scanFile(f.path, f.content));
}

export const hasErrors = (findings: readonly Finding[]) => findings.some((f) => f.severity === 'error');
