import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';
import { escapeHtml } from './escape.js';

/**
 * Markdown from a skill's bundle (SKILL.md, README.md: text anyone may publish) → safe HTML.
 *
 * Why these two libraries: markdown-it is the CommonMark parser behind many of the
 * Markdown tools in the JavaScript world, has no runtime dependency on a DOM, and with
 * `html: false` it never passes raw HTML through: `<script>` or `<img onerror>` in the
 * source come out as visible text. Its link validator refuses `javascript:`, `vbscript:`,
 * `file:` and `data:` URLs. sanitize-html (allowlist-based, parses with htmlparser2) then
 * keeps only the tags and attributes markdown-it itself makes, so neither a parser bug
 * nor a later option change can let active content through. DOMPurify needs a DOM
 * (jsdom) on a server; `marked` has no safe mode of its own. The page's CSP (no inline
 * script or style) is the third line. Versions: markdown-it's 14 line and sanitize-html
 * 2.17.5 are the newest whose dependencies run on agw's oldest Node (20.18.1); the next
 * ones need Node ≥ 20.19 (entities 8, htmlparser2 12).
 *
 * What a page gets: headings shifted one level down (the page has its own h1; release
 * notes, under a version's h3, start at h4), links
 * only to http(s) and mailto (with rel="nofollow ugc noopener noreferrer"; relative links
 * point into the bundle, which is not served, so they become plain text), images as their
 * alt text (the CSP allows same-origin images only), code blocks with a language class.
 */

/** Larger documents are cut here (and say so): rendering stays quick whatever is published. */
export const MARKDOWN_MAX_CHARS = 200_000;

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
md.renderer.rules.image = (tokens, idx) => {
  const alt = tokens[idx].children?.map((t) => t.content).join('') || 'image';
  return `<span class="md-img">[image: ${escapeHtml(alt)}]</span>`;
};

const SAFE_HREF = /^(?:https?:\/\/|mailto:)/i;
/** A heading of level `level` in the source becomes h(level + below), at least h2 (the page has its h1), at most h6. */
const shift = (level: number, below: number) => () => ({ tagName: `h${Math.max(2, Math.min(level + below, 6))}`, attribs: {} });

function options(below: number): sanitizeHtml.IOptions {
  return {
    allowedTags: [
      'p', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'ul', 'ol', 'li', 'pre', 'code', 'em', 'strong', 's',
      'a', 'hr', 'br', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'span',
    ],
    allowedAttributes: { a: ['href', 'title', 'rel'], ol: ['start'], span: ['class'], code: ['class'] },
    allowedClasses: { code: [/^language-[\w+#.-]{1,40}$/], span: ['md-img', 'md-link'] },
    allowedSchemes: ['http', 'https', 'mailto'],
    allowProtocolRelative: false,
    disallowedTagsMode: 'escape',
    transformTags: {
      h1: shift(1, below), h2: shift(2, below), h3: shift(3, below), h4: shift(4, below), h5: shift(5, below), h6: shift(6, below),
      a: (tagName, attribs): sanitizeHtml.Tag => {
        if (!SAFE_HREF.test(attribs.href ?? '')) return { tagName: 'span', attribs: { class: 'md-link' } };
        const kept: sanitizeHtml.Attributes = { href: attribs.href };
        if (attribs.title) kept.title = attribs.title;
        return { tagName, attribs: { ...kept, rel: 'nofollow ugc noopener noreferrer' } };
      },
    },
  };
}

/** The sanitizer's options per shift (0-5), made on first use. */
const OPTIONS = new Map<number, sanitizeHtml.IOptions>();
const optionsFor = (below: number) => OPTIONS.get(below) ?? OPTIONS.set(below, options(below)).get(below)!;

/**
 * Safe HTML of one Markdown document (trusted output: every byte went through the
 * sanitizer). Headings move one level down by default (a document under the page's h1:
 * SKILL.md, README); with `topHeading` the document's highest heading becomes that level and
 * the others follow (release notes under a version's h3: a changelog's `### Added` is h4).
 */
export function renderMarkdown(source: string, topHeading?: 4): string {
  const cut = source.length > MARKDOWN_MAX_CHARS;
  const text = cut ? source.slice(0, MARKDOWN_MAX_CHARS) : source;
  const tokens = md.parse(text, {});
  const levels = tokens.filter((t) => t.type === 'heading_open').map((t) => Number(t.tag.slice(1)));
  const below = topHeading === undefined || levels.length === 0 ? 1 : Math.max(0, topHeading - Math.min(...levels));
  const html = sanitizeHtml(md.renderer.render(tokens, md.options, {}), optionsFor(below));
  return cut ? `${html}<p class="note">(The rest of this document is not shown: it is longer than ${MARKDOWN_MAX_CHARS} characters.)</p>` : html;
}
