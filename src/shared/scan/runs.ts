/**
 * Long encoded runs found by counting, not by a regular expression: `[A-Za-z0-9+/_-]{256,}`
 * tried at every start of a 5 MiB file of 255-character runs reads each run 255 times (5 s
 * on one file); one pass that counts run lengths reads every character once. The finds are
 * the regexes' own: maximal runs of the base64/base64url/hex alphabet of `base64` characters
 * or more (with up to two `=` after), `escapes` or more `\xNN` (or `\uNNNN`) in a row,
 * `percent` or more `%NN` in a row; each kind at most `max` times.
 */
export interface Run {
  index: number;
  text: string;
}

export interface RunLimits {
  base64: number;
  escapes: number;
  percent: number;
}

/** The base64, base64url and hex alphabet (A-Z a-z 0-9 + / _ -), by char code. */
const B64 = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-') B64[c.charCodeAt(0)] = 1;

const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
const EQ = 61;
const BACKSLASH = 92;
const X = 120;
const U = 117;

function base64Runs(text: string, min: number, max: number, out: Run[]): boolean {
  const n = text.length;
  let start = -1;
  let found = 0;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? text.charCodeAt(i) : 0;
    if (c < 128 && B64[c] === 1) {
      if (start < 0) start = i;
      continue;
    }
    if (start >= 0 && i - start >= min) {
      let end = i;
      while (end < n && end - i < 2 && text.charCodeAt(end) === EQ) end++;
      if (found++ >= max) return true;
      out.push({ index: start, text: text.slice(start, end) });
    }
    start = -1;
  }
  return false;
}

/** How many groups of a backslash, `lead` and `hex` hex digits follow in a row from `at`. */
function groupsAt(text: string, at: number, lead: number, hex: number): number {
  const size = 2 + hex;
  let k = 0;
  for (let p = at; p + size <= text.length && text.charCodeAt(p) === BACKSLASH && text.charCodeAt(p + 1) === lead; p += size) {
    let ok = true;
    for (let j = 2; j < size; j++) if (!isHex(text.charCodeAt(p + j))) ok = false;
    if (!ok) break;
    k++;
  }
  return k;
}

function escapeRuns(text: string, min: number, max: number, out: Run[]): boolean {
  let found = 0;
  for (let i = text.indexOf('\\'); i >= 0; ) {
    const next = text.charCodeAt(i + 1);
    const hex = next === X ? 2 : next === U ? 4 : 0;
    const k = hex ? groupsAt(text, i, next, hex) : 0;
    const len = k * (2 + hex);
    if (k >= min) {
      if (found++ >= max) return true;
      out.push({ index: i, text: text.slice(i, i + len) });
    }
    i = text.indexOf('\\', i + Math.max(1, len));
  }
  return false;
}

function percentRuns(text: string, min: number, max: number, out: Run[]): boolean {
  let found = 0;
  for (let i = text.indexOf('%'); i >= 0; ) {
    let p = i;
    while (p + 3 <= text.length && text.charCodeAt(p) === 37 && isHex(text.charCodeAt(p + 1)) && isHex(text.charCodeAt(p + 2))) p += 3;
    const k = (p - i) / 3;
    if (k >= min) {
      if (found++ >= max) return true;
      out.push({ index: i, text: text.slice(i, p) });
    }
    i = text.indexOf('%', Math.max(i + 1, p));
  }
  return false;
}

/** The runs, base64 first, then escapes, then percent-escapes; `truncated` when a kind had more than `max`. */
export function encodedRuns(text: string, limits: RunLimits, max: number): { runs: Run[]; truncated: boolean } {
  const runs: Run[] = [];
  let truncated = base64Runs(text, limits.base64, max, runs);
  truncated = escapeRuns(text, limits.escapes, max, runs) || truncated;
  truncated = percentRuns(text, limits.percent, max, runs) || truncated;
  return { runs, truncated };
}
