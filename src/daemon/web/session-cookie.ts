import type { FastifyReply } from 'fastify';
import type { AppContext } from '../context/index.js';
import { SESSION_COOKIE, SESSION_TTL_MS } from '../auth/sessions.js';

/**
 * The `service_session` cookie: HttpOnly, SameSite=Lax, Path=/, Max-Age of the
 * session's sliding lifetime, Secure when the public URL is https. The value is the
 * opaque session id; the store keeps only its hash.
 */
function attributes(ctx: AppContext, maxAgeSec: number): string {
  const secure = ctx.config.publicUrl?.toLowerCase().startsWith('https://') ? '; Secure' : '';
  return `Path=/; Max-Age=${maxAgeSec}; HttpOnly; SameSite=Lax${secure}`;
}

export function setSessionCookie(ctx: AppContext, reply: FastifyReply, id: string): void {
  reply.header('set-cookie', `${SESSION_COOKIE}=${encodeURIComponent(id)}; ${attributes(ctx, Math.floor(SESSION_TTL_MS / 1000))}`);
}

export function clearSessionCookie(ctx: AppContext, reply: FastifyReply): void {
  reply.header('set-cookie', `${SESSION_COOKIE}=; ${attributes(ctx, 0)}`);
}
