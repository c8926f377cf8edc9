/** Path rules for bundle entries: relative POSIX paths only, no escapes, no collisions. */
import { MAX_PATH_LENGTH, MAX_SEGMENT_LENGTH, problem, type Problem } from './types.js';

// C0 controls (incl. NUL), DEL, C1 controls, and bidi overrides/isolates ("Trojan Source" names).
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;
const LONE_SURROGATE = /\p{Cs}/u;
const DRIVE = /^[A-Za-z]:/;

function describe(ch: string): string {
  return ch === '\u0000' ? 'NUL' : `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Problems of one path on its own (collisions are checked by `checkCollisions`). */
export function checkPath(path: string): Problem[] {
  if (typeof path !== 'string' || path.length === 0) {
    return [problem(String(path ?? ''), 'INVALID_PATH', 'path is empty')];
  }
  const out: Problem[] = [];
  const ctl = CONTROL.exec(path);
  if (ctl) out.push(problem(path, 'CONTROL_CHARACTER', `path contains the control character ${describe(ctl[0])}`));
  if (LONE_SURROGATE.test(path)) out.push(problem(path, 'INVALID_PATH', 'path is not valid Unicode'));
  if (path.includes('\\')) out.push(problem(path, 'BACKSLASH_PATH', 'path contains a backslash; use "/" as separator'));
  const absolute = path.startsWith('/') || path.startsWith('\\');
  if (absolute) out.push(problem(path, 'ABSOLUTE_PATH', 'path must be relative, not start with "/"'));
  if (DRIVE.test(path)) out.push(problem(path, 'ABSOLUTE_PATH', 'path must be relative, not start with a drive letter'));
  // ".." is rejected whichever separator an extractor might honour.
  if (path.split(/[/\\]/).includes('..')) {
    out.push(problem(path, 'PATH_TRAVERSAL', 'path contains a ".." segment'));
  }
  const segments = path.replace(/^\/+/, '').split('/');
  if (segments.some((s) => s === '')) {
    out.push(problem(path, 'INVALID_PATH', 'path contains an empty segment ("//" or a trailing "/")'));
  }
  if (segments.includes('.')) out.push(problem(path, 'INVALID_PATH', 'path contains a "." segment'));
  if (path.length > MAX_PATH_LENGTH) {
    out.push(problem(path, 'INVALID_PATH', `path is longer than ${MAX_PATH_LENGTH} characters`));
  } else if (segments.some((s) => s.length > MAX_SEGMENT_LENGTH)) {
    out.push(problem(path, 'INVALID_PATH', `a path segment is longer than ${MAX_SEGMENT_LENGTH} characters`));
  }
  return out;
}

/**
 * Collisions between file paths: exact or NFC-equivalent duplicates (DUPLICATE_PATH), names
 * differing only in case (CASE_COLLISION, they clash on case-insensitive file systems) and a
 * file whose path is also a directory of another file (PATH_CONFLICT).
 * Each problem names the later path and mentions the earlier one.
 */
export function checkCollisions(paths: readonly string[]): Problem[] {
  const out: Problem[] = [];
  const exact = new Map<string, string>();
  const folded = new Map<string, string>();
  const dirs = new Map<string, string>();
  for (const p of paths) {
    const nfc = p.normalize('NFC');
    const fold = nfc.toLowerCase();
    const seen = exact.get(nfc);
    if (seen !== undefined) {
      const how = seen === p ? 'appears more than once' : `is the same as "${seen}" after Unicode NFC normalization`;
      out.push(problem(p, 'DUPLICATE_PATH', `path ${how}`));
      continue;
    }
    exact.set(nfc, p);
    const other = folded.get(fold);
    if (other !== undefined) {
      out.push(problem(p, 'CASE_COLLISION', `path differs from "${other}" only in letter case`));
      continue;
    }
    folded.set(fold, p);
    const parts = fold.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (!dirs.has(dir)) dirs.set(dir, p);
    }
  }
  for (const [fold, p] of folded) {
    const under = dirs.get(fold);
    if (under !== undefined) {
      out.push(problem(p, 'PATH_CONFLICT', `path is a file but also the directory of "${under}"`));
    }
  }
  return out;
}
