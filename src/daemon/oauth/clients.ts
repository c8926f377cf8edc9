import type { Queryable } from '../store/db.js';

/**
 * OAuth clients. Every client is public (no secret; PKCE S256 is required). Redirect URIs
 * must match a registered one exactly, with ONE exception (RFC 8252 §7.3): a registered
 * loopback IP redirect (`http://127.0.0.1/...` or `http://[::1]/...`) matches that URI on
 * any port, because native apps such as `agw login` listen on a port picked at run time.
 */
export interface OAuthClient {
  clientId: string;
  name: string;
  redirectUris: string[];
  trusted: boolean;
}

/** The client `agw login` uses; the daemon registers it at start. */
export const CLI_CLIENT: OAuthClient = {
  clientId: 'agw-cli',
  name: 'agw command line',
  redirectUris: ['http://127.0.0.1/callback', 'http://[::1]/callback'],
  trusted: true,
};

interface ClientRow {
  client_id: string;
  name: string;
  redirect_uris: string;
  trusted: number;
}

function parseUris(text: string): string[] {
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v.filter((u): u is string => typeof u === 'string') : [];
  } catch {
    return [];
  }
}

export async function getClient(q: Queryable, clientId: string): Promise<OAuthClient | undefined> {
  const row = await q.get<ClientRow>('SELECT client_id, name, redirect_uris, trusted FROM oauth_clients WHERE client_id = ?', [clientId]);
  if (!row) return undefined;
  return { clientId: row.client_id, name: row.name, redirectUris: parseUris(row.redirect_uris), trusted: Number(row.trusted) === 1 };
}

/** Registers (or refreshes) a client with a fixed id, e.g. the built-in `agw-cli`. */
export async function upsertClient(q: Queryable, c: OAuthClient): Promise<void> {
  await q.run(
    `INSERT INTO oauth_clients (client_id, name, redirect_uris, trusted, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (client_id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris, trusted = excluded.trusted`,
    [c.clientId, c.name, JSON.stringify(c.redirectUris), c.trusted ? 1 : 0, Date.now()],
  );
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]']);

function isLoopback(u: URL): boolean {
  return u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname);
}

/** Whether `uri` is one of the client's redirect URIs (exact, or loopback on any port). */
export function redirectUriAllowed(client: OAuthClient, uri: string): boolean {
  if (client.redirectUris.includes(uri)) return true;
  let got: URL;
  try {
    got = new URL(uri);
  } catch {
    return false;
  }
  if (!isLoopback(got) || got.hash || got.username || got.password) return false;
  return client.redirectUris.some((r) => {
    let reg: URL;
    try {
      reg = new URL(r);
    } catch {
      return false;
    }
    // everything but the port must be identical to the registration
    return isLoopback(reg) && !reg.port && reg.hostname === got.hostname && reg.pathname === got.pathname && reg.search === got.search;
  });
}
