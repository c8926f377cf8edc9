/**
 * Errors become exit codes in one place. `UsageError` (exit 2) is something the user
 * typed wrong; `CliError` (exit 1) is an operation that failed, with an optional hint
 * saying what to do next. Anything else is a bug and prints its stack.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
    readonly code?: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, hint, 'USAGE', 2);
  }
}

/** A store that cannot be opened (unreachable, schema too new) becomes a CliError: message, hint, code. */
export function storeError(e: unknown): unknown {
  const se = e as { name?: string; message: string; hint?: string; code?: string };
  return se?.name === 'StoreOpenError' ? new CliError(se.message, se.hint, se.code) : e;
}

export function reportError(e: unknown, json: boolean): number {
  if (e instanceof CliError) {
    if (json) process.stderr.write(JSON.stringify({ error: e.message, code: e.code, hint: e.hint }) + '\n');
    else {
      process.stderr.write(`error${e.code && e.code !== 'USAGE' ? ` ${e.code}` : ''}: ${e.message}\n`);
      if (e.hint) process.stderr.write(`hint: ${e.hint}\n`);
    }
    return e.exitCode;
  }
  process.stderr.write(`agw: unexpected error (this is a bug)\n${(e as Error)?.stack ?? String(e)}\n`);
  return 1;
}
