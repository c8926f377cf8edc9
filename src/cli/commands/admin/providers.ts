import { readKeyStats } from '../../../daemon/store/provider-key-stats.js';
import { printTable } from '../../output.js';
import { withStore, type Opts } from './store.js';

/**
 * `agw admin providers [--json]` → {"items":[{id, keys:[{name, healthy, coolingUntil,
 * calls, failures}]}]} (CONTRACT "Several keys per provider"): every provider of the config
 * that has a key, its keys by name, with what the daemons of this store counted (each
 * writes its figures every `gateway.keyStatsFlushMs` and when it stops: calls and failures
 * are summed over them; a key is cooling until the latest cooldown any of them noted).
 * Never a secret: the keys are named, not shown.
 */
interface KeyView {
  name: string;
  healthy: boolean;
  coolingUntil: string | null;
  calls: number;
  failures: number;
}

function human(out: { items: { id: string; keys: KeyView[] }[] }): void {
  if (!out.items.length) {
    process.stdout.write('no provider has a key in this config\n');
    return;
  }
  const rows = out.items.flatMap((p) => p.keys.map((k) => [p.id, k.name, k.healthy ? 'healthy' : 'cooling', k.coolingUntil ?? '-', k.calls, k.failures]));
  printTable(['PROVIDER', 'KEY', 'HEALTH', 'COOLING UNTIL', 'CALLS', 'FAILURES'], rows);
}

export const providerActions = {
  providers: (_a: string[], o: Opts) =>
    withStore(
      o,
      async (db, config) => {
        const now = Date.now();
        const stats = await readKeyStats(db);
        const byKey = new Map(stats.map((s) => [`${s.provider}\n${s.key}`, s]));
        const items = [...config.providers.values()]
          .filter((p) => p.keys.length > 0)
          .map((p) => ({
            id: p.def.id,
            keys: p.keys.map((k): KeyView => {
              const s = byKey.get(`${p.def.id}\n${k.name}`);
              const cooling = s && s.coolingUntil > now ? s.coolingUntil : null;
              return { name: k.name, healthy: cooling === null, coolingUntil: cooling === null ? null : new Date(cooling).toISOString(), calls: s?.calls ?? 0, failures: s?.failures ?? 0 };
            }),
          }));
        return { items };
      },
      'refuse',
      human,
    ),
};
