import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context/index.js';
import { authenticate, readCookie } from '../auth/principal.js';
import { SESSION_COOKIE } from '../auth/sessions.js';
import { userById } from '../store/users.js';
import type { PageUser } from './layout.js';
import { setSessionCookie } from './session-cookie.js';

export interface SignedIn extends PageUser {
  userId: string;
  tier: string;
}

/**
 * The page's signed-in user from the session cookie (and the cookie renewed: sessions
 * slide), or null. Pages only read with it; their forms post to routes that check the
 * session and its CSRF rule themselves.
 */
export async function signedIn(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<SignedIn | null> {
  if (!readCookie(req, SESSION_COOKIE)) return null;
  const p = await authenticate(ctx, req, ['session']);
  if (!p || p.kind !== 'session') return null;
  const user = await userById(ctx.db, p.userId);
  if (!user) return null;
  setSessionCookie(ctx, reply, readCookie(req, SESSION_COOKIE)!);
  return { userId: p.userId, email: user.email, csrfToken: p.csrfToken, tier: p.tier };
}
