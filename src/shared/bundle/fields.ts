/**
 * The Agent Skills specification's optional front-matter fields (`license`, `compatibility`,
 * `metadata`, `allowed-tools`), unknown top-level keys (warnings with a did-you-mean), and
 * the guidance the specification gives as "should" (warnings): a SKILL.md body under 500
 * lines, a folder named after the skill, and a description that is not the template's.
 */
import { SKILL_MD, problem, type Position, type Problem } from './types.js';

/** Every top-level front-matter field the specification defines. */
export const SKILL_FIELDS = ['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'] as const;
export const COMPATIBILITY_MAX_LENGTH = 500;
/** The specification: "Keep your main SKILL.md under 500 lines." */
export const BODY_MAX_LINES = 500;
/** The description `agw skill init` writes (templates/skill/SKILL.md); a placeholder, never a real one. */
export const TEMPLATE_DESCRIPTION =
  'Describe what this skill does and when an agent should use it, in one or two sentences (at most 1024 characters).';

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The known name `key` was most likely meant to be (case and `_`/`-` ignored, a few typos), or null. */
export function didYouMean(key: string, known: readonly string[]): string | null {
  const norm = (s: string) => s.toLowerCase().replace(/_/g, '-');
  let best: { name: string; d: number } | null = null;
  for (const name of known) {
    const d = editDistance(norm(key), name);
    if (d <= Math.max(2, Math.floor(name.length / 4)) && (!best || d < best.d)) best = { name, d };
  }
  return best?.name ?? null;
}

/** Problems (errors) and warnings of the optional fields and unknown keys. */
export function checkFields(
  data: Record<string, unknown>,
  keys: Readonly<Record<string, Position>> = {},
  path = SKILL_MD,
): { problems: Problem[]; warnings: Problem[] } {
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  const has = (k: string) => Object.prototype.hasOwnProperty.call(data, k);

  if (has('license') && (typeof data.license !== 'string' || data.license.trim() === '')) {
    problems.push(problem(path, 'INVALID_LICENSE', '"license" must be a non-empty string (a license name or a bundled file, e.g. MIT)', keys.license));
  }
  if (has('compatibility')) {
    const c = data.compatibility;
    const len = typeof c === 'string' ? [...c].length : 0;
    if (typeof c !== 'string' || c.trim() === '') {
      problems.push(problem(path, 'INVALID_COMPATIBILITY', '"compatibility" must be a non-empty string (leave it out when the skill has no special needs)', keys.compatibility));
    } else if (len > COMPATIBILITY_MAX_LENGTH) {
      problems.push(problem(path, 'INVALID_COMPATIBILITY', `"compatibility" has ${len} characters, at most ${COMPATIBILITY_MAX_LENGTH} allowed`, keys.compatibility));
    }
  }
  if (has('metadata')) {
    const m = data.metadata;
    if (!isMapping(m)) {
      problems.push(problem(path, 'INVALID_METADATA', '"metadata" must be a mapping of string keys to string values', keys.metadata));
    } else {
      const nested = Object.keys(m).filter((k) => m[k] !== null && typeof m[k] === 'object');
      const loose = Object.keys(m).filter((k) => m[k] === null || (typeof m[k] !== 'string' && typeof m[k] !== 'object'));
      if (nested.length > 0) {
        warnings.push(problem(path, 'METADATA_NOT_STRING', `"metadata" values should be strings; ${nested.join(', ')} ${nested.length === 1 ? 'is a list or mapping' : 'are lists or mappings'}`, keys.metadata));
      }
      if (loose.length > 0) {
        warnings.push(problem(path, 'METADATA_NOT_STRING', `"metadata" values should be strings; quote the value of ${loose.join(', ')} (e.g. version: "1.0", as YAML reads 1.0 as the number 1)`, keys.metadata));
      }
    }
  }
  if (has('allowed-tools')) {
    const t = data['allowed-tools'];
    const ok = typeof t === 'string' ? t.trim() !== '' : Array.isArray(t) && t.length > 0 && t.every((x) => typeof x === 'string' && x.trim() !== '');
    if (!ok) {
      problems.push(problem(path, 'INVALID_ALLOWED_TOOLS', '"allowed-tools" must be a space-delimited string or a list of strings, e.g. "Bash(git:*) Read"', keys['allowed-tools']));
    } else if (Array.isArray(t)) {
      // the specification: "a space-delimited list" in one string; Claude Code also reads a YAML list
      warnings.push(problem(path, 'ALLOWED_TOOLS_LIST', `"allowed-tools" is a YAML list; the specification asks for one space-delimited string ("${(t as string[]).join(' ').slice(0, 60)}"): Claude Code reads either, other agents may read only the string`, keys['allowed-tools']));
    }
  }
  for (const key of Object.keys(data)) {
    if ((SKILL_FIELDS as readonly string[]).includes(key)) continue;
    const guess = didYouMean(key, SKILL_FIELDS);
    const hint = guess ? `; did you mean "${guess}"?` : `; the specification defines ${SKILL_FIELDS.join(', ')} (put your own under "metadata")`;
    warnings.push(problem(path, 'UNKNOWN_FIELD', `unknown front-matter field "${key}"${hint}`, keys[key]));
  }
  return { problems, warnings };
}

/** The "should" rules of the specification and of agw, as warnings. */
export function checkGuidance(
  fm: { data: Record<string, unknown>; body: string; keys: Readonly<Record<string, Position>>; bodyLine: number },
  dirName: string | undefined,
  path = SKILL_MD,
): Problem[] {
  const warnings: Problem[] = [];
  const lines = fm.body.replace(/\r?\n$/, '').split(/\r?\n/).length;
  if (lines > BODY_MAX_LINES) {
    warnings.push(problem(path, 'BODY_TOO_LONG', `the body has ${lines} lines; keep SKILL.md under ${BODY_MAX_LINES} lines and move detail into referenced files (references/)`, { line: fm.bodyLine + BODY_MAX_LINES, column: 1 }));
  }
  if (typeof fm.data.description === 'string' && fm.data.description.trim() === TEMPLATE_DESCRIPTION) {
    warnings.push(problem(path, 'PLACEHOLDER_DESCRIPTION', 'the description is still the template\'s placeholder; say what the skill does and when an agent should use it', fm.keys.description));
  }
  if (dirName !== undefined && typeof fm.data.name === 'string' && dirName !== fm.data.name) {
    warnings.push(problem(path, 'NAME_DIRECTORY_MISMATCH', `the folder is named "${dirName}" but the skill "${fm.data.name}"; agents expect the folder to be named after the skill (agw skill install names it so)`, fm.keys.name));
  }
  return warnings;
}
