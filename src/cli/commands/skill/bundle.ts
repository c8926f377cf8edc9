/** Reading and validating a local skill directory (shared by validate, pack and publish). */
import { stat } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { readBundleDir, validateBundle, type BundleEntry, type BundleValidation, type Problem } from '../../../shared/bundle/index.js';
import { UsageError } from '../../errors.js';

export interface LocalBundle {
  dir: string;
  entries: BundleEntry[];
  validation: BundleValidation;
}

export async function loadBundle(dirArg: string | undefined): Promise<LocalBundle> {
  const dir = resolve(dirArg ?? '.');
  let isDir = false;
  try {
    isDir = (await stat(dir)).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new UsageError(`${dirArg ?? '.'} is not a directory`, 'pass the skill folder: agw skill validate ./my-skill');
  const entries = await readBundleDir(dir);
  return { dir, entries, validation: validateBundle(entries, { dirName: basename(dir) }) };
}

/** A problem's file as the user should see it: relative to the current directory. */
export function problemFile(dir: string, p: Problem): string {
  return relative(process.cwd(), join(dir, p.path)) || '.';
}

export type Severity = 'error' | 'warning';

const place = (p: Problem) => (p.line !== undefined ? `:${p.line}:${p.column ?? 1}` : '');

/** `FILE[:LINE:COL]: RULE: message`, warnings as `FILE[:LINE:COL]: warning RULE: message`. */
export function formatProblem(dir: string, p: Problem, severity: Severity = 'error'): string {
  return `${problemFile(dir, p)}${place(p)}: ${severity === 'warning' ? 'warning ' : ''}${p.rule}: ${p.message}`;
}

/** Warnings on stderr (they never stop a command). */
export function printWarnings(b: LocalBundle): void {
  for (const w of b.validation.warnings) process.stderr.write(formatProblem(b.dir, w, 'warning') + '\n');
}

/** GitHub Actions workflow-command escaping (data and property values). */
const escData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escProp = (s: string) => escData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

export function githubAnnotation(dir: string, p: Problem, severity: Severity = 'error'): string {
  const at = p.line !== undefined ? `,line=${p.line},col=${p.column ?? 1}` : '';
  return `::${severity} file=${escProp(problemFile(dir, p))}${at},title=${escProp(p.rule)}::${escData(p.message)}`;
}

export const fileCount = (entries: readonly BundleEntry[]) => entries.filter((e) => e.kind !== 'directory').length;
