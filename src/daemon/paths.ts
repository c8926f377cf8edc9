import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Where the daemon's data and config live. Kept free of heavy imports: `agw admin` and
 * `agw serve` resolve (and validate) the config before loading the HTTP stack.
 */
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
