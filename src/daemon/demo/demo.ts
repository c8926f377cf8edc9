import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { newHealth } from '../../shared/config/provider-keys.js';
import type { ResolvedConfig } from '../../shared/config/resolve.js';
import type { AppContext } from '../context/index.js';
import { startDemoUpstreams, type DemoUpstreams } from './upstreams.js';
import { createUser, userByEmail } from '../store/users.js';
import { createApiKey, listApiKeys, revokeApiKey, verifyApiKey } from '../store/keys.js';
import type { Queryable } from '../store/db.js';
import { credit, getWalletRow } from '../money/wallets.js';
import { hashPassword } from '../auth/password.js';
import { nanoToUsd, usdToNano } from '../../shared/money.js';

export const DEMO_EMAIL = 'demo@agw.local';
export const DEMO_PASSWORD = 'demo-password';

export interface DemoSeed {
  email: string;
  password: string;
  key: string;
  /** the demo wallet's balance now (USD): $10 on the first start, what is left after a restart */
  balance: number;
}

/** The demo key's secret, kept in the data directory (mode 0600) so a restart shows the same key. */
const KEY_FILE = 'demo-key.json';
const DEMO_KEY_NAME = 'demo';

export interface Demo {
  upstreams: DemoUpstreams;
  seeded?: DemoSeed;
  seed(ctx: AppContext): Promise<DemoSeed>;
  close(): Promise<void>;
}

/**
 * `agw serve --demo`: simulated upstreams for the two chat providers on loopback
 * (deterministic replies, real SSE, token usage), wired into the config in place of the
 * real ones, and a demo user with a funded wallet and a fresh key. Self top-up is on.
 */
export async function startDemo(config: ResolvedConfig): Promise<Demo> {
  config.wallet.selfTopup = true;
  // a model the catalog does not have is answered 404, as the provider answers it (never
  // served and charged at the provider's dearest price)
  const upstreams = await startDemoUpstreams({ chunkDelayMs: 15, knownModels: (provider, model) => config.models.has(`${provider}/${model}`) });
  for (const [id, sim] of [
    ['openai', upstreams.openai],
    ['anthropic', upstreams.anthropic],
  ] as const) {
    const p = config.providers.get(id)!;
    const apiKey = `demo-${id}-key`;
    config.providers.set(id, { ...p, baseUrl: sim.url, apiKey, keys: [{ name: 'default', weight: 1, rpm: null, tpm: null, apiKey, health: newHealth(null, null) }] });
  }
  const demo: Demo = {
    upstreams,
    async seed(ctx) {
      const passwordHash = await hashPassword(DEMO_PASSWORD);
      const seed = await ctx.db.tx(async (q) => {
        let user = await userByEmail(q, DEMO_EMAIL);
        if (!user) {
          user = await createUser(q, {
            email: DEMO_EMAIL,
            name: 'Demo User',
            tier: 'pro',
            passwordHash,
          });
        }
        const wallet = await getWalletRow(q, user.id);
        if (wallet && Number(wallet.balance_nusd) <= 0) {
          await credit(q, { userId: user.id, amount: usdToNano(10), type: 'credit', description: 'demo credit' });
        }
        const key = await demoKey(q, user.id, await readKeyFile(ctx.dataDir));
        const balance = nanoToUsd(Number((await getWalletRow(q, user.id))?.balance_nusd ?? 0));
        return { email: DEMO_EMAIL, password: DEMO_PASSWORD, key, balance };
      });
      await writeFile(join(ctx.dataDir, KEY_FILE), JSON.stringify({ key: seed.key }), { mode: 0o600 });
      demo.seeded = seed;
      return seed;
    },
    close: () => upstreams.close(),
  };
  return demo;
}

async function readKeyFile(dataDir: string): Promise<string | undefined> {
  try {
    const k = (JSON.parse(await readFile(join(dataDir, KEY_FILE), 'utf8')) as { key?: unknown }).key;
    return typeof k === 'string' ? k : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The demo user's one "demo" key: the one a previous start printed, while it still works;
 * otherwise a new one, and earlier "demo" keys are revoked, so restarts never pile them up.
 */
async function demoKey(q: Queryable, userId: string, previous: string | undefined): Promise<string> {
  const row = previous ? await verifyApiKey(q, previous) : undefined;
  if (row && row.user_id === userId) return previous!;
  for (const k of await listApiKeys(q, userId)) if (k.name === DEMO_KEY_NAME && k.revoked_at === null) await revokeApiKey(q, k.id);
  return (await createApiKey(q, userId, DEMO_KEY_NAME)).key;
}
