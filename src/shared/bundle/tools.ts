/** Tool manifests: every `tools/*.json` is {name, description, parameters: JSON Schema object}. */
import { Ajv, type AnySchemaObject } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { problem, type Position, type Problem } from './types.js';

// Created once, on first use (building an instance compiles its meta-schema: `agw skill
// validate` should not pay for a dialect the bundle does not use). strict off so ordinary
// tool schemas (extra keywords, any `format`) compile: compiling proves the schema valid,
// format assertions are the tool runtime's business. Compiled schemas are removed again so
// a long-running daemon does not accumulate them.
const OPTIONS = { strict: false, allErrors: true, logger: false, validateFormats: false } as const;
let ajv07: Ajv | undefined;
let ajv2020: Ajv2020 | undefined;

/** Deepest JSON nesting accepted in a manifest (checked iteratively before ajv recurses). */
export const TOOL_MANIFEST_MAX_DEPTH = 64;

/** Nesting depth of a parsed JSON value, without recursion. */
export function jsonDepth(value: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (d > max) max = d;
    if (max > TOOL_MANIFEST_MAX_DEPTH) return max;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

/** Tool names as the chat providers accept them. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const TOOL_MANIFEST_PATH = /^tools\/[^/]+\.json$/;

export function isToolManifestPath(path: string): boolean {
  return TOOL_MANIFEST_PATH.test(path);
}

function pickAjv(schema: AnySchemaObject): Ajv | Ajv2020 | null {
  const id = schema.$schema;
  if (id === undefined || /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/.test(String(id))) return (ajv07 ??= new Ajv(OPTIONS));
  if (/^https:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/.test(String(id))) return (ajv2020 ??= new Ajv2020(OPTIONS));
  return null;
}

/** Compile `schema` once to prove it is a valid JSON Schema; returns an error message or null. */
export function schemaError(schema: AnySchemaObject): string | null {
  const ajv = pickAjv(schema);
  if (!ajv) return `unsupported $schema "${String(schema.$schema)}" (use draft-07 or 2020-12)`;
  try {
    ajv.compile(schema);
    return null;
  } catch (e) {
    return (e as Error).message;
  } finally {
    try { ajv.removeSchema(schema); } catch { /* not registered */ }
  }
}

/**
 * A JSON.parse error as a message and a line:column: V8 reports a character offset
 * ("… in JSON at position 42", newer versions add "(line 3 column 5)"), or nothing at the end.
 */
export function jsonErrorPlace(src: string, raw: string): { message: string; at: Position } {
  const m = /\s+in JSON at position (\d+)(?:\s*\(line \d+ column \d+\))?/.exec(raw);
  const offset = m ? Math.min(Number(m[1]), src.length) : src.length;
  const before = src.slice(0, offset).split('\n');
  const at = { line: before.length, column: before[before.length - 1].length + 1 };
  return { message: m ? raw.slice(0, m.index) + raw.slice(m.index + m[0].length) : raw, at };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Problems of one manifest (already decoded text); `name` when the manifest names a tool. */
export function checkToolManifest(path: string, text: string): { problems: Problem[]; name?: string } {
  const manifest = (message: string) => problem(path, 'INVALID_TOOL_MANIFEST', message);
  const schemaProblem = (message: string) => problem(path, 'INVALID_TOOL_SCHEMA', message);
  let doc: unknown;
  const src = text.startsWith('\uFEFF') ? text.slice(1) : text;
  try {
    doc = JSON.parse(src);
  } catch (e) {
    const { message, at } = jsonErrorPlace(src, (e as Error).message);
    return { problems: [problem(path, 'INVALID_TOOL_MANIFEST', `not valid JSON: ${message}`, at)] };
  }
  if (!isObject(doc)) return { problems: [manifest('manifest must be a JSON object {name, description, parameters}')] };
  if (jsonDepth(doc) > TOOL_MANIFEST_MAX_DEPTH) {
    return { problems: [manifest(`manifest is nested more than ${TOOL_MANIFEST_MAX_DEPTH} levels deep`)] };
  }
  const problems: Problem[] = [];
  const { name, description, parameters } = doc;
  const nameOk = typeof name === 'string' && TOOL_NAME_PATTERN.test(name);
  if (!nameOk) problems.push(manifest('"name" must be 1-64 characters of letters, digits, "_" or "-"'));
  if (typeof description !== 'string' || description.trim() === '') {
    problems.push(manifest('"description" must be a non-empty string'));
  }
  if (!isObject(parameters)) {
    problems.push(manifest('"parameters" must be a JSON Schema object'));
  } else {
    if (parameters.type !== 'object') problems.push(schemaProblem('"parameters.type" must be "object"'));
    const props = parameters.properties;
    if (props !== undefined && !isObject(props)) problems.push(schemaProblem('"parameters.properties" must be an object'));
    const required = parameters.required;
    if (required !== undefined) {
      if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) {
        problems.push(schemaProblem('"parameters.required" must be an array of strings'));
      } else {
        const known = isObject(props) ? props : {};
        const missing = required.filter((r) => !Object.prototype.hasOwnProperty.call(known, r));
        if (missing.length > 0) {
          problems.push(schemaProblem(`"parameters.required" names properties that are not defined: ${missing.join(', ')}`));
        }
      }
    }
    const err = schemaError(parameters);
    if (err) problems.push(schemaProblem(`"parameters" is not a valid JSON Schema: ${err}`));
  }
  return nameOk ? { problems, name: name as string } : { problems };
}
