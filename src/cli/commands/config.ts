import { ConfigSchema } from '../../shared/config/schema.js';
import { loadConfig, ConfigError } from '../../shared/config/load.js';
import { printJson } from '../output.js';
import { CliError } from '../errors.js';

export function schema(): void {
  printJson(ConfigSchema);
}

export function check(file: string, opts: { json?: boolean }): void {
  try {
    loadConfig(file);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    if (opts.json) {
      printJson({ valid: false, file, problems: e.problems });
      process.exitCode = 1;
      return;
    }
    throw new CliError(e.message, 'each line names the key, what is wrong and the rule; see: agw config schema', 'INVALID_CONFIG');
  }
  if (opts.json) printJson({ valid: true, file, problems: [] });
  else process.stdout.write(`${file}: valid\n`);
}
