import type { Param, Queryable } from './db.js';
import type { SkillRow } from './skills.js';

/** The public catalog search: published skills only, prepared SQL, LIMIT/OFFSET paging. */
export type SkillSort = 'popular' | 'recent' | 'name' | 'price';

export interface SkillSearch {
  q?: string;
  category?: string;
  /** Only this owner's skills (a creator's public page). */
  ownerId?: string;
  sort: SkillSort;
  page: number;
  limit: number;
}

// Every order ends with the id so pages are stable when the first keys tie.
const ORDER: Record<SkillSort, string> = {
  popular: 's.install_count DESC, s.id DESC',
  recent: 's.updated_at DESC, s.id DESC',
  name: 'LOWER(s.name) ASC, s.id ASC',
  price: 's.price_nusd ASC, s.id ASC',
};

/** LIKE pattern for a literal substring: %, _ and the escape character itself are escaped. */
export function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Every word of `q` must occur (case-insensitively) in the name, slug or description. */
function where(s: SkillSearch): { sql: string; params: Param[] } {
  const parts = ["s.status = 'published'"];
  const params: Param[] = [];
  if (s.category) {
    parts.push('s.category = ?');
    params.push(s.category);
  }
  if (s.ownerId) {
    parts.push('s.owner_id = ?');
    params.push(s.ownerId);
  }
  const words = (s.q ?? '').split(/\s+/).filter(Boolean).slice(0, 10);
  for (const w of words) {
    parts.push("(LOWER(s.name) LIKE ? ESCAPE '\\' OR LOWER(s.slug) LIKE ? ESCAPE '\\' OR LOWER(s.description) LIKE ? ESCAPE '\\')");
    const p = likePattern(w);
    params.push(p, p, p);
  }
  return { sql: parts.join(' AND '), params };
}

export async function searchSkills(q: Queryable, s: SkillSearch): Promise<{ rows: SkillRow[]; total: number }> {
  const w = where(s);
  const count = await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM skills s WHERE ${w.sql}`, w.params);
  const rows = await q.all<SkillRow>(
    `SELECT s.*, u.name AS owner_name, u.email AS owner_email FROM skills s JOIN users u ON u.id = s.owner_id
      WHERE ${w.sql} ORDER BY ${ORDER[s.sort]} LIMIT ? OFFSET ?`,
    [...w.params, s.limit, (s.page - 1) * s.limit],
  );
  return { rows, total: Number(count?.n ?? 0) };
}
