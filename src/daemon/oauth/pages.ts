import type { FastifyReply } from 'fastify';
import { escapeHtml, renderPage, sendPage } from '../web/layout.js';
import type { OAuthClient } from './clients.js';
import { AUTHORIZE_PARAM_NAMES, type AuthorizeParams } from './authorize.js';
import { cspSource } from './login-return.js';

/** The two pages the authorization endpoint shows, in the portal's layout: consent and "this request is bad". */

const SCOPE_TEXT: Record<string, string> = {
  openid: 'confirm who you are (your account id)',
  profile: 'see your name',
  email: 'see your email address',
  tier: 'read your plan, wallet and quotas, and use the gateway on your behalf',
};

export function sendErrorPage(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  const body = `<h1>This sign-in request cannot be completed</h1><p>${escapeHtml(message)}</p><p>Error code: <code>${escapeHtml(code)}</code></p>
<p>The application that sent you here is misconfigured. You can close this page.</p>`;
  return sendPage(reply, renderPage({ title: 'Sign-in request refused', body }), status);
}

export function sendConsentPage(
  reply: FastifyReply,
  c: { client: OAuthClient; redirectUri: string; scope: string; params: AuthorizeParams; csrfToken: string; action: string; email: string },
): FastifyReply {
  const hidden = AUTHORIZE_PARAM_NAMES.filter((k) => c.params[k] !== undefined)
    .map((k) => `<input type="hidden" name="${k}" value="${escapeHtml(c.params[k] as string)}">`)
    .join('\n');
  const items = c.scope
    .split(' ')
    .map((s) => `<li>${escapeHtml(SCOPE_TEXT[s] ?? s)}</li>`)
    .join('');
  const body = `<h1>Allow <em>${escapeHtml(c.client.name)}</em> to use your account?</h1>
<p>Signed in as ${escapeHtml(c.email)}. The application will be able to:</p><ul>${items}</ul>
<form method="post" action="${escapeHtml(c.action)}">
${hidden}
<input type="hidden" name="_csrf" value="${escapeHtml(c.csrfToken)}">
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`;
  // the form's answer redirects to the client: allow its origin as a form-action target
  const html = renderPage({ title: 'Authorize application', body, user: { email: c.email, csrfToken: c.csrfToken } });
  const source = cspSource(c.redirectUri);
  return sendPage(reply, html, 200, { formActions: source ? [source] : [] });
}
