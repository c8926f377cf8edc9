import { escapeHtml } from './escape.js';

/**
 * The site navigation shared by every portal page. Pages name their entry (`nav` in
 * renderPage) so it is marked `aria-current="page"`. To add a page (e.g. `/activity`),
 * add one entry here; the header wraps onto a second line on a phone.
 */
export type NavId = 'dashboard' | 'skills' | 'creator' | 'activity';

interface NavEntry {
  id: NavId;
  href: string;
  label: string;
}

export const NAV: NavEntry[] = [
  { id: 'dashboard', href: '/', label: 'Dashboard' },
  { id: 'skills', href: '/skills', label: 'Skills' },
  { id: 'creator', href: '/creator', label: 'Creator' },
  { id: 'activity', href: '/activity', label: 'Activity' },
];

export function renderNav(current?: NavId): string {
  const items = NAV.map(
    (n) => `<li><a href="${escapeHtml(n.href)}"${n.id === current ? ' aria-current="page"' : ''}>${escapeHtml(n.label)}</a></li>`,
  ).join('');
  return `<nav class="site" aria-label="Site"><ul>${items}</ul></nav>`;
}
