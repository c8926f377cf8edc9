import type { TestDaemon, TestUser } from './daemon.js';

export interface PortalSession {
  /** `service_session=…`, ready for a Cookie header */
  cookie: string;
  /** the raw Set-Cookie header of the login answer */
  setCookie: string;
  csrf: string;
  userId: string;
}

/** Signs in through POST /api/portal/login and reads the CSRF token from /me. */
export async function portalLogin(td: TestDaemon, user: Pick<TestUser, 'email' | 'password'>): Promise<PortalSession> {
  const r = await td.fetch('/portal/login', { method: 'POST', json: { email: user.email, password: user.password } });
  if (r.status !== 200) throw new Error(`login failed: ${r.status} ${await r.text()}`);
  const setCookie = r.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0];
  const { userId } = (await r.json()) as { userId: string };
  const me = await td.fetch('/portal/me', { headers: { cookie } });
  const { csrfToken } = (await me.json()) as { csrfToken: string };
  return { cookie, setCookie, csrf: csrfToken, userId };
}

/** GET with the session cookie; returns status and parsed JSON. */
export async function getJson<T = any>(td: TestDaemon, path: string, cookie?: string): Promise<{ status: number; body: T }> {
  const r = await td.fetch(path, { headers: cookie ? { cookie } : {} });
  return { status: r.status, body: (await r.json()) as T };
}
