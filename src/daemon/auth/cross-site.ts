import type { FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';
import type { AppContext } from '../context/index.js';

/**
 * The contract's rule "Cross-site requests" (the approach of Go 1.25's
 * `http.CrossOriginProtection` and OWASP's Fetch Metadata guidance): a state-changing
 * request made with the session cookie is refused with 403 CSRF_FAILED when
 *   - its `Sec-Fetch-Site` header is present and is neither `same-origin` nor `none`, or,
 *   - with no `Sec-Fetch-Site`, its `Origin` header is present and is not the service's
 *     own origin (`Origin: null` included).
 * A request with neither header is a non-browser client (curl, the CLI) and needs no token;
 * bearer credentials are never affected (a browser cannot attach them cross-site).
 *
 * The service's own origin is that of `publicUrl` when it is set. Without it, it is the
 * address agw listens on and the origin the request was sent to (scheme and Host, as
 * trustProxy lets fastify read them): a browser sets Host itself, so a page elsewhere
 * cannot make its request look addressed to its own origin, and `localhost` and
 * `127.0.0.1` both work.
 */

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isStateChanging(method: string): boolean {
  return !SAFE_METHODS.has(method);
}

function originOf(url: string): string | undefined {
  try {
    const o = new URL(url).origin;
    return o === 'null' ? undefined : o;
  } catch {
    return undefined;
  }
}

function isOwnOrigin(ctx: AppContext, req: FastifyRequest, origin: string): boolean {
  const given = originOf(origin);
  if (!given) return false; // "null" (sandboxed frames, file:, some redirects) or garbage
  if (ctx.config.publicUrl) return given === originOf(ctx.config.publicUrl);
  return given === originOf(ctx.rootUrl()) || given === originOf(`${req.protocol}://${req.host}`);
}

/** True when the contract's rule refuses this request (its method is not checked here). */
export function isCrossSite(ctx: AppContext, req: FastifyRequest): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  const origin = req.headers.origin;
  if (origin !== undefined) return !isOwnOrigin(ctx, req, origin);
  return false;
}

/** Throws 403 CSRF_FAILED for a cross-site request (see above). */
export function refuseCrossSite(ctx: AppContext, req: FastifyRequest): void {
  if (isCrossSite(ctx, req)) {
    throw new AgwError(
      'CSRF_FAILED',
      'cross-site request refused: a request made with the portal session must come from the portal itself (Sec-Fetch-Site / Origin)',
    );
  }
}
