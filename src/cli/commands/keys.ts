/** `agw keys list|create|update|revoke`: your keys with limits, over GET/POST/PATCH/DELETE /api/keys. */
import type { KeyT } from '../../shared/schemas/keys.js';
import { Api } from '../api.js';
import type { GlobalOpts } from '../auth.js';
import { CliError, UsageError } from '../errors.js';
import { flagError, limitsFromFlags, type KeyFlagOpts } from '../key-flags.js';
import { printKey, printKeys } from '../key-view.js';
import { printJson } from '../output.js';

type Opts = GlobalOpts & KeyFlagOpts;

const keyPath = (id: string) => `/keys/${encodeURIComponent(id)}`;

/** The server refused the limits the flags gave (e.g. --budget-period without a budget): a usage error, exit 2. */
async function flagsChecked<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof CliError && e.code === 'INVALID_REQUEST') throw flagError(e.message, (e as { details?: { field?: unknown } }).details?.field);
    throw e;
  }
}

export async function list(opts: Opts): Promise<void> {
  const out = await (await Api.open(opts)).get<{ items: KeyT[] }>('/keys');
  if (opts.json) return printJson(out);
  printKeys(out.items);
}

export async function create(opts: Opts): Promise<void> {
  const name = opts.name?.trim();
  if (!name) throw new UsageError('give the key a name: agw keys create --name NAME [limits]');
  const limits = limitsFromFlags(opts);
  const api = await Api.open(opts);
  const k = await flagsChecked(api.json<KeyT & { key: string }>('POST', '/keys', { json: { name, ...(limits ? { limits } : {}) } }));
  if (opts.json) return printJson(k);
  printKey(k);
}

export async function update(id: string, opts: Opts): Promise<void> {
  const limits = limitsFromFlags(opts);
  if (opts.name === undefined && !limits) throw new UsageError('nothing to change: give --name or a limit flag (agw keys update --help)');
  const api = await Api.open(opts);
  const k = await flagsChecked(api.json<KeyT>('PATCH', keyPath(id), { json: { ...(opts.name !== undefined ? { name: opts.name } : {}), ...(limits ? { limits } : {}) } }));
  if (opts.json) return printJson(k);
  printKey(k);
}

export async function revoke(id: string, opts: Opts): Promise<void> {
  const k = await (await Api.open(opts)).json<KeyT>('DELETE', keyPath(id));
  if (opts.json) return printJson(k);
  process.stdout.write(`revoked ${k.id}${k.name ? ` (${k.name})` : ''}, and the keys made with it\n`);
}
