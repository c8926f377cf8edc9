import AjvCompiler from '@fastify/ajv-compiler';
import type { Ajv } from 'ajv';

/**
 * One rule for every numeric field of every route: a number must be finite.
 *
 * Querystrings and path parameters arrive as text and Ajv coerces them (`coerceTypes`):
 * `"1e309"` becomes Infinity, and Ajv's own number keywords (minimum, maximum) skip
 * non-finite values, so `?limit=1e309` used to reach the handlers (500s). At compile time
 * every schema a route validates with is copied with `finite: true` added to each
 * `number`/`integer` schema; the `finite` keyword fails non-finite numbers after
 * coercion, so the answer is 400 INVALID_REQUEST naming the field. The route's own
 * schema (and so the OpenAPI document) is left as it is; nothing extra runs per request
 * but the keyword on numeric fields.
 */

const NUMERIC = new Set(['number', 'integer']);
/** Keywords whose values are data, not schemas. */
const DATA_KEYWORDS = new Set(['default', 'examples', 'example', 'const', 'enum']);

function isNumeric(type: unknown): boolean {
  return typeof type === 'string' ? NUMERIC.has(type) : Array.isArray(type) && type.some((t) => NUMERIC.has(t as string));
}

/** A copy of `schema` with `finite: true` on every numeric subschema. */
function withFinite<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((s) => withFinite(s)) as T;
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = DATA_KEYWORDS.has(k) ? v : withFinite(v);
  if (isNumeric(out.type)) out.finite = true;
  return out as T;
}

interface FiniteCheck {
  (schema: unknown, data: unknown): boolean;
  errors?: { keyword: string; message: string; params: Record<string, unknown> }[];
}

const finiteCheck: FiniteCheck = (_schema, data) => {
  if (typeof data !== 'number' || Number.isFinite(data)) return true;
  finiteCheck.errors = [{ keyword: 'finite', message: 'must be a finite number', params: {} }];
  return false;
};

/** Ajv plugin (fastify `ajv.plugins`): the `finite` keyword, checked after coercion. */
export function finiteKeyword(ajv: Ajv): Ajv {
  // no `type`: Ajv runs it outside the number group, which skips non-finite values
  return ajv.addKeyword({ keyword: 'finite', schemaType: 'boolean', validate: finiteCheck, errors: true });
}

type RouteSchema = { schema: unknown; method: string; url: string; httpPart: string };
type BuildValidator = (externalSchemas: Record<string, unknown>, options: unknown) => (route: RouteSchema) => unknown;

/** fastify `schemaController.compilersFactory.buildValidator`: the default Ajv compiler, given annotated schemas. */
export function finiteValidatorFactory(): BuildValidator {
  const base = AjvCompiler() as unknown as BuildValidator;
  return (externalSchemas, options) => {
    const external = Object.fromEntries(Object.entries(externalSchemas).map(([k, v]) => [k, withFinite(v)]));
    const compile = base(external, options);
    return (route) => compile({ ...route, schema: withFinite(route.schema) });
  };
}
