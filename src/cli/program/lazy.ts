import type { Command } from 'commander';

/** Options every API command sees: its own plus the global --profile / --base-url. */
export type Opts = Record<string, unknown> & { profile?: string; baseUrl?: string; json?: boolean };

/**
 * A commander action that imports its module only when it runs: `load` resolves to the
 * command function, which gets the positional arguments and then the merged options.
 */
export function lazy(load: () => Promise<(...args: never[]) => unknown>) {
  return async (...a: unknown[]): Promise<void> => {
    const cmd = a[a.length - 1] as Command;
    const fn = (await load()) as (...args: unknown[]) => unknown;
    await fn(...a.slice(0, -2), cmd.optsWithGlobals());
  };
}

export const examples = (...lines: string[]): string => `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}`;

/** The connection options of every command that talks to a daemon. */
export function remote(cmd: Command): Command {
  return cmd
    .option('--profile <name>', 'credentials profile (env AGW_PROFILE; default: the default profile)')
    .option('--base-url <url>', 'daemon URL (env AGW_BASE_URL; default: the profile’s, else http://127.0.0.1:8787)');
}
