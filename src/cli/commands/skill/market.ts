/** `agw skill search|info|versions|notes|status|republish`: the marketplace API, --json prints its answer. */
import type { OwnerVersionsT, PublicVersionsT, SkillT } from '../../../shared/schemas/skills.js';
import { Api } from '../../api.js';
import type { GlobalOpts } from '../../auth.js';
import { CliError, UsageError } from '../../errors.js';
import { usd, when } from '../../format.js';
import { bold, dim, isTty, printJson, printKv, printTable } from '../../output.js';
import { isPrerelease } from '../../../shared/skill-versions.js';
import { notesFrom } from './publish.js';
import { getSkill, skillId } from './resolve.js';

/** Line breaks and tabs as spaces, so a value stays one cell of a tab-separated table. */
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

const firstLine = (s: string, max = 60) => {
  const l = s.split('\n')[0];
  return l.length > max ? `${l.slice(0, max - 1)}…` : l;
};

export async function search(query: string | undefined, opts: GlobalOpts & { category?: string; sort?: string; page?: string; limit?: string }): Promise<void> {
  if (opts.sort && !['popular', 'recent', 'name', 'price'].includes(opts.sort)) throw new UsageError('--sort must be popular, recent, name or price');
  const page = Number(opts.page ?? 1);
  const limit = Number(opts.limit ?? 20);
  if (!Number.isInteger(page) || page < 1) throw new UsageError('--page must be a positive integer');
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit must be an integer from 1 to 100');
  const api = await Api.open(opts);
  const r = await api.get<{ items: SkillT[]; total: number; page: number; limit: number }>('/skills', {
    auth: 'none',
    query: { q: query, category: opts.category, sort: opts.sort, page, limit },
  });
  if (opts.json) return printJson(r);
  if (r.items.length === 0) {
    process.stdout.write(`no skills found${query ? ` for "${query}"` : ''}\n`);
    return;
  }
  printTable(
    ['ID', 'SLUG', 'CATEGORY', 'PRICE', 'VERSION', 'INSTALLS', 'DESCRIPTION'],
    // whole (on one line): a terminal's table cuts its last column to fit, a pipe gets every value whole
    r.items.map((s) => [s.id, s.slug, s.category, s.price ? usd(s.price) : 'free', s.currentVersion, s.installCount, oneLine(s.description)]),
  );
  const shown = (r.page - 1) * r.limit + r.items.length;
  if (shown < r.total) process.stderr.write(dim(`${shown} of ${r.total}; next: --page ${r.page + 1}\n`));
}

export async function info(ref: string, opts: GlobalOpts): Promise<void> {
  const s = await getSkill(await Api.open(opts), ref);
  if (opts.json) return printJson(s);
  printKv([
    ['id', s.id], ['slug', s.slug], ['name', s.name], ['description', s.description], ['category', s.category],
    ['price', s.price ? usd(s.price) : 'free'], ['status', s.status], ['version', s.currentVersion], ['owner', s.ownerName],
    ['installs', s.installCount], ['updated', when(s.updatedAt)],
  ]);
  process.stdout.write(dim(`\ninstall: agw skill install ${s.slug}\n`));
}

export interface VersionsOpts extends GlobalOpts {
  all?: boolean;
  archive?: string;
  setCurrent?: string;
  autoCurrent?: boolean;
}

/** A version as the table shows it: `*` current, `(prerelease)` for a SemVer prerelease (also from older daemons). */
const versionCell = (x: { version: string; isCurrent: boolean; prerelease?: boolean }) =>
  `${x.version}${x.prerelease ?? isPrerelease(x.version) ? ' (prerelease)' : ''}${x.isCurrent ? ' *' : ''}`;

/**
 * `agw skill versions SKILL`: the versions, prereleases marked; `--all` (owner) adds drafts
 * and archived ones with their status. The owner's changes, each followed by the owner's
 * list: `--archive V` withdraws one version, `--set-current V` makes a published version
 * current, `--auto-current` hands that back to the rule (the highest published release).
 */
export async function versions(ref: string, opts: VersionsOpts): Promise<void> {
  const changes = [opts.archive !== undefined, opts.setCurrent !== undefined, opts.autoCurrent === true].filter(Boolean).length;
  if (changes > 1) throw new UsageError('use one of --archive, --set-current and --auto-current at a time');
  const api = await Api.open(opts);
  const id = await skillId(api, ref);
  let done: string | undefined;
  if (opts.archive !== undefined) {
    await api.json('POST', `/skills/${id}/versions/${encodeURIComponent(opts.archive)}/archive`);
    done = `archived ${opts.archive}: only accounts that installed it can install it again`;
  } else if (opts.setCurrent !== undefined || opts.autoCurrent) {
    const s = await api.json<SkillT>('PATCH', `/skills/${id}`, { json: { currentVersion: opts.setCurrent ?? null } });
    done = opts.autoCurrent ? `current version by the rule: ${s.currentVersion ?? '-'}` : `current version: ${s.currentVersion}`;
  }
  const owner = opts.all || done !== undefined;
  const v = owner
    ? await api.get<OwnerVersionsT>(`/skills/${id}/versions`)
    : await api.get<PublicVersionsT>(`/skills/${id}/public-versions`, { auth: 'none' });
  if (opts.json) return printJson(v);
  if (done) process.stderr.write(`${done}\n`);
  const pinned = 'currentVersionPinned' in v && v.currentVersionPinned ? ' (chosen by the owner)' : '';
  process.stdout.write(`${bold(v.slug)} (id ${v.skillId}), current ${v.currentVersion ?? '-'}${pinned}\n`);
  const rows = v.versions.map((x) => {
    const status = owner ? [String(x.status)] : [];
    const edited = x.notesUpdatedAt ? ` (edited by ${x.notesUpdatedByName ?? '?'})` : '';
    return [versionCell(x), ...status, when(x.publishedAt), x.installerCount, firstLine(x.notes, isTty() ? 60 : Infinity) + edited];
  });
  printTable(['VERSION', ...(owner ? ['STATUS'] : []), 'PUBLISHED', 'INSTALLS', 'NOTES'], rows);
}

export async function notes(ref: string, version: string, opts: GlobalOpts & { set?: string; file?: string }): Promise<void> {
  const api = await Api.open(opts);
  const id = await skillId(api, ref);
  const text = await notesFrom(opts.set, opts.file, '--set or --file', version);
  if (text === undefined) {
    const v = await api.get<PublicVersionsT>(`/skills/${id}/public-versions`, { auth: 'none' });
    const found = v.versions.find((x) => x.version === version);
    if (!found) throw new CliError(`no published version ${version} of ${v.slug}`, `versions: ${v.versions.map((x) => x.version).join(', ') || 'none'}`, 'VERSION_NOT_FOUND');
    if (opts.json) return printJson(found);
    process.stdout.write(found.notes ? `${found.notes.replace(/\n?$/, '\n')}` : dim('(no release notes)\n'));
    return;
  }
  const updated = await api.json<unknown>('PATCH', `/skills/${id}/versions/${encodeURIComponent(version)}`, { json: { notes: text } });
  if (opts.json) return printJson(updated);
  process.stdout.write(`updated the release notes of ${ref} ${version}\n`);
}

const STATUS: Record<string, SkillT['status']> = { publish: 'published', published: 'published', archive: 'archived', archived: 'archived', draft: 'draft' };

export async function status(ref: string, wanted: string, opts: GlobalOpts): Promise<void> {
  const next = STATUS[wanted];
  if (!next) throw new UsageError(`unknown status ${wanted}`, 'use publish, archive or draft');
  const api = await Api.open(opts);
  const s = await api.json<SkillT>('PATCH', `/skills/${await skillId(api, ref)}`, { json: { status: next } });
  if (opts.json) return printJson(s);
  process.stdout.write(`${s.slug} is now ${s.status}\n`);
}

export async function republish(ref: string, version: string, opts: GlobalOpts): Promise<void> {
  const api = await Api.open(opts);
  const r = await api.json<unknown>('POST', `/skills/${await skillId(api, ref)}/versions/${encodeURIComponent(version)}/republish`);
  if (opts.json) return printJson(r);
  process.stdout.write(`republished ${ref} ${version}\n`);
}
