/** `agw skill init [NAME]`: scaffold a bundle from templates/skill that validates as created. */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkSkillName } from '../../../shared/bundle/index.js';
import { CliError, UsageError } from '../../errors.js';
import { bold, isTty, printJson } from '../../output.js';

/** dist/cli/commands/skill/init.js → <package>/templates/skill */
const TEMPLATE_DIR = fileURLToPath(new URL('../../../../templates/skill/', import.meta.url));
const TEXT = /\.(md|json|txt|ya?ml)$|^\.agwignore$/;

/** A folder name as a skill name: lowercase, runs of other characters become one hyphen. */
export function toSkillName(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64).replace(/-+$/, '');
}

async function listTemplate(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const d of (await readdir(join(dir, rel), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const r = rel ? `${rel}/${d.name}` : d.name;
    if (d.isDirectory()) out.push(...(await listTemplate(dir, r)));
    else if (d.isFile()) out.push(r);
  }
  return out;
}

export async function init(nameArg: string | undefined, opts: { dir?: string; force?: boolean; json?: boolean }): Promise<void> {
  const target = resolve(opts.dir ?? (nameArg ? nameArg : '.'));
  const name = nameArg ?? toSkillName(basename(target));
  const bad = checkSkillName(name);
  if (bad) {
    throw new UsageError(
      nameArg ? bad.message : `cannot derive a skill name from the folder "${basename(target)}": ${bad.message}`,
      'skill names are lowercase letters, digits and single hyphens, e.g. agw skill init my-skill',
    );
  }
  let existing: string[] = [];
  try {
    existing = await readdir(target);
  } catch {
    // a new folder
  }
  if (existing.length > 0 && !opts.force) {
    throw new CliError(`${relative(process.cwd(), target) || '.'} is not empty`, 'pick a new folder, or pass --force to write the template files into it', 'DIR_NOT_EMPTY');
  }
  const files = await listTemplate(TEMPLATE_DIR);
  for (const rel of files) {
    const src = await readFile(join(TEMPLATE_DIR, rel));
    const out = TEXT.test(basename(rel)) ? Buffer.from(src.toString('utf8').replaceAll('{{name}}', name)) : src;
    await mkdir(join(target, rel, '..'), { recursive: true });
    await writeFile(join(target, rel), out);
  }
  if (opts.json) {
    printJson({ name, dir: target, files });
    return;
  }
  const shown = relative(process.cwd(), target) || '.';
  process.stdout.write(`created skill ${isTty() ? bold(name) : name} in ${shown} (${files.length} files)\n`);
  process.stdout.write(
    `next:\n  edit ${join(shown, 'SKILL.md')} (the description: what it does and when an agent should use it)\n  agw skill validate ${shown}\n  agw skill publish ${shown} --version 1.0.0\n`,
  );
}
