/**
 * `agw skill publish [DIR] --version V`: validate locally first (the marketplace's own
 * rules), check version, category and slug with the daemon (precheck.ts), then upload the
 * files as multipart (parts named `files`, filename = path).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Problem } from '../../../shared/bundle/index.js';
import { Api, errorDetails } from '../../api.js';
import type { GlobalOpts } from '../../auth.js';
import { CliError, UsageError } from '../../errors.js';
import { hasErrors, scanBundle, type Finding } from '../../../shared/scan/index.js';
import { findingLine } from './confirm.js';
import { bold, printJson, printTable, useColor } from '../../output.js';
import { fileCount, formatProblem, loadBundle } from './bundle.js';
import { changelogSection } from './changelog.js';
import { buildMultipart, type FilePart } from './multipart.js';
import { assertValid } from './pack.js';
import { checkDescription, checkRemote, checkVersion } from './precheck.js';

export interface PublishOpts extends GlobalOpts {
  version: string;
  price?: string;
  category?: string;
  slug?: string;
  draft?: boolean;
  notes?: string;
  notesFile?: string;
  overwrite?: boolean;
  dryRun?: boolean;
  allowNonSemver?: boolean;
}

/**
 * Release notes from --notes or --notes-file (not both). From a file, `version`'s section
 * when the file is a changelog with version headings (changelog.ts), else the whole file.
 */
export async function notesFrom(text: string | undefined, file: string | undefined, flags = '--notes or --notes-file', version?: string): Promise<string | undefined> {
  if (text !== undefined && file !== undefined) throw new UsageError(`use ${flags}, not both`);
  if (file === undefined) return text;
  let content: string;
  try {
    content = await readFile(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (version === undefined) return content;
  const section = changelogSection(content, version);
  if (section.notes === null) {
    const shown = section.versions.slice(0, 5).join(', ') + (section.versions.length > 5 ? ', …' : '');
    throw new UsageError(`${file} has no section for version ${version} (it has ${shown})`, `add a "## [${version}]" heading with this version's changes, or pass the notes with --notes`);
  }
  return section.notes;
}

function priceField(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < 0 || n > 10_000) throw new UsageError(`--price must be USD from 0 to 10000, got ${raw}`);
  return String(n);
}

export async function publish(dirArg: string | undefined, opts: PublishOpts): Promise<void> {
  checkVersion(opts.version, opts.allowNonSemver);
  const price = priceField(opts.price);
  const notes = await notesFrom(opts.notes, opts.notesFile, undefined, opts.version);
  const bundle = await loadBundle(dirArg);
  assertValid(bundle);
  checkDescription(bundle.validation);
  const meta = bundle.validation.meta!;
  const files: FilePart[] = bundle.entries.filter((e) => e.kind === 'file').map((e) => ({ path: e.path, content: e.content ?? Buffer.alloc(0) }));
  // the marketplace's scan, here first: an error finding would refuse the upload anyway
  const findings = scanBundle(files);
  for (const f of findings) process.stderr.write(`${findingLine(f)}\n`);
  if (hasErrors(findings)) {
    const n = findings.filter((f) => f.severity === 'error').length;
    throw new CliError(`the scan found ${n} error${n === 1 ? '' : 's'} the marketplace refuses; nothing was uploaded`, 'fix them (agw skill scan DIR lists every finding), then publish again', 'BUNDLE_REJECTED');
  }
  const fields = {
    name: meta.name,
    slug: opts.slug ?? meta.name,
    description: meta.description,
    version: opts.version,
    category: opts.category,
    price,
    notes,
    overwrite: opts.overwrite ? 'true' : undefined,
    status: opts.draft ? 'draft' : undefined,
  };
  const body = buildMultipart(fields, files);

  if (opts.dryRun) {
    const list = files.map((f) => ({ path: f.path, size: f.content.length, sha256: createHash('sha256').update(f.content).digest('hex') }));
    if (opts.json) return printJson({ dryRun: true, fields, files: list, bytes: body.total, findings });
    printTable(['FILE', 'BYTES'], list.map((f) => [f.path, f.size]));
    process.stdout.write(`dry run: would publish ${fields.slug} ${opts.version} (${fileCount(bundle.entries)} files, ${body.total} bytes); nothing sent\n`);
    return;
  }

  const api = await Api.open(opts);
  await checkRemote(api, { slug: fields.slug, version: opts.version, category: opts.category, overwrite: opts.overwrite });
  const progress = useColor() && process.stderr.isTTY ? (await import('../../ui/progress.js')).startProgress(`uploading ${fields.slug}`, body.total) : undefined;
  let result: { id: number; version: string };
  try {
    result = await api.json('POST', '/skills', {
      body: body.stream((sent) => progress?.update(sent)),
      headers: { 'content-type': body.contentType },
      timeoutMs: 10 * 60_000,
    });
  } catch (e) {
    progress?.done();
    const problems = (errorDetails(e)?.problems ?? []) as Problem[];
    for (const p of problems) process.stderr.write(formatProblem(bundle.dir, p) + '\n');
    for (const f of (errorDetails(e)?.findings ?? []) as Finding[]) process.stderr.write(`${findingLine(f)}\n`);
    throw e;
  }
  progress?.done();
  if (opts.json) return printJson(result);
  process.stdout.write(`published ${bold(fields.slug)} ${result.version} (id ${result.id})${opts.draft ? ' as a draft' : ''}\n`);
}
