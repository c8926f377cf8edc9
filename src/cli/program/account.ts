import type { Command } from 'commander';
import { examples, lazy, remote } from './lazy.js';

const auth = () => import('../commands/auth.js');
const account = () => import('../commands/account.js');

/** Log in and out, profiles, the account views, and chat. */
export function registerAccount(program: Command): void {
  const api: Command[] = [];
  const add = (c: Command) => (api.push(c), c);

  add(program.command('login'))
    .description('log in: in the browser (OAuth), with an agw_ key on stdin, or to the portal with email and password')
    .option('--with-token', 'read an agw_ key from stdin')
    .option('--email <email>', 'portal login (needed by agw spend); the password is read from stdin or prompted')
    .option('--no-browser', 'print the login URL instead of opening a browser')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', examples('agw login', 'agw login --with-token < key.txt', 'echo "$AGW_KEY" | agw login --with-token --profile ci --base-url https://agw.example.com', 'agw login --email ada@example.com'))
    .action(lazy(async () => (await auth()).login));

  add(program.command('logout'))
    .description('forget the stored credentials of the profile')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', examples('agw logout', 'agw logout --profile staging'))
    .action(lazy(async () => (await auth()).logout));

  add(program.command('whoami'))
    .description('who the current credentials belong to, and where they come from')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', examples('agw whoami', 'AGW_API_KEY=agw_… agw whoami --json'))
    .action(lazy(async () => (await auth()).whoami));

  const profile = program.command('profile').description('named profiles: one daemon URL and login each');
  profile
    .command('list')
    .description('list the profiles')
    .option('--json', 'print the profiles as JSON')
    .addHelpText('after', examples('agw profile list'))
    .action(lazy(async () => (await auth()).profileList));
  profile
    .command('use <name>')
    .description('make a profile the default')
    .addHelpText('after', examples('agw profile use staging'))
    .action(lazy(async () => (await auth()).profileUse));

  add(program.command('entitlements'))
    .description('your tier, wallet, quotas and the model aliases you can use')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw entitlements', 'agw entitlements --json | jq .quotas.ai_chat'))
    .action(lazy(async () => (await account()).entitlements));

  add(program.command('aliases'))
    .description('model aliases with their targets, the models of your tier and the smart-route order')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw aliases', 'agw aliases --json'))
    .action(lazy(async () => (await account()).aliases));

  add(program.command('providers [id]'))
    .description('the public price catalog: providers, or one provider’s models and prices (USD per 1M tokens)')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw providers', 'agw providers openai', 'agw providers --json'))
    .action(lazy(async () => (await account()).providers));

  add(program.command('spend'))
    .description('spend by provider and project, or by key (needs a portal session: agw login --email)')
    .option('--range <range>', 'window, e.g. 7d, 30d, 90d (at most 365d)', '30d')
    .option('--project <uid>', 'one project’s spend')
    .option('--by <what>', 'one table: provider, project or key')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw login --email ada@example.com', 'agw spend', 'agw spend --by key --range 7d', 'agw spend --range 7d --project prj_123 --json'))
    .action(lazy(async () => (await import('../commands/spend.js')).spend));

  const wallet = add(program.command('wallet'))
    .description('your wallet: balance and monthly allowance; subcommands list transactions and top up')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw wallet', 'agw wallet transactions --limit 20', 'agw wallet topup 10'))
    .action(lazy(async () => (await account()).wallet));
  add(wallet.command('transactions'))
    .description('wallet transactions, newest first')
    .option('--limit <n>', 'how many (at most 200)', '20')
    .option('--cursor <cursor>', 'continue after this cursor (printed as nextCursor)')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw wallet transactions', 'agw wallet transactions --limit 100 --json'))
    .action(lazy(async () => (await account()).transactions));
  add(wallet.command('topup <amount>'))
    .description('add USD to the wallet (at most 10000), where the service allows self top-up (config wallet.selfTopup); otherwise an operator credits you with agw admin wallet credit')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw wallet topup 25'))
    .action(lazy(async () => (await account()).topup));

  const logs = add(program.command('logs'))
    .description('the request log: your gateway calls, newest last; --follow prints each new one as it settles')
    .option('-f, --follow', 'keep printing calls as they settle (with --json: one JSON object per line)')
    .option('-m, --model <model>', 'only calls that used this model')
    .option('--provider <id>', 'only calls to this provider')
    .option('--status <ok|error>', 'only calls agw answered below 400 (ok) or at 400 and above (error)')
    .option('--since <when>', 'only calls since: 30m, 24h, 7d or an ISO date-time')
    .option('--key-id <id>', 'only calls made with this key')
    .option('--project <uid>', 'only calls tagged with this project')
    .option('--endpoint <proxy|smart|chat>', 'only calls of this endpoint')
    .option('-n, --limit <n>', 'how many (at most 500; default 20, 10 with --follow)')
    .option('--cursor <cursor>', 'continue with older calls (printed after a full page)')
    .option('--json', 'print the API answer ({items, nextCursor}); with --follow one Request per line')
    .addHelpText('after', examples('agw logs', 'agw logs --status error --since 24h', 'agw logs -f --model gpt-4o-mini', 'agw logs --follow --json | jq .cost', 'agw logs show use_0123abcd'))
    .action(lazy(async () => (await import('../commands/logs.js')).logs));
  add(logs.command('show <id>'))
    .description('one call: every field, and its bodies when the daemon keeps them (logs.bodies)')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw logs show use_0123abcd', 'agw logs show use_0123abcd --json'))
    .action(lazy(async () => (await import('../commands/logs.js')).show));

  add(program.command('chat [prompt]'))
    .description('chat through the gateway; the prompt is read from stdin when not given')
    .option('-m, --model <model>', 'model id or alias (agw entitlements lists yours)', 'smart-lite')
    .option('-s, --system <text>', 'system message')
    .option('--stream', 'print tokens as they arrive')
    .option('--max-tokens <n>', 'at most this many output tokens (default 1024; max: the model’s own limit)')
    .option('--temperature <t>', 'sampling temperature, 0 to 2')
    .option('--json', 'print the API answer (with --stream: {provider, model, content, usage})')
    .addHelpText('after', examples('agw chat "Say hello"', 'agw chat "Write a haiku" --model smart-pro --stream', 'git diff | agw chat --system "Review this diff" -m smart-lite'))
    .action(lazy(async () => (await import('../commands/chat.js')).chat));

  for (const c of api) remote(c);
}
