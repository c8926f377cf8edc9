import type { Command } from 'commander';
import { DEFAULT_CATEGORIES } from '../../shared/config/defaults.js';
import { examples, lazy, remote } from './lazy.js';

const creator = () => import('../commands/skill/creator.js');
const market = () => import('../commands/skill/market.js');
const installed = () => import('../commands/skill/installed.js');

/** `agw skill …`: create, check, pack and publish bundles; find, install and manage skills. */
export function registerSkill(program: Command): void {
  const skill = program
    .command('skill')
    .description('create, validate, pack and publish skill bundles; search, install and manage skills')
    .addHelpText('after', examples('agw skill init my-skill', 'agw skill validate my-skill', 'agw skill publish my-skill --version 1.0.0', 'agw skill install my-skill', 'agw skill list'));

  skill
    .command('init [name]')
    .description('scaffold a new skill bundle (SKILL.md, tools/, scripts/, assets/) that validates as created')
    .option('--dir <dir>', 'folder to create it in (default ./NAME, or the current folder without NAME)')
    .option('--force', 'write into a folder that is not empty (overwrites template files)')
    .option('--json', 'print {name, dir, files} as JSON')
    .addHelpText('after', examples('agw skill init weather-report', 'mkdir my-skill && cd my-skill && agw skill init'))
    .action(lazy(async () => (await import('../commands/skill/init.js')).init));

  skill
    .command('validate [dir]')
    .description('check a bundle with the marketplace’s validator; prints every problem with file and rule, exit 1 on any')
    .option('--json', 'print {dir, ok, name, files, problems} as JSON')
    .option('--format <format>', 'text, json or github (GitHub Actions ::error annotations)', 'text')
    .addHelpText('after', examples('agw skill validate', 'agw skill validate ./my-skill --json', 'agw skill validate skills/weather --format github   # in a CI job'))
    .action(lazy(async () => (await import('../commands/skill/validate.js')).validate));

  skill
    .command('scan [dirs...]')
    .description('run the marketplace’s scan rules on skill folders (hidden Unicode, prompt overrides, download-and-run, credential theft, binaries, archives, blobs); exit 1 on an error finding')
    .option('--format <format>', 'text, json, sarif (SARIF 2.1.0 for GitHub code scanning) or github (::error annotations)', 'text')
    .option('--json', 'the same as --format json: {ok, dirs, files, findings}')
    .addHelpText('after', examples('agw skill scan', 'agw skill scan ./my-skill --format json', 'agw skill scan skills/*/ --format sarif > agw-skills.sarif   # for github/codeql-action/upload-sarif'))
    .action(lazy(async () => (await import('../commands/skill/scan.js')).scan));

  skill
    .command('pack [dir]')
    .description('write a reproducible .tgz of the bundle (sorted, fixed mtimes, honours .agwignore)')
    .option('-o, --out <file>', 'output file (default ./NAME.tgz)')
    .option('--json', 'print {file, name, files, bytes, sha256} as JSON')
    .addHelpText('after', examples('agw skill pack', 'agw skill pack ./my-skill -o dist/my-skill.tgz'))
    .action(lazy(async () => (await import('../commands/skill/pack.js')).pack));

  skill
    .command('publish [dir]')
    .description('validate locally, then upload a version of the bundle (the first publisher of a name owns it)')
    .requiredOption('--version <version>', 'version to publish (SemVer MAJOR.MINOR.PATCH, e.g. 1.0.0)')
    .option('--allow-non-semver', 'publish a version that is not SemVer (it never becomes current over SemVer versions)')
    .option('--price <usd>', 'price in USD per install, 0 = free (first publish: 0; later: unchanged)')
    .option('--category <category>', `marketplace category (first publish: other; later: unchanged); one of the daemon's marketplace.categories, by default: ${DEFAULT_CATEGORIES.join(', ')}`)
    .option('--slug <slug>', 'marketplace slug (default: the name in SKILL.md)')
    .option('--draft', 'publish as a draft (hidden from search)')
    .option('--notes <text>', 'release notes')
    .option('--notes-file <file>', 'read the release notes from a file; of a changelog (## [1.2.0] headings) only this version’s section')
    .option('--overwrite', 'replace this version if it was published before')
    .option('--dry-run', 'validate and list what would be uploaded; send nothing')
    .option('--json', 'print the server’s answer as JSON')
    .addHelpText('after', examples('agw skill publish ./my-skill --version 1.0.0', 'agw skill publish --version 1.1.0 --price 2.5 --category npc-dialogue --notes-file CHANGELOG.md', 'agw skill publish --version 1.1.0 --dry-run'))
    .action(lazy(async () => (await import('../commands/skill/publish.js')).publish));

  skill
    .command('search [query]')
    .description('search the published skills')
    .option('--category <category>', 'only this category')
    .option('--sort <sort>', 'popular, recent, name or price')
    .option('--page <n>', 'page number', '1')
    .option('--limit <n>', 'results per page (at most 100)', '20')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw skill search weather', 'agw skill search --category scene --sort recent --json'))
    .action(lazy(async () => (await market()).search));

  skill
    .command('info <skill>')
    .description('details of one skill (by id or slug)')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw skill info weather-report', 'agw skill info 12 --json'))
    .action(lazy(async () => (await market()).info));

  skill
    .command('versions <skill>')
    .description('published versions with release notes, prereleases marked; --all adds drafts and archived ones (owner); the owner archives one version or chooses the current one')
    .option('--all', 'every version of a skill you own, with its status')
    .option('--archive <version>', 'withdraw this version: never current, installable only by accounts that installed it (agw skill republish undoes it)')
    .option('--set-current <version>', 'make this published version current (a prerelease too) instead of the highest release')
    .option('--auto-current', 'hand the current version back to the rule: the highest published release')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw skill versions weather-report', 'agw skill versions weather-report --all', 'agw skill versions weather-report --archive 1.2.0', 'agw skill versions weather-report --set-current 2.0.0-beta.1'))
    .action(lazy(async () => (await market()).versions));

  skill
    .command('notes <skill> <version>')
    .description('show a version’s release notes, or change them with --set / --file (owner)')
    .option('--set <text>', 'new release notes')
    .option('--file <file>', 'read the new release notes from a file; of a changelog only this version’s section')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw skill notes weather-report 1.0.0', 'agw skill notes weather-report 1.0.0 --set "Fixes the units"'))
    .action(lazy(async () => (await market()).notes));

  skill
    .command('status <skill> <status>')
    .description('publish, archive or draft a skill you own (status: publish|published, archive|archived, draft)')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw skill status weather-report archive', 'agw skill status 12 publish'))
    .action(lazy(async () => (await market()).status));

  skill
    .command('republish <skill> <version>')
    .description('publish an archived or draft version again (owner; the opposite of versions --archive)')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw skill republish weather-report 1.0.0'))
    .action(lazy(async () => (await market()).republish));

  skill
    .command('install [skill]')
    .description('install a skill where agents read it (.agents/skills/NAME by default), checked against the version’s signed digest before a file is written, recorded in .agents/skills.lock.json; scan findings and a price ask first')
    .option('--version <version>', 'this version instead of the current one')
    .option('--for <agent>', 'the agent whose folder it goes into: agents (.agents/skills, the default), claude (.claude/skills), codex (.agents/skills, which Codex reads), cursor (.cursor/skills), goose (.goose/skills; with --global ~/.config/goose/skills)')
    .option('--global', 'into that agent’s folder under your home folder (lockfile ~/.agents/skills.lock.json)')
    .option('--dir <dir>', 'the skill’s own folder instead')
    .option('--yes', 'install despite scan findings and pay for a paid skill without asking (required for them without a terminal)')
    .option('--force', 'replace a folder agw did not install, or one changed since')
    .option('--frozen', 'install exactly what .agents/skills.lock.json lists (CI); fail if anything differs')
    .option('--json', 'print {skillId, slug, name, version, charged, alreadyInstalled, target, dir, lockfile, verified, digest, signature, findings, files} as JSON')
    .addHelpText('after', examples('agw skill install weather-report', 'agw skill install weather-report --for claude', 'agw skill install weather-report --global --version 1.2.0', 'agw skill install paid-skill --yes --json', 'agw skill install --frozen   # in CI, from the committed lockfile'))
    .action(lazy(async () => (await import('../commands/skill/install.js')).install));

  skill
    .command('verify <skill>')
    .description('check that an installed skill (SLUG, SLUG@VERSION) or a folder (./DIR) is what the marketplace signed; exit 1 if not')
    .option('--global', 'check the copies the home folder’s lockfile records')
    .option('--json', 'print {ok, items: [{slug, version, dir, digest, expected, signature, ok, changes}]}')
    .addHelpText('after', examples('agw skill verify weather-report', 'agw skill verify weather-report@1.0.0 --json', 'agw skill verify ./.claude/skills/weather-report'))
    .action(lazy(async () => (await import('../commands/skill/verify.js')).verify));

  skill
    .command('list')
    .description('the skills installed here (from .agents/skills.lock.json) and whether a file was changed since')
    .option('--global', 'the skills installed under your home folder')
    .option('--json', 'print {items: [{slug, name, version, target, dir, modified}]}')
    .addHelpText('after', examples('agw skill list', 'agw skill list --global --json'))
    .action(lazy(async () => (await installed()).list));

  skill
    .command('update [skill]')
    .description('move installed skills (or one) to their newest published version, showing the release notes')
    .option('--global', 'the skills installed under your home folder')
    .option('--yes', 'pay without asking, should a version need buying')
    .option('--force', 'replace a skill folder that was changed since it was installed')
    .option('--json', 'print {items: [{slug, name, dir, from, to, updated, notes}]}')
    .addHelpText('after', examples('agw skill update', 'agw skill update weather-report --json'))
    .action(lazy(async () => (await installed()).update));

  skill
    .command('remove <skill>')
    .description('delete an installed skill’s folder and its lockfile entry')
    .option('--global', 'a skill installed under your home folder')
    .option('--for <agent>', 'only the copy installed for this agent')
    .option('--force', 'delete it even if files were changed since it was installed')
    .option('--json', 'print {removed: [{slug, name, version, target, dir}]}')
    .addHelpText('after', examples('agw skill remove weather-report', 'agw skill remove weather-report --for claude --json'))
    .action(lazy(async () => (await installed()).remove));

  skill
    .command('mine')
    .description('the skills you published, with installs and revenue')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw skill mine', 'agw skill mine --json'))
    .action(lazy(async () => (await creator()).mine));

  skill
    .command('stats')
    .description('daily installs and revenue of your skills (a sparkline on a terminal)')
    .option('--days <n>', 'how many days', '30')
    .option('--json', 'print the API answer')
    .addHelpText('after', examples('agw skill stats', 'agw skill stats --days 90 --json'))
    .action(lazy(async () => (await creator()).stats));

  // every command but the local ones talks to a daemon
  for (const c of skill.commands) if (!['init', 'validate', 'scan', 'pack', 'list', 'remove'].includes(c.name())) remote(c);
}
