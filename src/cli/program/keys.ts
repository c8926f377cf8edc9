import type { Command } from 'commander';
import { addKeyFlags } from '../key-flags.js';
import { examples, lazy, remote } from './lazy.js';

const keys = () => import('../commands/keys.js');

/** `agw keys …`: the caller's API keys with limits (agw_ key, OAuth login or portal session). */
export function registerKeys(program: Command): void {
  const group = program.command('keys').description('your API keys: list, create with limits, change limits, revoke');
  const cmds: Command[] = [];
  const add = (c: Command) => (cmds.push(c), c);

  add(group.command('list'))
    .description('your keys with their limits, what each spent and when it was last used')
    .option('--json', 'print the API answer ({"items":[Key]})')
    .addHelpText('after', examples('agw keys list', 'agw keys list --json | jq ".items[] | {name, spent}"'))
    .action(lazy(async () => (await keys()).list));

  addKeyFlags(add(group.command('create')))
    .description('create a key (the secret is shown once); a key made with a limited key stays within its limits')
    .option('--json', 'print the API answer (the key record and the secret)')
    .addHelpText('after', examples('agw keys create --name ci --budget 5 --budget-period day --rpm 60 --models smart-lite', 'agw keys create --name demo --expires 7d --json'))
    .action(lazy(async () => (await keys()).create));

  addKeyFlags(add(group.command('update <keyId>')))
    .description('rename a key or change its limits (none lifts a limit, --expires never)')
    .option('--json', 'print the API answer (the key record)')
    .addHelpText('after', examples('agw keys update key_… --budget 10', 'agw keys update key_… --rpm none --models smart-lite,smart-standard'))
    .action(lazy(async () => (await keys()).update));

  add(group.command('revoke <keyId>'))
    .description('revoke a key at once, and the keys made with it')
    .option('--json', 'print the API answer (the key record)')
    .addHelpText('after', examples('agw keys revoke key_…'))
    .action(lazy(async () => (await keys()).revoke));

  for (const c of cmds) remote(c);
}
