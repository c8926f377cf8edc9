import { resolve } from 'node:path';
import { ConfigError, loadConfig } from '../../../shared/config/load.js';
import { pricesDiff } from '../../../shared/config/prices-diff.js';
import { configFileFor, defaultDataDir } from '../../../daemon/paths.js';
import { UsageError } from '../../errors.js';
import { printJson, printTable } from '../../output.js';
import type { Opts } from './store.js';

const usd = (n: number | null) => (n === null ? '-' : `$${n}`);

export const priceActions = {
  /**
   * `agw admin prices diff`: where the LLM prices in force (the catalog, the config's
   * `models:` over it) differ from the bundled price data. Reads the config only, no store.
   */
  pricesDiff: async (_a: string[], o: Opts) => {
    let config;
    try {
      config = loadConfig(configFileFor(resolve(o.data ?? defaultDataDir()), o.config));
    } catch (e) {
      if (e instanceof ConfigError) throw new UsageError(e.message);
      throw e;
    }
    const diff = pricesDiff(config);
    if (o.json) return printJson(diff);
    process.stdout.write(
      `@pydantic/genai-prices ${diff.dataVersion}: ${diff.covered} of ${diff.models} LLM models priced by the data; ${diff.items.length ? `${diff.items.length} difference(s)` : 'no differences'}\n`,
    );
    if (diff.items.length)
      printTable(
        ['PROVIDER', 'MODEL', 'PRICE', 'IN FORCE', 'DATA', 'SOURCE'],
        diff.items.map((d) => [d.provider, d.model, d.price, usd(d.inForce), usd(d.data), d.source]),
      );
  },
};
