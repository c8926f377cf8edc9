/**
 * The scanner: runs the rules of rules.ts over a skill's files and reports findings
 * `{rule, severity, path, line, message}` (`line` 1-based, null for a finding about the whole
 * file or its name). A file is text when its first 8 KiB hold no NUL byte and all of it is
 * valid UTF-8; the text rules read only text files, the magic-number rules every file.
 */
import { byPathBytes } from '../bundle/digest.js';
import { SCAN_RULES, type ScanRule, type Severity, type Signature } from './rules.js';

export interface Finding {
  rule: string;
  severity: Severity;
  path: string;
  line: number | null;
  message: string;
}

/** Findings of one rule in one file beyond this many are summed up in one last finding. */
export const MAX_FINDINGS_PER_RULE_AND_FILE = 20;

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

/** Every match of the patterns in `text`; a pattern's matches are kept for the file (two rules share the credential patterns). */
function hits(text: string, patterns: readonly RegExp[], memo?: Map<RegExp, Hit[]>): Hit[] {
  return patterns.flatMap((p) => {
    let found = memo?.get(p);
    if (!found) {
      found = [...text.matchAll(p)].map((m) => ({ index: m.index ?? 0, text: m[0] }));
      memo?.set(p, found);
    }
    return found;
  });
}

const sigMatches = (data: Uint8Array, s: Signature) => {
  const at = s.offset ?? 0;
  return data.length >= at + s.bytes.length && s.bytes.every((b, i) => data[at + i] === b) && (!s.confirm || s.confirm(data));
};

/** Findings of one rule in one file, capped (the cap's last finding says how many more there were). */
function capped(rule: ScanRule, path: string, found: { line: number | null; message: string }[]): Finding[] {
  const seen = new Set<string>();
  const unique = found.filter((f) => {
    const key = f.line === null ? `-\u0000${f.message}` : String(f.line); // one finding of a rule per line
    return !seen.has(key) && (seen.add(key), true);
  });
  unique.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  const out = unique.slice(0, MAX_FINDINGS_PER_RULE_AND_FILE).map((f) => ({ rule: rule.id, severity: rule.severity, path, ...f }));
  const more = unique.length - MAX_FINDINGS_PER_RULE_AND_FILE;
  if (more > 0) {
    out.push({ rule: rule.id, severity: rule.severity, path, line: unique[MAX_FINDINGS_PER_RULE_AND_FILE].line, message: `… and ${more} more like this in this file` });
  }
  return out;
}

const looksBase64 = (line: string) => (line.match(/[A-Za-z0-9+/=_-]/g)?.length ?? 0) >= line.length * 0.9;

function longLines(text: string, minLength: number, maxSpaceRatio: number): { line: number; count: number; length: number } | null {
  let first: { line: number; length: number } | null = null;
  let count = 0;
  let lineNo = 0;
  for (const line of text.split('\n')) {
    lineNo++;
    if (line.length < minLength || looksBase64(line)) continue;
    const blanks = line.match(/[ \t]/g)?.length ?? 0;
    if (blanks >= line.length * maxSpaceRatio) continue;
    count++;
    first ??= { line: lineNo, length: line.length };
  }
  return first ? { ...first, count } : null;
}

/** What a finding quotes: a long match itself, a short one (an invisible character, "| sh") with the text around it on its line. */
function context(text: string, h: Hit): string {
  if (h.text.length >= 24) return h.text.slice(0, 80);
  const start = Math.max(0, text.lastIndexOf('\n', h.index) + 1, h.index - 50);
  const end = text.indexOf('\n', h.index + h.text.length);
  return text.slice(start, Math.min(end < 0 ? text.length : end, h.index + h.text.length + 30));
}

/** What one rule finds in one file. */
function runRule(rule: ScanRule, path: string, data: Uint8Array, text: string | null, lines: Lines | null, memo: Map<RegExp, Hit[]>): { line: number | null; message: string }[] {
  const m = rule.match;
  const quote = (s: string) => `"${excerpt(s.trim())}"`;
  switch (m.kind) {
    case 'magic': {
      const sig = m.signatures.find((s) => sigMatches(data, s));
      return sig ? [{ line: null, message: `${rule.says}: the file is ${sig.label}` }] : [];
    }
    case 'longLines': {
      const long = text === null ? null : longLines(text, m.minLength, m.maxSpaceRatio);
      if (!long) return [];
      const others = long.count > 1 ? ` (and ${long.count - 1} more such line${long.count === 2 ? '' : 's'})` : '';
      return [{ line: long.line, message: `${rule.says}: a ${long.length}-character line with almost no blanks${others}` }];
    }
    case 'text': {
      const out: { line: number | null; message: string }[] = [];
      if (m.paths) for (const h of hits(path, m.patterns)) out.push({ line: null, message: `${rule.says}, in the file name: ${quote(path)}` });
      if (text === null || !lines || (m.hint && !m.hint.test(text))) return out;
      for (const h of hits(text, m.patterns, memo)) out.push({ line: lines.at(h.index), message: `${rule.says}: ${quote(context(text, h))}` });
      return out;
    }
    case 'together': {
      if (text === null || !lines || (m.hint && !m.hint.test(text))) return [];
      const sends = m.with.some((p) => p.test(text));
      if (sends === !!m.absent) return [];
      return hits(text, m.patterns, memo).map((h) => ({ line: lines.at(h.index), message: `${rule.says}: ${quote(context(text, h))}` }));
    }
  }
}

/** Every finding of every rule in one file, in line order. */
export function scanFile(path: string, data: Uint8Array): Finding[] {
  const text = textOf(data);
  const lines = text === null ? null : new Lines(text);
  const out: Finding[] = [];
  const memo = new Map<RegExp, Hit[]>();
  for (const rule of SCAN_RULES) out.push(...capped(rule, path, runRule(rule, path, data, text, lines, memo)));
  const order = new Map(SCAN_RULES.map((r, i) => [r.id, i]));
  return out.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || order.get(a.rule)! - order.get(b.rule)!);
}

/** Findings of a whole bundle held in memory, files in path order. */
export function scanBundle(files: readonly { path: string; content: Uint8Array }[]): Finding[] {
  return [...files].sort((a, b) => byPathBytes(a.path, b.path)).flatMap((f) => scanFile(f.path, f.content));
}

export const hasErrors = (findings: readonly Finding[]) => findings.some((f) => f.severity === 'error');
