import { escapeHtml, renderPage } from './layout.js';

/**
 * The login form. It posts to the API's login endpoint as a plain form (no script);
 * `next` is a same-origin path to return to afterwards (already checked by safeNext).
 */
export function loginPage(opts: { next: string; error?: string; email?: string }): string {
  const err = opts.error
    ? `<p class="error" role="alert" id="login-error">${escapeHtml(opts.error)}</p>`
    : '';
  const described = opts.error ? ' aria-describedby="login-error"' : '';
  const body = `
<section class="card login" aria-labelledby="login-h">
  <h1 id="login-h">Sign in</h1>
  ${err}
  <form method="post" action="/api/portal/login">
    <input type="hidden" name="next" value="${escapeHtml(opts.next)}">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required maxlength="320" value="${escapeHtml(opts.email ?? '')}"${described} autofocus>
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${described}>
    <p><button type="submit">Sign in</button></p>
  </form>
  <p class="note">No account? An administrator creates one with <code>agw admin user create --email you@example.com</code>.</p>
</section>`;
  return renderPage({ title: 'Sign in', body });
}
