import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '../shared/config/load.js';
import type { ResolvedConfig } from '../shared/config/resolve.js';
import { buildApp, type App } from './app.js';
import type { AppContext } from './context/index.js';
import { createLogger, releaseLogs } from './logger.js';
import { Metrics } from './context/metrics.js';
import { openStore } from './store/open.js';
import { SqliteDb } from './store/sqlite.js';
import { syncTiers } from './store/tiers.js';
import { startDemo, type Demo } from './demo/demo.js';
import { moneyOf } from './money/index.js';
import { startKeyUsageFlush } from './auth/key-usage.js';
import { configFileFor, defaultDataDir } from './paths.js';
import { startPruner } from './requests/retention.js';
import { startTelemetry, telemetryOf } from './telemetry/index.js';

export { configFileFor, defaultDataDir };

export interface ServeOptions {
  port?: number;
  host?: string;
  dataDir?: string;
  configFile?: string;
  demo?: boolean;
  /** Override the loaded config (tests). */
  config?: ResolvedConfig;
  logLevel?: string;
  /** Hold log lines back until `Daemon.releaseLogs()` (agw serve on a terminal prints its banner first). */
  holdLogs?: boolean;
}

export interface Daemon {
  url: string;
  app: App;
  ctx: AppContext;
  demo?: Demo;
  /** Writes the log lines held back by `holdLogs`, and everything after at once. */
  releaseLogs(): void;
  close(): Promise<void>;
}

/** Starts the daemon: store, config, HTTP server. Throws ConfigError on a bad config. */
export async function startDaemon(opts: ServeOptions = {}): Promise<Daemon> {
  const dataDir = resolve(opts.dataDir ?? defaultDataDir());
  const config = opts.config ?? loadConfig(configFileFor(dataDir, opts.configFile));
  const log = createLogger(opts.logLevel ?? config.logLevel, { hold: opts.holdLogs });
  const demo = opts.demo ? await startDemo(config) : undefined;
  const db = await openStore({ store: config.store, dataDir });
  if (db instanceof SqliteDb) {
    try {
      const replayed = await db.openLedger(log);
      if (replayed) log.warn({ replayed }, 'applied gateway bookings left in the journal by the previous run');
    } catch (e) {
      await db.close();
      await demo?.close();
      throw e;
    }
  }
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
    await db.tx((q) => syncTiers(q, config));
    const telemetry = config.telemetry ? await startTelemetry(ctx, config.telemetry, agwVersion()) : undefined;
    app = await buildApp(ctx);
    await moneyOf(ctx); // PostgreSQL: this daemon registers for budget leases before it serves
    // after the gateway's own close step (which lets calls in flight settle): their spans are exported too
    if (telemetry) ctx.onClose.push(() => telemetry.shutdown());
    await app.listen({ port: opts.port ?? 8787, host: opts.host ?? '127.0.0.1' });
  } catch (e) {
    await telemetryOf(ctx)?.shutdown().catch(() => undefined);
    await db.close();
    await demo?.close();
    throw e;
  }
  startKeyUsageFlush(ctx);
  const addr = app.server.address();
  const host = opts.host ?? '127.0.0.1';
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  listenUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (demo) await demo.seed(ctx);
  ctx.onClose.unshift(startPruner(ctx));
  // on SQLite, whether the native helper maps the store's files (native/README.md) or system calls reach them
  log.info({ url: listenUrl, dataDir, store: db.dialect, ...(db.fileAccess ? { files: db.fileAccess() } : {}) }, 'listening');

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // Stop accepting; keep-alive connections are closed as soon as they are idle (their
      // request in flight answered); after 10 s whatever is left is cut.
      const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
      const force = setTimeout(() => app.server.closeAllConnections(), 10_000);
      sweep.unref();
      force.unref();
      await app.close();
      clearInterval(sweep);
      clearTimeout(force);
      for (const fn of [...ctx.onClose, () => demo?.close()]) {
        try {
          await fn();
        } catch (err) {
          log.error({ err }, 'shutdown step failed');
        }
      }
      await db.close();
      log.info('stopped');
      log.flush();
    })());
  return { url: listenUrl, app, ctx, demo, close, releaseLogs: () => releaseLogs(log) };
}

/** agw's version (package.json), for the telemetry resource. */
function agwVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}
