import { writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { isatty } from 'node:tty';
import { formatUsd } from '../../shared/format.js';
import { ConfigError, loadConfig } from '../../shared/config/load.js';
import { configFileFor, defaultDataDir } from '../../daemon/paths.js';
import { CliError, UsageError, storeError } from '../errors.js';

interface ServeOpts {
  port: string;
  host: string;
  data?: string;
  config?: string;
  demo?: boolean;
  json?: boolean;
}

export async function serve(opts: ServeOpts): Promise<void> {
  const port = Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0..65535, got ${opts.port}`);
  // The config is checked before the HTTP stack loads: a bad file fails fast, store untouched.
  const dataDir = resolve(opts.data ?? defaultDataDir());
  let config;
  try {
    config = loadConfig(configFileFor(dataDir, opts.config));
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message, 'fix the keys named above, or check the file with: agw config check FILE');
    throw e;
  }
  const { startDaemon } = await import('../../daemon/serve.js');
  let daemon;
  try {
    // on a terminal the listening line and the banner come first, the start-up's log lines after them
    daemon = await startDaemon({ port, host: opts.host, dataDir, config, demo: opts.demo, holdLogs: !opts.json && isatty(2) });
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')
      throw new CliError(`cannot listen on ${opts.host}:${port}: ${(e as Error).message}`, 'pick another --port (0 picks a free one) or --host', code);
    throw storeError(e);
  }
  // First signal: stop accepting, finish in-flight requests (bounded), close the store, exit 0.
  // A second signal while that runs exits at once (1).
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      process.stderr.write(`agw: ${signal} again, exiting without waiting for in-flight requests\n`);
      process.exit(1);
    }
    stopping = true;
    daemon.ctx.log.info({ signal }, 'shutting down');
    daemon.close().then(
      () => process.exit(0),
      (e: unknown) => {
        process.stderr.write(`agw: shutdown failed: ${(e as Error)?.message ?? e}\n`);
        process.exit(1);
      },
    );
  };
  // Handlers are in place before the listening line: a supervisor may signal at once.
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // written to the descriptor at once: the daemon runs in a worker (serve-host.ts), whose
  // process.stdout reaches the terminal through the main thread, after log lines written
  // to fd 2 directly; the banner must come before the start-up's log lines
  const out = (s: string) => writeSync(1, s + '\n');
  if (opts.json) out(JSON.stringify({ event: 'listening', url: daemon.url }));
  else out(`agw listening on ${daemon.url}`);
  const seeded = daemon.demo?.seeded;
  if (seeded) {
    const lines = [
      '',
      `demo mode: simulated openai and anthropic upstreams, demo user with ${formatUsd(seeded.balance)} in the wallet`,
      `  portal login  ${seeded.email} / ${seeded.password}  at ${daemon.url}/`,
      `  API key       ${seeded.key}`,
      '  try:',
      `  curl -s ${daemon.url}/api/gateway/chat -H "Authorization: Bearer ${seeded.key}" -H 'content-type: application/json' \\`,
      `    -d '{"model":"smart-pro","messages":[{"role":"user","content":"Hello"}]}'`,
    ];
    if (opts.json) out(JSON.stringify({ event: 'demo', ...seeded, url: daemon.url }));
    else out(lines.join('\n'));
  }
  daemon.releaseLogs();
  await new Promise<void>(() => {});
}

