import type { TestDaemon } from '../helpers/daemon.js';

/** Shared helpers of the marketplace tests: bundles, publish calls, store snapshots. */
export interface FileSpec {
  path: string;
  content: string | Buffer;
}

export const skillMd = (name: string, description = `The ${name} skill.`, body = '# Usage\n\nSay hello.\n') =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;

export const bundle = (name: string, ...extra: FileSpec[]): FileSpec[] => [{ path: 'SKILL.md', content: skillMd(name) }, ...extra];

export type Fields = Record<string, string | number | boolean | undefined>;

/** POST /skills as JSON; Buffer contents go base64. */
export function publishJson(td: TestDaemon, key: string | undefined, fields: Fields, files: FileSpec[]): Promise<Response> {
  return td.fetch('/skills', {
    method: 'POST',
    key,
    json: {
      ...fields,
      files: files.map((f) =>
        typeof f.content === 'string' ? { path: f.path, content: f.content } : { path: f.path, content: f.content.toString('base64'), encoding: 'base64' },
      ),
    },
  });
}

/** POST /skills as multipart/form-data: fields as form fields, one `files` part per file (filename = path). */
export function publishForm(
  td: TestDaemon,
  key: string | undefined,
  fields: Fields,
  files: FileSpec[],
  headers?: Record<string, string>,
): Promise<Response> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.append(k, String(v));
  for (const f of files) form.append('files', new Blob([f.content]), f.path);
  return td.fetch('/skills', { method: 'POST', key, body: form, headers });
}

/** Everything a publish or install can change, to prove a rejected call changed nothing. */
export async function storeSnapshot(td: TestDaemon): Promise<Record<string, unknown>> {
  const db = td.daemon.ctx.db;
  const out: Record<string, unknown> = {};
  for (const table of ['skills', 'skill_versions', 'blobs', 'skill_installs', 'wallet_transactions']) {
    out[table] = await db.all(`SELECT * FROM ${table} ORDER BY 1, 2`);
  }
  out.wallets = await db.all('SELECT user_id, balance_nusd, allowance_used_nusd FROM wallets ORDER BY user_id');
  return out;
}

export async function json<T = any>(res: Response): Promise<T> {
  return (await res.json()) as T;
}
