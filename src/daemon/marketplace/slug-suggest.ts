import { didYouMean, didYouMeanText } from '../../shared/did-you-mean.js';
import { AgwError } from '../../shared/errors.js';
import type { Queryable } from '../store/db.js';

/**
 * 404 SKILL_NOT_FOUND for a slug, naming the published slugs a typo away ("Did you mean
 * …?", `details.suggestions`). Only published skills are suggested: a draft or an archived
 * skill stays indistinguishable from a missing one.
 */
export async function slugNotFound(q: Queryable, slug: string): Promise<AgwError> {
  const near =
    slug.length <= 100
      ? didYouMean(
          slug,
          (await q.all<{ slug: string }>("SELECT slug FROM skills WHERE status = 'published' AND LENGTH(slug) BETWEEN ? AND ?", [slug.length - 3, slug.length + 3])).map(
            (r) => r.slug,
          ),
        )
      : [];
  return new AgwError('SKILL_NOT_FOUND', `skill "${slug}" not found.${didYouMeanText(near)}`, near.length ? { suggestions: near } : undefined);
}
