import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import type { ResolvedProvider } from '../../shared/config/resolve.js';
import type { ProviderDef } from '../../shared/providers/index.js';
import { AgwError } from '../../shared/errors.js';
import { isBatchPath, isFreePath, proxyAllows } from '../../shared/providers/index.js';
import { errorResponses } from '../../shared/schemas/common.js';
import { MODEL_MAX_LENGTH, ProviderAnswer, ProxyParams } from '../../shared/schemas/gateway.js';
import { release, reserve } from '../money/calls.js';
import { asciiView, bookingEstimate, quoteTokens, quoteUnits } from '../money/hold.js';
import { callerOf, gatewayUser, requireGatewayAuth } from '../gateway/auth.js';
import { countImages, promptBoundWithImages } from '../gateway/image-tokens.js';
import { keyAllowlist, refuseForKey } from '../gateway/key-refusal.js';
import { allowsModel, KeyModelRefusal } from '../gateway/model-allowlist.js';
import { unitCharge } from '../money/pricing.js';
import { unpricedError, unpricedFeature } from '../money/unpriced.js';
import { Call, deliver, projectFor, unreachable } from '../gateway/relay.js';
import { readErrorBody } from '../gateway/redact.js';
import { gatewayOf } from '../gateway/runtime.js';
import { forwardableHeaders, passableHeaders, providerAuthHeaders, UpstreamAbort, UpstreamError } from '../gateway/upstream.js';
import { hidesReasoning } from '../gateway/usage.js';
import type { RouteOptions } from './index.js';
import type { SecretRedactor } from '../../shared/secret-redactor.js';
import { authorize } from '../gateway/clouds/credentials.js';
import { requireShallowBody } from '../gateway/body-depth.js';
import { conversationOf, pinnedKey } from '../gateway/keys/sticky.js';
import { markPhase } from '../telemetry/phases.js';

/**
 * The proxy: /api/external/{provider}/{path} goes to the provider's base URL + path with
 * the query and body unchanged (the body is kept as the raw bytes received) and the
 * provider's own credentials in place of the caller's. POST calls are metered (one quota
 * unit of the provider's usage type, one usage record, one wallet transaction, priced
 * from the answer's usage or from the provider's units); GET calls (model lists, polling
 * a job) and POST calls the provider does not charge for (its catalog `freePaths`: token
 * counting) are forwarded free, without a hold or a record; POST calls that start a batch job
 * (`batchPaths`) are refused with 501 BATCH_NOT_METERED; any path outside the provider's
 * `proxyPaths` (inference POSTs, GETs that reveal no tenant's data) or a cloud's configured
 * scope is refused with 403 PROXY_PATH_NOT_ALLOWED. Non-2xx answers come back as they
 * are, but for the provider secrets redacted in them (and in every header passed back), and
 * cost nothing.
 */
const proxy: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const gw = gatewayOf(ctx);
  // encapsulated to this plugin: every body arrives as the raw bytes, forwarded as they are
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => {
    markPhase('body');
    done(null, body);
  });

  const schema = {
    tags: ['gateway'],
    summary: 'Proxy to a provider: its own path and schema; credentials replaced by the provider’s own',
    security: [{ bearer: [] }],
    response: { 200: ProviderAnswer, ...errorResponses(400, 401, 402, 403, 404, 429, 501, 503) },
  };
  // the OpenAPI document names the wildcard as the spec does: /external/{provider}/{path}
  const config = {
    swaggerTransform: ({ schema: s, url }: { schema: object; url: string }) => ({ url: url.replace(/\*$/, ':path'), schema: { ...s, params: ProxyParams } }),
  };
  const onRequest = requireGatewayAuth(ctx, true);
  // the metered POSTs: also answered by the fast lane, without fastify, when it can (daemon/fast-lane/)
  app.post('/external/:provider/*', { onRequest, schema, config }, (req, reply) => handle(req, reply, 'POST'));
  const getSchema = { ...schema, summary: 'Proxy a GET to a provider (not metered)', response: { 200: ProviderAnswer, ...errorResponses(400, 401, 403, 404, 429, 503) } };
  app.get('/external/:provider/*', { onRequest, config, schema: getSchema }, (req, reply) =>
    handle(req, reply, 'GET'),
  );

  async function handle(req: FastifyRequest, reply: FastifyReply, method: 'GET' | 'POST'): Promise<FastifyReply> {
    markPhase('handling');
    const u = gatewayUser(req);
    const id = (req.params as { provider: string }).provider;
    const provider = ctx.config.providers.get(id);
    if (!provider || !provider.enabled || !provider.keys.length) {
      const e =
        !provider || !provider.enabled
          ? new AgwError('PROVIDER_NOT_FOUND', `no provider ${id}: see GET /api/portal/providers/public`)
          : new AgwError('PROVIDER_KEY_MISSING', `no API key is configured for ${id}: set providers.${id}.apiKey or AGW_PROVIDER_${id.toUpperCase()}_KEY`);
      // a metered call is recorded even so (a GET is free and has no record)
      if (method === 'GET') throw e;
      // the record names the model the caller asked for, so the log says what was refused
      const asked = parseJson(Buffer.isBuffer(req.body) ? req.body : undefined, req.headers['content-type']);
      const model = modelInPath(req.url.split('?')[0]) ?? (typeof asked?.model === 'string' ? asked.model.slice(0, 200) : null);
      const stream = asked?.stream === true;
      throw await refuseForKey(ctx, req, u, { endpoint: 'proxy', providerId: id, model, alias: null, stream, usageType: provider?.def.usageType }, e);
    }
    const asked = upstreamPath(req.url, provider.def);
    const headers = forwardableHeaders(req.headers);
    providerAuthHeaders(provider, headers);
    const body = Buffer.isBuffer(req.body) && req.body.length ? req.body : undefined;
    const json = parseJson(body, headers['content-type']);
    // what agw reads of the body (hold, images, stickiness) walks it: no deeper than the limit
    if (json) requireShallowBody(json);
    const bodyModel = typeof json?.model === 'string' ? json.model : null;
    if (bodyModel !== null && bodyModel.length > MODEL_MAX_LENGTH) {
      throw new AgwError('INVALID_REQUEST', `model is longer than ${MODEL_MAX_LENGTH} characters`, { field: 'model', location: 'body' });
    }
    // a cloud completes the path (deployment, api-version, project) and names the model it prices
    const cloud = provider.def.proxyTarget?.({ ...asked, bodyModel }, provider.cloud);
    const refusal = { endpoint: 'proxy', providerId: id, model: null, alias: null, stream: false, usageType: provider.def.usageType } as const;
    if (cloud?.error !== undefined) {
      if (!cloud.notAllowed) throw new AgwError('INVALID_REQUEST', `${id}: ${cloud.error}`, { field: 'path' });
      const e = pathNotAllowed(id, method, asked.path, cloud.error);
      throw method === 'GET' ? e : await refuseForKey(ctx, req, u, refusal, e);
    }
    const { path, query } = cloud ?? asked;
    // a GET only where it reveals no tenant's data: refused without a record, like any free call
    if (method === 'GET') {
      if (!proxyAllows(provider.def, 'GET', path)) throw pathNotAllowed(id, method, path);
      return forwardFree(req, reply, provider, { method, path, query, headers, body });
    }
    if (isFreePath(provider.def, path)) return forwardFree(req, reply, provider, { method, path, query, headers, body });
    if (isBatchPath(provider.def, path)) {
      const e = new AgwError(
        'BATCH_NOT_METERED',
        `batch jobs are not metered through agw yet (${id} bills a batch later, from its results, at its batch price): send the requests one by one, or ask an operator to run the batch with the provider's own key`,
        { provider: id, path },
        { 'x-should-retry': 'false' },
      );
      throw await refuseForKey(ctx, req, u, refusal, e);
    }
    if (!proxyAllows(provider.def, 'POST', path)) throw await refuseForKey(ctx, req, u, refusal, pathNotAllowed(id, method, path));
    const extra = provider.def.pricing.kind === 'llm' ? unpricedFeature(json, req.headers) : undefined;
    if (extra !== undefined) throw await refuseForKey(ctx, req, u, { ...refusal, model: bodyModel, stream: json?.stream === true }, unpricedError(extra, id));

    const def = provider.def;
    const charge = def.pricing.kind === 'units' ? unitCharge(provider, path, json) : undefined;
    // a model in the path (Gemini's /models/X:generateContent) is the one served: it is
    // priced and checked, and a different one named in the body is checked too
    const model = cloud ? cloud.model : (modelInPath(path) ?? bodyModel);
    const keyModels = keyAllowlist(ctx, u);
    const notAllowed = (m: string | null) => m !== null && !allowsModel(keyModels!, id, m);
    if (keyModels && (model === null || notAllowed(model) || notAllowed(bodyModel))) {
      const what = model === null ? 'a call that names no model' : `model ${notAllowed(model) ? model : bodyModel}`;
      const e = new KeyModelRefusal(what, [...keyModels.names]);
      const usageType = charge?.unit.usageType ?? def.usageType;
      throw await refuseForKey(ctx, req, u, { endpoint: 'proxy', providerId: id, model, alias: null, stream: json?.stream === true, usageType }, e);
    }
    const quote = def.pricing.kind === 'units' ? quoteUnits(provider, charge) : quoteTokens(ctx.config, provider, model, body, json, generates(path), imagePromptBound(def, id, model, path, body, json), true);
    const project = projectFor(ctx, req, u.userId);
    const r = await reserve(ctx, callerOf(u), {
      usageType: charge?.unit.usageType ?? def.usageType,
      endpoint: 'proxy',
      providerId: id,
      model,
      alias: null,
      projectId: project && (await project),
      stream: json?.stream === true,
      body,
      traceparent: req.headers.traceparent,
      quote,
    });
    const call = new Call(ctx, gw, reply, r);
    // several keys: the conversation's key while it is healthy (its prompt cache is there)
    const conversation = provider.keys.length > 1 && gw.sticky.enabled ? conversationOf(u.userId, json) : undefined;
    const now = conversation ? Date.now() : 0;
    let up;
    try {
      up = await call.send(provider, { method, path, query, headers, body }, undefined, conversation ? pinnedKey(gw.sticky.get(conversation, now), provider, now) : undefined);
    } catch (err) {
      const e = unreachable(id, err);
      await release(ctx, r, null, { err: e });
      throw e;
    }
    const redact = call.redact;
    reply.code(up.statusCode).headers(ownHeadersWin(passableHeaders(up.headers, redact), r.rate !== null));
    if (up.statusCode < 200 || up.statusCode >= 300) {
      // the provider's refusal (429 with its retry-after, 4xx, 5xx), free, with its secrets redacted
      const text = await errorBack(reply, up, redact);
      r.bodies?.response.push(text);
      await release(ctx, r, up.statusCode);
      return reply.send(text);
    }
    if (conversation && call.key) gw.sticky.remember(conversation, id, model, call.key.name, now);
    await deliver(call, up, {
      provider,
      model,
      price: def.pricing.kind === 'units' ? { kind: 'units', charge } : { kind: 'tokens', ...bookingEstimate(quote, hidesReasoning(def.chat ?? def.chatFor?.(model ?? ''), model, json)) },
    });
    return reply;
  }

  async function forwardFree(
    req: FastifyRequest,
    reply: FastifyReply,
    provider: ResolvedProvider,
    r: { method: 'GET' | 'POST'; path: string; query: string; headers: Record<string, string>; body: Buffer | undefined },
  ): Promise<FastifyReply> {
    const ac = new UpstreamAbort();
    reply.raw.once('close', () => ac.abort());
    let up;
    let redact = gw.redact;
    try {
      // the first key: free calls are not spread (a cloud's credentials are computed per request)
      const key = provider.keys[0];
      const req = { ...r, signal: ac };
      const auth = key.apiKey === undefined ? await authorize(provider, key, req, gw.upstreams.base(provider.baseUrl), gw.redact) : {};
      if (auth.derived) redact = gw.redact.with([auth.derived]);
      up = await gw.upstreams.request(provider, req, auth.apiKey ?? provider.apiKey);
    } catch (err) {
      ctx.metrics.observeUpstream(provider.def.id, err instanceof UpstreamError ? err.outcome : 'connect_error');
      throw unreachable(provider.def.id, err);
    }
    ctx.metrics.observeUpstream(provider.def.id, up.statusCode < 400 ? 'ok' : up.statusCode === 429 ? 'rate_limited' : up.statusCode >= 500 ? 'http_5xx' : 'http_4xx');
    reply.code(up.statusCode).headers(passableHeaders(up.headers, redact));
    if (up.statusCode < 200 || up.statusCode >= 300) return reply.send(await errorBack(reply, up, redact));
    return reply.send(up.body);
  }

  /** A non-2xx answer's body for the caller: read whole, secrets redacted (decoded if it was compressed). */
  async function errorBack(reply: FastifyReply, up: Dispatcher.ResponseData, redact: SecretRedactor): Promise<Buffer> {
    const { body, decoded } = await readErrorBody(up, redact);
    if (decoded) reply.removeHeader('content-encoding');
    return body;
  }
};

/**
 * 403 PROXY_PATH_NOT_ALLOWED: a path outside the provider's proxy allowlist (its catalog
 * `proxyPaths`), or outside a cloud's configured scope (`why`). Nothing reaches the provider.
 */
function pathNotAllowed(provider: string, method: string, path: string, why?: string): AgwError {
  const rule = why ?? (method === 'GET' ? 'GETs reach only model lists and model info (and a media job by its id), never the account’s stored data' : 'the proxy meters inference calls only');
  return new AgwError('PROXY_PATH_NOT_ALLOWED', `${method} ${path} is not forwarded to ${provider}: ${rule} (docs/gateway.md "What the proxy forwards")`, { provider, method, path }, { 'x-should-retry': 'false' });
}

/**
 * The provider path and raw query from the request URL. The path is normalized as the
 * provider reads it, so the catalog's rules (free, batch, allowed paths) see what goes
 * upstream, and it goes upstream that way: repeated slashes collapsed, percent-escapes of
 * characters that may stand in a path segment as they are (letters, digits, `-._~:@!$&'()*+,;=`)
 * decoded; `.`/`..` segments and an encoded slash are refused (400), but where the provider's
 * catalog says a segment may carry one (a Bedrock inference profile's ARN). The query is
 * passed as sent.
 */
function upstreamPath(url: string, def: ProviderDef): { path: string; query: string } {
  const marker = `/external/${def.id}`;
  const rest = url.slice(url.indexOf(marker) + marker.length);
  const q = rest.indexOf('?');
  const path = normalizedPath((q === -1 ? rest : rest.slice(0, q)) || '/');
  if (/(^|\/)\.{1,2}(\/|$)/.test(path)) throw new AgwError('INVALID_REQUEST', 'the provider path may not contain . or .. segments', { field: 'path' });
  if (/%2f|%5c/i.test(path) && !def.encodedSlashIn?.test(path)) {
    throw new AgwError('INVALID_REQUEST', 'the provider path may not contain an encoded slash (%2F, %5C)', { field: 'path' });
  }
  return { path, query: q === -1 ? '' : rest.slice(q + 1) };
}

function normalizedPath(raw: string): string {
  // the common path has neither: no regex replaces for it
  if (!raw.includes('//') && !raw.includes('%')) return raw;
  return raw.replace(/\/{2,}/g, '/').replace(/%([0-9a-f]{2})/gi, (esc, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9\-._~:@!$&'()*+,;=]/.test(c) ? c : esc.toUpperCase();
  });
}

function parseJson(body: Buffer | undefined, contentType: string | undefined): Record<string, unknown> | undefined {
  if (!body || (contentType && !contentType.includes('json'))) return undefined;
  try {
    const v = JSON.parse(body.toString('utf8')) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined; // forwarded anyway: the provider answers its own error
  }
}

const IMAGE_WORDS = /image|inlineData/;

/**
 * The prompt bound of a chat body holding images, each counted by its pixels as the provider
 * counts it (gateway/image-tokens.ts); undefined otherwise (the hold's own bound applies).
 * Only a body that mentions an image is decoded for it.
 */
function imagePromptBound(def: ProviderDef, id: string, model: string | null, path: string, body: Buffer | undefined, json: Record<string, unknown> | undefined): number | undefined {
  if (!json || !body || !IMAGE_WORDS.test(asciiView(body))) return undefined;
  // a cloud's format depends on the model (Vertex's Claude and Gemini) or the operation (Bedrock's Converse)
  const format = /\/converse(-stream)?$/.test(path) ? 'converse' : (def.chat ?? def.chatFor?.(model ?? ''))?.format;
  if (!format) return undefined;
  const text = body.toString('utf8');
  const images = countImages(format, json, text, id, model ?? '');
  return images && promptBoundWithImages(text, images);
}

/** False for paths whose answers carry no generated tokens (embeddings): their hold is the prompt's. */
function generates(path: string): boolean {
  return !/embed/i.test(path);
}

/**
 * The provider's headers, minus those agw answers itself (CONTRACT "Request log", "Keys with
 * limits"): `x-request-id` names agw's record (the provider's own id is passed on as
 * `x-upstream-request-id`), and for a key with a rate limit the `x-ratelimit-*` headers are
 * the key's, not the provider account's.
 */
function ownHeadersWin(passed: Record<string, string | string[]>, rateLimited: boolean): Record<string, string | string[]> {
  const upstreamId = passed['x-request-id'];
  delete passed['x-request-id'];
  if (upstreamId !== undefined) passed['x-upstream-request-id'] = upstreamId;
  if (rateLimited) for (const name of Object.keys(passed)) if (name.startsWith('x-ratelimit-')) delete passed[name];
  return passed;
}

/** e.g. Gemini's /v1beta/models/gemini-2.5-flash:generateContent */
function modelInPath(path: string): string | null {
  const m = /\/models\/([^/:]+)/.exec(path);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}

export default proxy;
