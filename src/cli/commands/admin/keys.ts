import { AgwError } from '../../../shared/errors.js';
import type { KeyT } from '../../../shared/schemas/keys.js';
import { createKey, listKeys, revokeKey, updateKey } from '../../../daemon/keys/service.js';
import { CliError, UsageError } from '../../errors.js';
import { flagError, limitsFromFlags, type KeyFlagOpts } from '../../key-flags.js';
import { printKey, printKeys } from '../../key-view.js';
import { mustUser } from './run.js';
import { withStore, type Opts } from './store.js';

/**
 * `agw admin key create|update|list|revoke`: the operator's side of keys with limits, on
 * the store (also while a daemon runs: it sees a change at the key's next request). The
 * same rules as the HTTP API (keys/service.ts), without a calling key: an operator may
 * give any key any limits, except a key made with a limited key, which stays within it.
 */
function cliErrorOf(e: unknown): unknown {
  if (!(e instanceof AgwError)) return e;
  if (e.code === 'INVALID_REQUEST') return flagError(e.message, e.details?.field);
  const hint =
    e.code === 'KEY_NOT_FOUND'
      ? 'key ids look like key_…: list a user’s keys with agw admin key list USER'
      : e.code === 'KEY_LIMITS_TOO_WIDE'
        ? 'this key was made with a limited key and stays within its limits: lower the value, or make a new key'
        : undefined;
  return new CliError(e.message, hint, e.code);
}

async function mapped<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw cliErrorOf(e);
  }
}

const change = (o: Opts & KeyFlagOpts) => ({ name: o.name, limits: limitsFromFlags(o) });

export const keyActions = {
  // the flags are read before the store is opened: a typo costs no connection
  keyCreate: async ([ref]: string[], o: Opts & KeyFlagOpts) => {
    const c = change(o);
    await withStore(o, async (db, config) => mapped(createKey(db, config, (await mustUser(db, ref)).id, c)), 'refuse', printKey);
  },
  keyUpdate: async ([id]: string[], o: Opts & KeyFlagOpts) => {
    const c = change(o);
    if (c.name === undefined && !c.limits) throw new UsageError('nothing to change: give --name or a limit flag (agw admin key update --help)');
    await withStore(o, async (db, config) => mapped(updateKey(db, config, id, c)), 'refuse', printKey);
  },
  keyList: ([ref]: string[], o: Opts) =>
    withStore(
      o,
      async (db) => {
        const u = await mustUser(db, ref);
        return { items: await listKeys(db, u.id) };
      },
      'refuse',
      (out: { items: KeyT[] }) => printKeys(out.items),
    ),
  keyRevoke: ([id]: string[], o: Opts) =>
    withStore(o, async (db) => {
      const k = await mapped(revokeKey(db, id));
      return { id: k.id, revoked: true };
    }),
};
