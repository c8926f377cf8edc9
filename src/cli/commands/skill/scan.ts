/**
 * `agw skill scan [DIR...] [--format text|json|sarif|github]`: the marketplace's scan rules
 * (src/shared/scan), run locally on skill folders read as publish reads them (.agwignore
 * honoured). text: `FILE[:LINE]: severity RULE: message`; json: `{ok, dirs, files, findings}`
 * (each finding's `path` relative to the current folder); sarif: a SARIF 2.1.0 log for code
 * scanning; github: workflow-command annotations. Exit 1 when any finding is an error (the
 * marketplace would refuse that publish), 0 with warnings alone.
 */
import { stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { readBundleDir } from '../../../shared/bundle/index.js';
import { hasErrors, scanBundle, type Finding } from '../../../shared/scan/index.js';
import { UsageError } from '../../errors.js';
import { dim, green, printJson, red, yellow } from '../../output.js';
import { toSarif } from './sarif.js';

export interface ScanOpts {
  format?: string;
  json?: boolean;
}

const FORMATS = ['text', 'json', 'sarif', 'github'];

/** GitHub Actions workflow-command escaping (data and property values). */
const escData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escProp = (s: string) => escData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

/** Every finding of the folders, each with its file relative to the current folder (POSIX). */
export async function scanDirs(dirs: readonly string[]): Promise<{ files: number; found: { finding: Finding; file: string }[] }> {
  let files = 0;
  const found: { finding: Finding; file: string }[] = [];
  for (const arg of dirs) {
    const dir = resolve(arg);
    if (!(await stat(dir).then((s) => s.isDirectory(), () => false))) throw new UsageError(`${arg} is not a directory`, 'pass skill folders: agw skill scan ./my-skill');
    const entries = (await readBundleDir(dir)).filter((e) => e.kind === 'file' && e.content);
    files += entries.length;
    for (const finding of scanBundle(entries.map((e) => ({ path: e.path, content: e.content! })))) {
      found.push({ finding, file: relative(process.cwd(), join(dir, finding.path)).split(sep).join('/') || '.' });
    }
  }
  return { files, found };
}

export async function scan(dirArgs: string[] | undefined, opts: ScanOpts): Promise<void> {
  const format = opts.json ? 'json' : (opts.format ?? 'text');
  if (!FORMATS.includes(format)) throw new UsageError(`unknown --format ${format}`, `use ${FORMATS.join(', ')}`);
  const dirs = dirArgs && dirArgs.length > 0 ? dirArgs : ['.'];
  const { files, found } = await scanDirs(dirs);
  const findings = found.map((f) => f.finding);
  const ok = !hasErrors(findings);
  if (!ok) process.exitCode = 1;
  switch (format) {
    case 'json':
      return printJson({ ok, dirs: dirs.map((d) => resolve(d)), files, findings: found.map(({ finding, file }) => ({ ...finding, path: file })) });
    case 'sarif':
      return printJson(toSarif(found));
    case 'github':
      for (const { finding: f, file } of found) {
        const line = f.line !== null ? `,line=${f.line}` : '';
        process.stdout.write(`::${f.severity} file=${escProp(file)}${line},title=${escProp(`agw skill scan: ${f.rule}`)}::${escData(f.message)}\n`);
      }
      return;
  }
  for (const { finding: f, file } of found) {
    const text = `${file}${f.line !== null ? `:${f.line}` : ''}: ${f.severity} ${f.rule}: ${f.message}`;
    process.stdout.write(`${f.severity === 'error' ? red(text) : yellow(text)}\n`);
  }
  const errors = findings.filter((f) => f.severity === 'error').length;
  const warnings = findings.length - errors;
  const counts = `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`;
  if (findings.length === 0) process.stdout.write(`${green('no findings')} ${dim(`(${files} files)`)}\n`);
  else process.stdout.write(`${ok ? yellow('warnings only') : red('refused by the marketplace')}: ${counts} ${dim(`(${files} files)`)}\n`);
}
