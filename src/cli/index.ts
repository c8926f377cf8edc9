import { Command, Option } from 'commander';
import { CliError, UsageError, reportError } from './errors.js';
import { registerAdmin } from './commands/admin/index.js';
import { registerAccount } from './program/account.js';
import { registerKeys } from './program/keys.js';
import { registerSkill } from './program/skill.js';

/**
 * The command table. Commands are declared here as data; each action loads its module
 * only when it runs, so `agw --version` and `agw skill validate` never load the daemon,
 * React or Ink.
 */
export function buildProgram(version: string): Command {
  const program = new Command('agw')
    .description('AI gateway and skill marketplace: run the daemon, publish skills, query your account')
    .version(version, '-v, --version')
    .showSuggestionAfterError(true)
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ outputError: (str, write) => write(str) })
    .exitOverride()
    // program options only before the subcommand, so `skill publish --version 1.0.0` is not `agw --version`
    .enablePositionalOptions()
    .addHelpText(
      'after',
      '\nExamples:\n  agw serve --demo\n  agw login --with-token < key.txt\n  agw skill init my-skill && agw skill validate my-skill\n' +
        '  agw skill publish my-skill --version 1.0.0\n  agw chat "Say hello" --stream\n  agw logs --follow\n  agw wallet --json\n\n' +
        'Every command that prints data takes --json. Exit codes: 0 ok, 1 failed, 2 usage error.',
    );

  program
    .command('serve')
    .description('run the daemon: gateway, billing, marketplace, portal')
    .option('--port <port>', 'port to listen on (0 picks a free one)', '8787')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--data <dir>', 'data directory (env AGW_DATA, default ~/.agw)')
    .option('--config <file>', 'config file (env AGW_CONFIG, default DATA/agw.yaml)')
    .option('--demo', 'simulated chat upstreams and a demo user: everything works offline')
    .option('--json', 'print the listening event as JSON')
    .addHelpText('after', '\nExamples:\n  agw serve --demo\n  agw serve --port 0 --data ./data --config agw.yaml')
    .action(async (opts) => (await import('./commands/serve.js')).serve(opts));

  const config = program.command('config').description('inspect and check the daemon configuration');
  config
    .command('schema')
    .description('print the JSON Schema of the config file')
    .option('--json', 'print JSON (the default)')
    .action(async () => (await import('./commands/config.js')).schema());
  config
    .command('check <file>')
    .description('validate a config file; exit 1 and name every bad key when it is invalid')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', '\nExample:\n  agw config check ~/.agw/agw.yaml')
    .action(async (file, opts) => (await import('./commands/config.js')).check(file, opts));

  registerSkill(program);
  registerAccount(program);
  registerKeys(program);
  registerAdmin(program);
  return program;
}

export async function main(argv: string[], version: string): Promise<number> {
  const program = buildProgram(version);
  const json = argv.includes('--json');
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    const ce = e as { code?: string; exitCode?: number };
    if (typeof ce?.code === 'string' && ce.code.startsWith('commander.')) {
      if (ce.code === 'commander.helpDisplayed' || ce.code === 'commander.version' || ce.code === 'commander.help') return 0;
      return 2;
    }
    return reportError(e instanceof Error && !(e instanceof CliError) && (e as { name?: string }).name === 'ConfigError' ? new UsageError(e.message) : e, json);
  }
}

export { Option };
