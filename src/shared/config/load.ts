import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { ConfigSchema, type ConfigFile } from './schema.js';
import { resolveConfig, type ResolvedConfig } from './resolve.js';

/** A problem with the config, named by its key path: `tiers.free.quotas.ai_chat: must be >= -1`. */
export interface ConfigProblem {
  path: string;
  rule: string;
  message: string;
}

export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: ConfigProblem[],
  ) {
    super(`${file}: invalid configuration\n${problems.map((p) => `  ${p.path}: ${p.message} (${p.rule})`).join('\n')}`);
  }
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validateSchema = ajv.compile(ConfigSchema as object);

function pathOf(e: ErrorObject): string {
  const base = e.instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
  const extra =
    e.keyword === 'additionalProperties'
      ? (e.params as { additionalProperty: string }).additionalProperty
      : e.keyword === 'required'
        ? (e.params as { missingProperty: string }).missingProperty
        : '';
  return [base, extra].filter(Boolean).join('.') || '(root)';
}

function describe(e: ErrorObject): string {
  if (e.keyword === 'additionalProperties') return 'unknown key';
  if (e.keyword === 'anyOf' || e.keyword === 'enum' || e.keyword === 'const') return 'must be one of the allowed values';
  return e.message ?? 'invalid';
}

/** Checks a parsed YAML value against the schema; returns every problem at once. */
export function checkConfigValue(value: unknown): ConfigProblem[] {
  if (validateSchema(value)) return [];
  const seen = new Set<string>();
  const out: ConfigProblem[] = [];
  for (const e of validateSchema.errors ?? []) {
    // a union's branches each report; keep one line per path
    if (e.keyword === 'const' && seen.has(pathOf(e))) continue;
    const p = { path: pathOf(e), rule: e.keyword, message: describe(e) };
    const key = `${p.path}|${p.rule}`;
    if (seen.has(key)) continue;
    seen.add(key);
    seen.add(p.path);
    out.push(p);
  }
  return out;
}

/** The dotted key path of the deepest mapping/sequence entry whose range holds `offset`. */
function keyPathAt(doc: Document, offset: number): string | undefined {
  const path: string[] = [];
  let node: unknown = doc.contents;
  const range = (n: unknown) => (n as { range?: [number, number, number] } | null)?.range;
  const holds = (n: unknown) => {
    const r = range(n);
    return r !== undefined && offset >= r[0] && offset <= r[2];
  };
  // from the key to the end of the value: a tag sits between them
  const pairHolds = (key: unknown, value: unknown) => {
    const start = range(key)?.[0];
    const end = range(value)?.[2] ?? range(key)?.[2];
    return start !== undefined && end !== undefined && offset >= start && offset <= end;
  };
  for (;;) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && pairHolds(p.key, p.value));
      if (!pair) break;
      path.push(isScalar(pair.key) ? String(pair.key.value) : '?');
      node = pair.value;
    } else if (isSeq(node)) {
      const i = node.items.findIndex(holds);
      if (i < 0) break;
      path.push(String(i));
      node = node.items[i];
    } else break;
  }
  return path.length ? path.join('.') : undefined;
}

/**
 * Parses YAML text safely (core schema: no custom tags, no duplicate keys) and validates
 * it. A YAML problem is named by the key path it sits under and its line and column.
 */
export function parseConfigText(text: string): { config?: ConfigFile; problems: ConfigProblem[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { schema: 'core', customTags: [], uniqueKeys: true, prettyErrors: false, lineCounter });
  const yamlProblems: ConfigProblem[] = [...doc.errors, ...doc.warnings].map((e) => {
    const { line, col } = lineCounter.linePos(e.pos[0]);
    const tag = e.code === 'TAG_RESOLVE_FAILED';
    return {
      path: keyPathAt(doc, e.pos[0]) ?? '(root)',
      rule: tag ? 'yaml-tag' : 'yaml',
      message: `${tag ? 'custom YAML tags are not allowed: ' : ''}${e.message.split('\n')[0]} (line ${line}, column ${col})`,
    };
  });
  if (yamlProblems.length) return { problems: yamlProblems };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (e) {
    return { problems: [{ path: '(root)', rule: 'yaml', message: (e as Error).message }] };
  }
  const problems = checkConfigValue(value);
  return problems.length ? { problems } : { config: value as ConfigFile, problems };
}

/**
 * Loads the config: `file` (may be undefined: built-in defaults), validated, merged over
 * the defaults, with env overrides. Throws ConfigError naming every bad key.
 */
export function loadConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  let parsed: ConfigFile = {};
  const name = file ?? '(defaults)';
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new ConfigError(file, [{ path: '(file)', rule: 'readable', message: (e as Error).message }]);
    }
    const r = parseConfigText(text);
    if (!r.config) throw new ConfigError(file, r.problems);
    parsed = r.config;
  }
  const { config, problems } = resolveConfig(parsed, env);
  if (problems.length) throw new ConfigError(name, problems);
  return config;
}
