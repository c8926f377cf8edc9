import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { parseDocument } from 'yaml';
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

/** Parses YAML text safely (core schema, no custom tags) and validates it. */
export function parseConfigText(text: string): { config?: ConfigFile; problems: ConfigProblem[] } {
  const doc = parseDocument(text, { schema: 'core', customTags: [], uniqueKeys: true, prettyErrors: false });
  const yamlProblems: ConfigProblem[] = [...doc.errors, ...doc.warnings].map((e) => ({
    path: `line ${e.linePos?.[0]?.line ?? '?'}`,
    rule: 'yaml',
    message: e.message.split('\n')[0],
  }));
  if (yamlProblems.length) return { problems: yamlProblems };
  const value = doc.toJS() ?? {};
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
