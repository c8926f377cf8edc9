import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../shared/config/load.js';
import type { ResolvedConfig } from '../shared/config/resolve.js';
import { buildApp, type App } from './app.js';
import type { AppContext } from './context.js';
import { createLogger } from './logger.js';
import { Metrics } from './metrics.js';
import { openStore } from './store/open.js';
import { startDemo, type Demo } from './demo/demo.js';

export interface ServeOptions {
  port?: number;
  host?: string;
  dataDir?: string;
  configFile?: string;
  demo?: boolean;
  /** Override the loaded config (tests). */
  config?: ResolvedConfig;
  logLevel?: string;
}

export interface Daemon {
  url: string;
  app: App;
  ctx: AppContext;
  demo?: Demo;
  close(): Promise<void>;
}

export function defaultDataDir(env = process.env): string {
  return env.AGW_DATA || join(homedir(), '.agw');
}

/** The config file named by --config / AGW_CONFIG, else DATA/agw.yaml if present. */
export function configFileFor(dataDir: string, explicit?: string, env = process.env): string | undefined {
  const f = explicit ?? env.AGW_CONFIG;
  if (f) return resolve(f);
  const implicit = join(dataDir, 'agw.yaml');
  return existsSync(implicit) ? implicit : undefined;
}

/** Starts the daemon: store, config, HTTP server. Throws ConfigError on a bad config. */
export async function startDaemon(opts: ServeOptions = {}): Promise<Daemon> {
  const dataDir = resolve(opts.dataDir ?? defaultDataDir());
  const config = opts.config ?? loadConfig(configFileFor(dataDir, opts.configFile));
  const log = createLogger(opts.logLevel ?? config.logLevel);
  const demo = opts.demo ? await startDemo(config) : undefined;
  const db = await openStore({ store: config.store, dataDir });
  let listenUrl = '';
  const ctx: AppContext = {
    config,
    db,
    log,
    metrics: new Metrics(),
    dataDir,
    rootUrl: () => config.publicUrl ?? listenUrl,
    onClose: [],
  };
  let app: App;
  try {
    app = await buildApp(ctx);
    await app.listen({ port: opts.port ?? 8787, host: opts.host ?? '127.0.0.1' });
  } catch (e) {
    await db.close();
    await demo?.close();
    throw e;
  }
  const addr = app.server.address();
  const host = opts.host ?? '127.0.0.1';
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  listenUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (demo) await demo.seed(ctx);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const force = setTimeout(() => app.server.closeAllConnections(), 10_000);
      force.unref();
      await app.close();
      clearTimeout(force);
      for (const fn of ctx.onClose) await fn();
      await demo?.close();
      await db.close();
      log.flush();
    })());
  return { url: listenUrl, app, ctx, demo, close };
}
