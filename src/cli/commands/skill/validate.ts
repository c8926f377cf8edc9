/** `agw skill validate [DIR]`: the marketplace's own validator, run locally. */
import { UsageError } from '../../errors.js';
import { dim, green, printJson, red, yellow } from '../../output.js';
import { fileCount, formatProblem, githubAnnotation, loadBundle } from './bundle.js';

export interface ValidateOpts {
  json?: boolean;
  format?: string;
}

export async function validate(dirArg: string | undefined, opts: ValidateOpts): Promise<void> {
  const format = opts.json ? 'json' : (opts.format ?? 'text');
  if (format !== 'text' && format !== 'json' && format !== 'github') {
    throw new UsageError(`unknown --format ${format}`, 'use text, json or github');
  }
  const { dir, entries, validation } = await loadBundle(dirArg);
  const { ok, problems, warnings, meta } = validation;
  if (!ok) process.exitCode = 1;
  if (format === 'json') {
    printJson({ dir, ok, name: meta?.name ?? null, files: fileCount(entries), problems, warnings });
    return;
  }
  const w = warnings.length;
  const warned = w > 0 ? `, ${w} warning${w === 1 ? '' : 's'}` : '';
  if (format === 'github') {
    for (const p of problems) process.stdout.write(githubAnnotation(dir, p) + '\n');
    for (const p of warnings) process.stdout.write(githubAnnotation(dir, p, 'warning') + '\n');
    if (ok) process.stdout.write(`${meta?.name}: valid (${fileCount(entries)} files${warned})\n`);
    return;
  }
  for (const p of problems) process.stdout.write(formatProblem(dir, p) + '\n');
  for (const p of warnings) process.stdout.write(yellow(formatProblem(dir, p, 'warning')) + '\n');
  if (ok) {
    process.stdout.write(`${green('valid')}: ${meta?.name} ${dim(`(${fileCount(entries)} files${warned})`)}\n`);
  } else {
    const n = problems.length;
    process.stdout.write(`${red('invalid')}: ${n} problem${n === 1 ? '' : 's'}${warned}\n`);
  }
}
