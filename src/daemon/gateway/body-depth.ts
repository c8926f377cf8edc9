import { AgwError } from '../../shared/errors.js';

/**
 * How deep a JSON request body may nest, checked once on every chat door (unified chat, the
 * smart route, both base URLs, count_tokens, the proxy's parsed body) before anything reads
 * it further: the converters, the image count, the hold and JSON.stringify all walk bodies
 * recursively, and 200,000 nested arrays (400 KB) overflow the stack. 64 levels leave room
 * for a tool's JSON Schema 30 levels of properties deep (the providers
 * allow less: OpenAI's structured outputs take 10 levels of nesting).
 */
export const MAX_BODY_DEPTH = 64;

/**
 * The top-level field under which `body` nests containers more than `max` levels deep (the
 * body is level 0, its fields level 1), or undefined. One pass with an explicit stack: no
 * recursion, so no input can overflow it; it stops at the first container too deep.
 */
export function tooDeepField(body: Record<string, unknown>, max = MAX_BODY_DEPTH): string | undefined {
  const values: unknown[] = [];
  const depths: number[] = [];
  for (const field in body) {
    const top = body[field];
    if (top === null || typeof top !== 'object') continue;
    values.push(top);
    depths.push(1);
    while (values.length) {
      const v = values.pop() as object;
      const d = depths.pop() as number;
      if (d > max) {
        values.length = 0;
        depths.length = 0;
        return field;
      }
      if (Array.isArray(v)) {
        for (const x of v) {
          if (x !== null && typeof x === 'object') {
            values.push(x);
            depths.push(d + 1);
          }
        }
      } else {
        for (const k in v) {
          const x = (v as Record<string, unknown>)[k];
          if (x !== null && typeof x === 'object') {
            values.push(x);
            depths.push(d + 1);
          }
        }
      }
    }
  }
  return undefined;
}

/** 400 INVALID_REQUEST naming the top-level field that nests too deep (a caller's key: at most 128 characters of it). */
export function requireShallowBody(body: Record<string, unknown>): void {
  const deep = tooDeepField(body);
  if (deep !== undefined) {
    const field = deep.length > 128 ? `${deep.slice(0, 128)}…` : deep;
    throw new AgwError('INVALID_REQUEST', `${field} is nested more than ${MAX_BODY_DEPTH} levels deep`, { field, location: 'body', maxDepth: MAX_BODY_DEPTH });
  }
}
