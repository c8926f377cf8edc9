/** `agw login`, `logout`, `whoami` and `profile list|use`. */
import { Api } from '../api.js';
import { loadOAuthModule, resolveAuth, toEpochMs, type AuthState, type GlobalOpts } from '../auth.js';
import { deleteCredentials, loadCredentials, saveCredentials, type Credentials, type PortalSession } from '../credentials.js';
import { CliError, UsageError } from '../errors.js';
import { bold, dim, printJson, printKv, printTable } from '../output.js';
import { loadCliConfig, rememberProfile, resolveTarget, saveCliConfig, checkProfileName, type Target } from '../profiles.js';
import { readSecret } from '../prompt.js';

interface LoginOpts extends GlobalOpts {
  withToken?: boolean;
  email?: string;
  browser?: boolean;
}

interface Identity {
  userId?: string;
  tier?: string;
  email?: string;
}

/** Who a bearer credential belongs to (entitlements), checking it on the way (401 = bad key). */
async function identify(target: Target, token: string): Promise<Identity> {
  const api = new Api({ target, bearer: { token, kind: 'key', source: 'env' }, store: null });
  try {
    const e = await api.get<{ userId: string; tier: string }>('/gateway/entitlements', { auth: 'bearer' });
    return { userId: e.userId, tier: e.tier };
  } catch (e) {
    // a daemon without the gateway routes: the wallet still proves the key
    if ((e as { status?: number }).status !== 404) throw e;
    await api.get('/wallet', { auth: 'bearer' });
    return {};
  }
}

function report(opts: LoginOpts, out: Record<string, unknown>, line: string): void {
  if (opts.json) printJson(out);
  else process.stdout.write(line + '\n');
}

export async function login(opts: LoginOpts): Promise<void> {
  if (opts.withToken && opts.email) throw new UsageError('use either --with-token or --email, not both');
  const target = resolveTarget(opts);
  // credentials of one profile are for one daemon: logging in to another starts afresh
  const sameDaemon = loadCliConfig().profiles[target.profile]?.baseUrl === target.baseUrl;
  const creds: Credentials = sameDaemon ? (await loadCredentials(target.profile)).creds : {};
  let who: Identity = {};
  let kind: 'key' | 'oauth' | 'session';
  if (opts.withToken) {
    const key = await readSecret('agw key: ');
    if (!key) throw new UsageError('no key on stdin', 'pipe it in: agw login --with-token < key.txt');
    if (!key.startsWith('agw_')) throw new UsageError('that is not an agw_ key', 'keys start with agw_; create one in the portal or with agw admin key create');
    who = await identify(target, key).catch((e: unknown) => {
      // the key refused is the one just given, not AGW_API_KEY nor a stored one
      if (e instanceof CliError && (e as { status?: number }).status === 401) {
        throw Object.assign(new CliError(e.message, 'the key given to agw login was refused (mistyped, revoked or expired): check it, or make one in the portal or with agw keys create', e.code), { status: 401 });
      }
      throw e;
    });
    Object.assign(creds, { apiKey: key, oauth: undefined });
    kind = 'key';
  } else if (opts.email) {
    const password = await readSecret('Password: ');
    if (!password) throw new UsageError('no password on stdin', 'pipe it in, or run this on a terminal to be prompted');
    creds.session = await portalLogin(target, opts.email, password);
    who = { email: opts.email };
    kind = 'session';
  } else {
    const oauth = await loadOAuthModule();
    const tokens = await oauth.loginWithBrowser({
      baseUrl: target.baseUrl,
      openBrowser: opts.browser === false ? () => false : undefined,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    Object.assign(creds, { apiKey: undefined, oauth: { ...tokens, expiresAt: toEpochMs(tokens.expiresAt) } });
    who = await identify(target, tokens.accessToken).catch(() => ({}));
    kind = 'oauth';
  }
  const store = await saveCredentials(target.profile, creds);
  rememberProfile(target.profile, target.baseUrl);
  const as = who.email ?? who.userId;
  report(
    opts,
    { profile: target.profile, baseUrl: target.baseUrl, kind, store, ...who },
    `logged in to ${target.baseUrl}${as ? ` as ${as}` : ''}${who.tier ? ` (tier ${who.tier})` : ''}; profile ${target.profile}, ${kind} in the ${store}`,
  );
}

/** POST /portal/login and keep the service_session cookie. */
async function portalLogin(target: Target, email: string, password: string): Promise<PortalSession> {
  const api = new Api({ target, store: null });
  const res = await api.send('POST', '/portal/login', { auth: 'none', json: { email, password } });
  for (const c of res.headers.getSetCookie()) {
    const m = /^service_session=([^;]*)/.exec(c);
    if (!m || !m[1]) continue;
    const maxAge = /;\s*max-age=(\d+)/i.exec(c);
    const expires = /;\s*expires=([^;]+)/i.exec(c);
    const expiresAt = maxAge ? Date.now() + Number(maxAge[1]) * 1000 : expires ? Date.parse(expires[1]) || undefined : undefined;
    return { cookie: decodeURIComponent(m[1]), email, expiresAt };
  }
  throw new CliError('the server accepted the login but set no service_session cookie', undefined, 'NO_SESSION');
}

export async function logout(opts: GlobalOpts): Promise<void> {
  const target = resolveTarget(opts);
  const { creds } = await loadCredentials(target.profile);
  if (creds.session) {
    const api = new Api({ target, session: creds.session, store: null });
    await api.send('POST', '/portal/logout', { auth: 'session', timeoutMs: 5000 }).catch(() => undefined);
  }
  const removed = await deleteCredentials(target.profile);
  if (opts.json) {
    printJson({ profile: target.profile, removed });
    return;
  }
  process.stdout.write(removed ? `logged out of profile ${target.profile}\n` : `profile ${target.profile} had no stored credentials\n`);
  if (process.env.AGW_API_KEY) process.stderr.write('note: AGW_API_KEY is still set in this environment\n');
}

export async function whoami(opts: GlobalOpts): Promise<void> {
  const auth = await resolveAuth(opts);
  const { target, bearer, session } = auth;
  if (!bearer && !session) {
    throw new CliError(`not logged in (profile ${target.profile})`, 'log in: agw login (browser), agw login --with-token < key.txt, or set AGW_API_KEY', 'NOT_LOGGED_IN');
  }
  // what commands send: the key or OAuth login (AGW_API_KEY first), the portal session for the portal's own routes
  const kind = bearer ? bearer.kind : 'session';
  const credentials = [bearer && (bearer.source === 'env' ? 'AGW_API_KEY' : bearer.kind), session && 'session'].filter(Boolean).join('+');
  const me = await accountOf(auth);
  const out: Record<string, unknown> = {
    profile: target.profile,
    baseUrl: target.baseUrl,
    kind,
    source: bearer ? bearer.source : auth.store,
    userId: me.userId ?? null,
    email: me.email ?? null,
    tier: me.tier ?? null,
    credentials,
  };
  if (opts.json) return printJson(out);
  printKv([
    ['user', me.email ? `${me.email} (${me.userId})` : (me.userId ?? '?')],
    ['tier', me.tier ?? '?'],
    ['profile', target.profile],
    ['base url', target.baseUrl],
    ['credentials', `${credentials}${bearer && session ? ` (commands use the ${kind === 'key' ? 'key' : 'OAuth login'}; the session for agw logout and the portal)` : ''}`],
    ['source', String(out.source ?? '-')],
  ]);
}

/** The account behind the credentials (GET /api/account; an older daemon: the entitlements, or the session's /portal/me). */
async function accountOf(auth: AuthState): Promise<{ userId?: string; email?: string | null; tier?: string }> {
  const api = new Api(auth);
  try {
    return await api.get<{ userId: string; email: string | null; tier: string }>('/account', { auth: 'account' });
  } catch (e) {
    if ((e as { status?: number }).status !== 404) throw e;
  }
  if (auth.bearer) return identify(auth.target, auth.bearer.token);
  return api.get<{ userId: string; email: string; tier: string }>('/portal/me', { auth: 'session' });
}

const kinds = (c: Credentials) => [c.apiKey && 'key', c.oauth && 'oauth', c.session && 'session'].filter(Boolean).join('+');

export async function profileList(opts: GlobalOpts): Promise<void> {
  const config = loadCliConfig();
  const def = config.defaultProfile ?? 'default';
  const rows = [];
  for (const [name, p] of Object.entries(config.profiles)) {
    const { creds, store } = await loadCredentials(name);
    rows.push({ name, default: name === def, baseUrl: p.baseUrl ?? null, credentials: kinds(creds) || null, store });
  }
  if (opts.json) {
    printJson({ defaultProfile: def, profiles: rows });
    return;
  }
  if (rows.length === 0) {
    process.stdout.write(`no profiles yet ${dim('(agw login creates one)')}\n`);
    return;
  }
  printTable(['', 'PROFILE', 'BASE URL', 'CREDENTIALS', 'STORED IN'], rows.map((r) => [r.default ? '*' : '', r.default ? bold(r.name) : r.name, r.baseUrl, r.credentials ?? '-', r.store ?? '-']));
}

export async function profileUse(name: string): Promise<void> {
  const config = loadCliConfig();
  if (!config.profiles[checkProfileName(name)]) {
    const known = Object.keys(config.profiles);
    throw new CliError(`no profile ${name}`, known.length ? `profiles: ${known.join(', ')}` : 'create one: agw login --profile NAME', 'PROFILE_NOT_FOUND');
  }
  config.defaultProfile = name;
  saveCliConfig(config);
  process.stdout.write(`default profile: ${name}\n`);
}
