import type { FastifyInstance, RouteOptions } from 'fastify';
import { ErrorBody } from '../shared/schemas/common.js';
import { authKindsOf, type CredentialKind } from './auth/principal.js';

/**
 * Conventions applied to every route once, when it is registered (nothing runs per
 * request): authentication hooks run before body validation, the route table knows
 * which methods a path has (405 instead of 404), and the OpenAPI document states each
 * operation's security, its 400/401 answers and an operationId.
 */

type Hooks = RouteOptions['preHandler'];
const list = (h: unknown): unknown[] => (h === undefined || h === null ? [] : Array.isArray(h) ? h : [h]);

/** Every registered (method, path pattern), to tell 405 from 404. */
export class RouteIndex {
  private readonly routes: { method: string; re: RegExp }[] = [];

  add(method: string, url: string): void {
    const segments = url.split('/').map((seg) => {
      if (seg === '*') return '.*';
      if (seg.includes(':') || seg.includes('*')) return '[^/]+';
      return seg.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    });
    this.routes.push({ method, re: new RegExp(`^${segments.join('/')}$`) });
  }

  /** The methods some route answers for this path (empty: no such path at all). */
  methodsFor(path: string): string[] {
    return [...new Set(this.routes.filter((r) => r.re.test(path)).map((r) => r.method))];
  }
}

export function installRouteConventions(app: FastifyInstance, index: RouteIndex): void {
  app.addHook('onRoute', (route) => {
    const pre = list(route.preHandler);
    const auth = pre.filter((h) => authKindsOf(h));
    if (auth.length) {
      const rest = pre.filter((h) => !authKindsOf(h));
      route.preHandler = (rest.length ? rest : undefined) as Hooks;
      route.preValidation = [...auth, ...list(route.preValidation)] as RouteOptions['preValidation'];
    }
    for (const method of list(route.method)) index.add(String(method), route.url);
    // A route's own swaggerTransform replaces the global one: apply the conventions after it.
    const own = (route.config as { swaggerTransform?: unknown } | undefined)?.swaggerTransform;
    if (typeof own === 'function') {
      const composed = (input: TransformInput) => {
        const r = (own as (i: TransformInput) => Partial<TransformInput>)(input);
        return openApiTransform({ ...input, schema: r.schema ?? input.schema, url: r.url ?? input.url });
      };
      route.config = { ...route.config, swaggerTransform: composed } as unknown as typeof route.config;
    }
  });
}

/** The credential kinds a route's authentication hook accepts, or undefined for a public route. */
export function routeAuthKinds(route: Partial<RouteOptions>): readonly CredentialKind[] | undefined {
  for (const h of [...list(route.onRequest), ...list(route.preValidation), ...list(route.preHandler)]) {
    const kinds = authKindsOf(h);
    if (kinds) return kinds;
  }
  return undefined;
}

export function securityFor(kinds: readonly CredentialKind[]): Record<string, string[]>[] {
  const out: Record<string, string[]>[] = [];
  if (kinds.some((k) => k === 'key' || k === 'oauth' || k === 'master')) out.push({ bearer: [] });
  if (kinds.includes('session')) out.push({ session: [] });
  return out;
}

/** `GET /api/skills/:id/versions` -> `getSkillsByIdVersions`. */
export function operationIdFor(method: string, url: string): string {
  const segs = url
    .replace(/^\/api(?=\/|$)/, '')
    .split('/')
    .filter(Boolean)
    .map((seg) => (seg.startsWith(':') ? `by-${seg.slice(1).replace(/\(.*$/, '')}` : seg === '*' ? 'any' : seg));
  const words = segs
    .filter((seg, i) => seg !== segs[i - 1]) // by-slug/:slug -> BySlug
    .join('-')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

interface TransformInput {
  schema: Record<string, unknown> | undefined;
  url: string;
  route: Partial<RouteOptions>;
  openapiObject: object;
}

const usedIds = new WeakMap<object, Set<string>>();

/** @fastify/swagger `transform`: documents what the conventions above make true. */
export function openApiTransform({ schema, url, route, openapiObject }: TransformInput): { schema: Record<string, unknown>; url: string } {
  const s: Record<string, unknown> = { ...(schema ?? {}) };
  if (s.hide) return { schema: s, url };
  const method = String(list(route.method)[0] ?? 'get');
  const used = usedIds.get(openapiObject) ?? new Set<string>();
  usedIds.set(openapiObject, used);
  if (typeof s.operationId !== 'string') {
    const base = operationIdFor(method, url);
    let id = base;
    for (let i = 2; used.has(id); i++) id = `${base}${i}`;
    s.operationId = id;
  }
  used.add(s.operationId as string);
  const kinds = routeAuthKinds(route);
  if (s.security === undefined) s.security = kinds ? securityFor(kinds) : [];
  const responses = { ...((s.response as Record<string, unknown> | undefined) ?? {}) };
  if (kinds && !responses[401]) responses[401] = ErrorBody;
  if ((s.body || s.querystring || s.params) && !responses[400]) responses[400] = ErrorBody;
  if (Object.keys(responses).length) s.response = responses;
  return { schema: s, url };
}
