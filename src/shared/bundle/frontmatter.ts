/**
 * SKILL.md front matter: YAML only (the `yaml` package, core schema, no custom tags, nothing
 * executed), then the Agent Skills rules for `name` and `description`.
 */
import { LineCounter, isMap, isScalar, parseDocument, visit } from 'yaml';
import { SKILL_MD, problem, type Position, type Problem } from './types.js';

/** Agent Skills: name is 1-64 chars of a-z, 0-9 and single inner hyphens. */
export const SKILL_NAME_MAX_LENGTH = 64;
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** Agent Skills: description is non-empty and at most 1024 characters. */
export const SKILL_DESCRIPTION_MAX_LENGTH = 1024;
/** Front matter is metadata: keep it small and shallow so the YAML parser never runs deep. */
export const FRONT_MATTER_MAX_BYTES = 64 * 1024;
export const FRONT_MATTER_MAX_DEPTH = 32;

export interface SkillMeta {
  name: string;
  description: string;
}

type Verdict = { rule: 'MISSING_NAME' | 'INVALID_NAME' | 'MISSING_DESCRIPTION' | 'INVALID_DESCRIPTION' | 'DESCRIPTION_TOO_LONG'; message: string } | null;

/** Why `name` is not a valid skill name (the marketplace derives the slug from it), or null. */
export function checkSkillName(name: unknown): Verdict {
  if (name === undefined || name === null || (typeof name === 'string' && name.trim() === '')) {
    return { rule: 'MISSING_NAME', message: 'front matter needs a non-empty "name"' };
  }
  if (typeof name !== 'string') return { rule: 'INVALID_NAME', message: '"name" must be a string' };
  const shown = name.length > 80 ? `${name.slice(0, 77)}...` : name;
  const bad = (why: string): Verdict => ({ rule: 'INVALID_NAME', message: `name "${shown}" ${why}` });
  if ([...name].length > SKILL_NAME_MAX_LENGTH) return bad(`is longer than ${SKILL_NAME_MAX_LENGTH} characters`);
  if (name !== name.toLowerCase()) return bad('must be lowercase');
  if (name.startsWith('-') || name.endsWith('-')) return bad('must not start or end with a hyphen');
  if (name.includes('--')) return bad('must not contain consecutive hyphens');
  if (!SKILL_NAME_PATTERN.test(name)) return bad('may only contain lowercase letters a-z, digits and hyphens');
  return null;
}

export function isValidSkillName(name: unknown): name is string {
  return checkSkillName(name) === null;
}

/** Why `description` is not a valid skill description, or null. Length counts code points. */
export function checkSkillDescription(description: unknown): Verdict {
  if (description === undefined || description === null || (typeof description === 'string' && description.trim() === '')) {
    return { rule: 'MISSING_DESCRIPTION', message: 'front matter needs a non-empty "description"' };
  }
  if (typeof description !== 'string') return { rule: 'INVALID_DESCRIPTION', message: '"description" must be a string' };
  const len = [...description].length;
  if (len > SKILL_DESCRIPTION_MAX_LENGTH) {
    return { rule: 'DESCRIPTION_TOO_LONG', message: `description has ${len} characters, at most ${SKILL_DESCRIPTION_MAX_LENGTH} allowed` };
  }
  return null;
}

/**
 * Name and description rules on parsed front matter; `meta` when both are valid. `keys`
 * (from parseFrontMatter) places a problem on its key's line; a missing key is placed on
 * the front matter's opening line.
 */
export function checkSkillMeta(
  data: Record<string, unknown>,
  path = SKILL_MD,
  keys?: Readonly<Record<string, Position>>,
): { problems: Problem[]; meta?: SkillMeta } {
  const problems: Problem[] = [];
  for (const [field, v] of [['name', checkSkillName(data.name)], ['description', checkSkillDescription(data.description)]] as const) {
    if (v) problems.push(problem(path, v.rule, v.message, keys ? (keys[field] ?? FRONT_MATTER_START) : undefined));
  }
  if (problems.length > 0) return { problems };
  return { problems, meta: { name: data.name as string, description: (data.description as string).trim() } };
}

// Explicit tags are allowed only when they name a core-schema type; anything else
// (`!!js/function`, `!custom`, `!!binary`, `!!set`, ...) is a problem.
const CORE_TAGS = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((t) => `tag:yaml.org,2002:${t}`));
const OPEN = /^---[ \t]*$/;

export interface FrontMatter {
  data?: Record<string, unknown>;
  body: string;
  problems: Problem[];
  /** Where each top-level key of the front matter stands in the file (1-based). */
  keys: Record<string, Position>;
  /** The file line the body starts on (1-based). */
  bodyLine: number;
}

/** The opening "---" line. */
const FRONT_MATTER_START: Position = { line: 1, column: 1 };

/** Split SKILL.md into YAML front matter and Markdown body; never throws, never executes. */
export function parseFrontMatter(text: string, path = SKILL_MD): FrontMatter {
  const bad = (message: string, body = text, at: Position = FRONT_MATTER_START, bodyLine = 1): FrontMatter =>
    ({ body, problems: [problem(path, 'INVALID_FRONT_MATTER', message, at)], keys: {}, bodyLine });
  const src = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const lines = src.split(/\r?\n/);
  if (!OPEN.test(lines[0])) {
    if (lines[0].startsWith('---')) {
      return bad(`front matter "${lines[0].slice(0, 20)}" is not supported; only YAML front matter opened by a bare "---" line`);
    }
    return bad('SKILL.md must start with a YAML front matter block ("---" line)');
  }
  const close = lines.findIndex((l, i) => i > 0 && OPEN.test(l));
  if (close < 0) return bad('front matter is not closed by a "---" line');
  const yamlText = lines.slice(1, close).join('\n');
  const body = lines.slice(close + 1).join('\n');
  const bodyLine = close + 2;
  if (Buffer.byteLength(yamlText) > FRONT_MATTER_MAX_BYTES) {
    return bad(`front matter is larger than ${FRONT_MATTER_MAX_BYTES} bytes`, body, FRONT_MATTER_START, bodyLine);
  }
  if (nestingDepth(yamlText) > FRONT_MATTER_MAX_DEPTH) {
    return bad(`front matter is nested more than ${FRONT_MATTER_MAX_DEPTH} levels deep`, body, FRONT_MATTER_START, bodyLine);
  }

  // Positions in the YAML text are offsets; the file line is one more (the opening "---").
  const counter = new LineCounter();
  const at = (offset: number | undefined): Position => {
    const { line, col } = counter.linePos(offset ?? 0);
    return { line: line + 1, column: col };
  };
  const problems: Problem[] = [];
  const keys: Record<string, Position> = {};
  let data: unknown;
  try {
    const doc = parseDocument(yamlText, {
      version: '1.2', schema: 'core', merge: false, uniqueKeys: true, prettyErrors: false, logLevel: 'silent', lineCounter: counter,
    });
    for (const e of [...doc.errors, ...doc.warnings]) {
      problems.push(problem(path, 'INVALID_FRONT_MATTER', `invalid YAML: ${e.message.split('\n')[0]}`, at(e.pos[0])));
    }
    visit(doc, {
      Node(_key, node) {
        if (node.tag && !CORE_TAGS.has(node.tag)) {
          problems.push(problem(path, 'INVALID_FRONT_MATTER', `YAML tag "${node.tag}" is not allowed`, at(node.range?.[0])));
        }
      },
    });
    if (problems.length > 0) return { body, problems: dedupe(problems), keys, bodyLine };
    if (isMap(doc.contents)) {
      for (const pair of doc.contents.items) {
        if (isScalar(pair.key) && !(String(pair.key.value) in keys)) keys[String(pair.key.value)] = at(pair.key.range?.[0]);
      }
    }
    data = doc.toJS({ maxAliasCount: 50 });
  } catch (e) {
    return bad(`invalid YAML: ${(e as Error).message}`, body, FRONT_MATTER_START, bodyLine);
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== 'object' || Array.isArray(data)) return bad('front matter must be a YAML mapping', body, { line: 2, column: 1 }, bodyLine);
  return { data: data as Record<string, unknown>, body, problems: [], keys, bodyLine };
}

/**
 * Upper bound of the YAML nesting depth, computed without parsing: indentation levels +
 * leading compact "- "/"? " indicators + one for a key on the line + open flow brackets (quotes not excluded, so
 * it may over-count, never under-count). Deep input can exhaust the stack inside a parser.
 */
export function nestingDepth(yamlText: string): number {
  const indents: number[] = [];
  let flow = 0;
  let max = 0;
  for (const line of yamlText.split('\n')) {
    const content = line.trimStart();
    if (content === '' || content.startsWith('#')) continue;
    const indent = line.length - content.length;
    while (indents.length > 0 && indents[indents.length - 1] >= indent) indents.pop();
    indents.push(indent);
    const compact = (/^(?:[-?](?:[ \t]+|$))*/.exec(content)?.[0].match(/[-?]/g) ?? []).length + 1;
    for (const ch of content) {
      if (ch === '[' || ch === '{') max = Math.max(max, indents.length + compact + ++flow);
      else if ((ch === ']' || ch === '}') && flow > 0) flow--;
    }
    max = Math.max(max, indents.length + compact + flow);
  }
  return max;
}

function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => !seen.has(p.message) && (seen.add(p.message), true));
}
