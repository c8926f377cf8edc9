import { startAnthropicSim, startOpenAiSim, type SimUpstream } from '../../src/daemon/demo/upstreams.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { ANTHROPIC_KEY, OPENAI_KEY } from '../helpers/gateway-fixture.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

/**
 * Several real daemons on ONE PostgreSQL database, as behind a load balancer: each has
 * its own HTTP server, config and connection pool (so nothing is shared in-process but
 * the simulated upstreams); whatever keeps them consistent is the database.
 */
export interface Cluster {
  daemons: TestDaemon[];
  db: TestDatabase;
  openai: SimUpstream;
  anthropic: SimUpstream;
  /** Round-robin: the daemon for the i-th request. */
  at(i: number): TestDaemon;
  close(): Promise<void>;
}

export async function startCluster(n: number, opts: { yaml?: string; poolMax?: number } = {}): Promise<Cluster> {
  const db = await createTestDatabase({ migrated: false });
  const openai = await startOpenAiSim({ apiKey: OPENAI_KEY, record: false });
  const anthropic = await startAnthropicSim({ apiKey: ANTHROPIC_KEY, record: false });
  const env = {
    AGW_PROVIDER_OPENAI_BASE_URL: openai.url,
    AGW_PROVIDER_ANTHROPIC_BASE_URL: anthropic.url,
    AGW_PROVIDER_OPENAI_KEY: OPENAI_KEY,
    AGW_PROVIDER_ANTHROPIC_KEY: ANTHROPIC_KEY,
  };
  const store = `${db.url}?pool_max=${opts.poolMax ?? 5}`;
  const daemons: TestDaemon[] = [];
  try {
    // started together: they race to migrate the empty database (the advisory lock lets one do it)
    daemons.push(...(await Promise.all(Array.from({ length: n }, () => startTestDaemon({ yaml: opts.yaml, env, store })))));
  } catch (e) {
    await Promise.all(daemons.map((d) => d.close()));
    await Promise.all([openai.close(), anthropic.close()]);
    await db.drop();
    throw e;
  }
  return {
    daemons,
    db,
    openai,
    anthropic,
    at: (i) => daemons[i % daemons.length],
    async close() {
      await Promise.all(daemons.map((d) => d.close()));
      await Promise.all([openai.close(), anthropic.close()]);
      await db.drop();
    },
  };
}

export interface Answer {
  status: number;
  body: { code?: string; [k: string]: unknown };
}

export async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  let body: Answer['body'];
  try {
    body = JSON.parse(text) as Answer['body'];
  } catch {
    body = { raw: text };
  }
  return { status: res.status, body };
}

export function tally(answers: Answer[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const k = `${a.status}${a.body.code ? ` ${a.body.code}` : ''}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}
