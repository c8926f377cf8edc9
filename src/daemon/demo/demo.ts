import { newHealth } from '../../shared/config/provider-keys.js';
import type { ResolvedConfig } from '../../shared/config/resolve.js';
import type { AppContext } from '../context/index.js';
import { startDemoUpstreams, type DemoUpstreams } from './upstreams.js';
import { createUser, userByEmail } from '../store/users.js';
import { createApiKey } from '../store/keys.js';
import { credit, getWalletRow } from '../money/wallets.js';
import { hashPassword } from '../auth/password.js';
import { usdToNano } from '../../shared/money.js';

export const DEMO_EMAIL = 'demo@agw.local';
export const DEMO_PASSWORD = 'demo-password';

export interface DemoSeed {
  email: string;
  password: string;
  key: string;
}

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
  const upstreams = await startDemoUpstreams({ chunkDelayMs: 15 });
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
        const { key } = await createApiKey(q, user.id, 'demo');
        return { email: DEMO_EMAIL, password: DEMO_PASSWORD, key };
      });
      demo.seeded = seed;
      return seed;
    },
    close: () => upstreams.close(),
  };
  return demo;
}
