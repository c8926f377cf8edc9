import type { Command } from 'commander';
import { addKeyFlags } from '../../key-flags.js';

type Action = (args: string[], opts: Record<string, unknown>) => Promise<void>;

/**
 * `agw admin …`: acts on the store named by --data/--config, also while a daemon runs. On
 * a terminal each command names that store first (stderr); a data directory without a
 * store is refused except by `user create` and `migrate`, which create it.
 */
export function registerAdmin(program: Command): void {
  const admin = program
    .command('admin')
    .description('administer users, organizations, keys, wallets, quotas, projects, OAuth clients and provider keys');

  const runActions = async () => (await import('./run.js')).actions;
  const keyActions = async () => (await import('./keys.js')).keyActions;
  const priceActions = async () => (await import('./prices.js')).priceActions;
  const leaf = (parent: Command, spec: string, description: string, example: string, action: string, load: () => Promise<object> = runActions) =>
    parent
      .command(spec)
      .description(description)
      .option('--data <dir>', 'data directory (env AGW_DATA, default ~/.agw)')
      .option('--config <file>', 'config file (env AGW_CONFIG)')
      .option('--json', 'print the result as JSON')
      .addHelpText('after', `\nExample:\n  ${example}`)
      .action(async (...a: unknown[]) => {
        const cmd = a[a.length - 1] as Command;
        const opts = cmd.opts();
        const args = a.slice(0, -2) as string[];
        await ((await load()) as Record<string, Action>)[action](args, opts);
      });

  leaf(admin, 'migrate', 'bring the store’s schema up to date (SQLite or PostgreSQL) and print what was applied', 'agw admin migrate --config agw.yaml --json', 'migrate');

  const user = admin.command('user').description('users');
  leaf(user, 'create', 'create a user (and their wallet)', 'agw admin user create --email ada@example.com --tier pro', 'userCreate')
    .requiredOption('--email <email>', 'email address')
    .option('--name <name>', 'display name')
    .option('--tier <tier>', 'tier id', 'free')
    .option('--password <password>', 'portal password (generated when not given)');
  leaf(user, 'set-tier <user> <tier>', 'change a user’s tier', 'agw admin user set-tier ada@example.com team', 'userSetTier');
  leaf(user, 'list', 'every user: id, email, name, tier, createdAt', 'agw admin user list --data /srv/agw --json', 'userList');

  const org = admin.command('org').description('organizations');
  leaf(org, 'create', 'create an organization', 'agw admin org create --name Acme --tier team', 'orgCreate')
    .requiredOption('--name <name>', 'name')
    .requiredOption('--tier <tier>', 'tier id');
  leaf(org, 'add-member <org> <user>', 'add a user to an organization', 'agw admin org add-member org_… ada@example.com', 'orgAddMember');
  leaf(org, 'set-active <org> <active>', 'activate or deactivate (true|false)', 'agw admin org set-active org_… false', 'orgSetActive');

  const key = admin.command('key').description('API keys, with limits: budget, rpm, tpm, model allowlist, expiry');
  addKeyFlags(
    leaf(key, 'create <user>', 'create an agw_ key (shown once), optionally with limits; answers the key record', 'agw admin key create ada@example.com --name ci --budget 5 --budget-period day --rpm 60 --models smart-lite', 'keyCreate', keyActions),
  );
  addKeyFlags(
    leaf(key, 'update <keyId>', 'rename a key or change its limits (none lifts one); answers the key record', 'agw admin key update key_… --budget 10 --rpm none --expires 30d', 'keyUpdate', keyActions),
  );
  leaf(key, 'list <user>', 'a user’s keys with their limits and what each spent: {"items":[Key]}', 'agw admin key list ada@example.com --json', 'keyList', keyActions);
  leaf(key, 'revoke <keyId>', 'revoke a key at once (and the keys made with it)', 'agw admin key revoke key_…', 'keyRevoke', keyActions);

  const wallet = admin.command('wallet').description('wallets');
  leaf(wallet, 'credit <user> <amount>', 'credit USD to a wallet', 'agw admin wallet credit ada@example.com 25 --note "welcome"', 'walletCredit').option(
    '--note <text>',
    'description on the transaction',
  );
  leaf(wallet, 'set-unlimited <user> <unlimited>', 'never charge this wallet (true|false)', 'agw admin wallet set-unlimited ada@example.com true', 'walletSetUnlimited');

  const quota = admin.command('quota').description('per-user quota overrides');
  leaf(quota, 'set <user> <usageType> <limit>', 'override a quota (-1 = no cap)', 'agw admin quota set ada@example.com ai_chat 1000', 'quotaSet');

  const project = admin.command('project').description('projects');
  leaf(project, 'create <user>', 'create a project; the user gets a role on it', 'agw admin project create ada@example.com --name Game', 'projectCreate').requiredOption(
    '--name <name>',
    'name',
  );
  leaf(project, 'add-member <projectUid> <user>', 'give a user a role on a project', 'agw admin project add-member prj_… bob@example.com', 'projectAddMember');

  const oauth = admin.command('oauth-client').description('OAuth clients');
  leaf(oauth, 'create', 'register a public OAuth client (PKCE)', 'agw admin oauth-client create --name App --redirect-uri http://127.0.0.1:5000/cb', 'oauthClientCreate')
    .requiredOption('--name <name>', 'name')
    .requiredOption('--redirect-uri <uri...>', 'allowed redirect URI (repeatable)')
    .option('--trusted', 'no consent screen');

  const prices = admin.command('prices').description('LLM prices against the bundled price data (@pydantic/genai-prices)');
  leaf(
    prices,
    'diff',
    'where the prices in force (catalog, config models:) differ from the bundled price data, class by class: {dataVersion, models, covered, items:[{provider, model, price, inForce, data, source}]}',
    'agw admin prices diff --config agw.yaml --json',
    'pricesDiff',
    priceActions,
  );
  const providerActions = async () => (await import('./providers.js')).providerActions;
  leaf(admin, 'providers', 'provider keys: health, cooldown, calls and failures, by name (never a secret)', 'agw admin providers --json', 'providers', providerActions);

  const oauthKeys = admin.command('oauth').description('OAuth signing keys');
  leaf(oauthKeys, 'rotate-keys', 'new RS256 signing key; the old one verifies until its tokens expired', 'agw admin oauth rotate-keys --json', 'oauthRotateKeys');

  const skillKeys = admin.command('skill-keys').description('the Ed25519 keys that sign skill versions');
  leaf(skillKeys, 'rotate', 'new current signing key; versions the old one signed still verify with it', 'agw admin skill-keys rotate --json', 'skillRotateKeys');
}
