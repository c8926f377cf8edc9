import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/daemon/app.js';
import type { AppContext } from '../../src/daemon/context/index.js';
import { createLogger } from '../../src/daemon/logger.js';
import { Metrics } from '../../src/daemon/context/metrics.js';
import { openStore } from '../../src/daemon/store/open.js';
import { loadConfig } from '../../src/shared/config/load.js';

/**
 * The real application (every route group, error handling, conventions) on a real
 * loopback port, with extra probe routes a test adds before it listens: how the
 * foundation's plumbing (auth kinds, 500s) is tested where no product route exposes it.
 */
export async function startProbeApp(
  env: Record<string, string>,
  addRoutes: (app: FastifyInstance, ctx: AppContext) => void,
): Promise<{ ctx: AppContext; url: string; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agw-probe-'));
  const config = loadConfig(undefined, env);
  const db = await openStore({ store: 'sqlite', dataDir });
  let url = '';
  const ctx: AppContext = { config, db, log: createLogger('silent'), metrics: new Metrics(), dataDir, rootUrl: () => url, onClose: [] };
  const app = await buildApp(ctx);
  addRoutes(app, ctx);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  return {
    ctx,
    url,
    async close() {
      await app.close();
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
