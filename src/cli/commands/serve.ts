import { ConfigError } from '../../shared/config/load.js';
import { UsageError } from '../errors.js';

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
  const { startDaemon } = await import('../../daemon/serve.js');
  let daemon;
  try {
    daemon = await startDaemon({ port, host: opts.host, dataDir: opts.data, configFile: opts.config, demo: opts.demo });
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message, 'fix the keys named above, or check the file with: agw config check FILE');
    throw e;
  }
  const out = (s: string) => process.stdout.write(s + '\n');
  if (opts.json) out(JSON.stringify({ event: 'listening', url: daemon.url }));
  else out(`agw listening on ${daemon.url}`);
  const seeded = daemon.demo?.seeded;
  if (seeded) {
    const lines = [
      '',
      'demo mode: simulated openai and anthropic upstreams, demo user with $10 in the wallet',
      `  portal login  ${seeded.email} / ${seeded.password}  at ${daemon.url}/`,
      `  API key       ${seeded.key}`,
      '  try:',
      `  curl -s ${daemon.url}/api/gateway/chat -H "Authorization: Bearer ${seeded.key}" -H 'content-type: application/json' \\`,
      `    -d '{"model":"smart-pro","messages":[{"role":"user","content":"Hello"}]}'`,
    ];
    if (opts.json) out(JSON.stringify({ event: 'demo', ...seeded, url: daemon.url }));
    else process.stdout.write(lines.join('\n') + '\n');
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    daemon.ctx.log.info({ signal }, 'shutting down');
    daemon.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  await new Promise<void>(() => {});
}
