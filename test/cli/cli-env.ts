import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, type CliResult } from '../helpers/cli.js';

/** Escape sequences (colour, cursor movement): never in output that is not a terminal. */
export const ANSI = /\x1b[[\]]/;

export interface CliEnv {
  /** a scratch folder, the default cwd */
  dir: string;
  /** AGW_CONFIG_DIR of this environment */
  configDir: string;
  run(args: string[], opts?: { env?: Record<string, string | undefined>; input?: string; cwd?: string }): Promise<CliResult>;
  cleanup(): void;
}

/**
 * The built CLI with its own config directory and no keyring (the file fallback), so
 * tests never touch the real ~/.config/agw. `env` applies to every run.
 */
export function cliEnv(env: Record<string, string | undefined> = {}): CliEnv {
  const dir = mkdtempSync(join(tmpdir(), 'agw-cli-'));
  const configDir = join(dir, 'config');
  return {
    dir,
    configDir,
    run: (args, opts = {}) =>
      runCli(args, {
        cwd: opts.cwd ?? dir,
        input: opts.input,
        env: { AGW_CONFIG_DIR: configDir, AGW_NO_KEYRING: '1', AGW_PROFILE: undefined, ...env, ...opts.env },
      }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Parse stdout as the one JSON document it must be. */
export function json<T = unknown>(r: CliResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`stdout is not one JSON document (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
}
