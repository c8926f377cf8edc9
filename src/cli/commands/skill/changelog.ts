/**
 * Release notes from a changelog: `--notes-file CHANGELOG.md` takes the section of the
 * version being published, not the whole file. Sections are Markdown headings that name a
 * version, as Keep a Changelog writes them (`## [1.2.0] - 2024-05-01`) or plainly
 * (`## 1.2.0`, `## v1.2.0 (2024-05-01)`); a section runs to the next heading of the same or
 * a higher level. A file without any version heading is release notes as it is.
 */

/** An ATX heading: its level and text. */
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$/;
/** The version a heading names: `[1.2.0]`, `1.2.0`, `v1.2.0`, up to a space, bracket or parenthesis. */
const VERSION_HEAD = /^\[?v?([^\s\][()]+)/;
/** Keep a Changelog's link references at the end (`[1.2.0]: https://…`). */
const LINK_REF = /^\s{0,3}\[[^\]]+\]:\s*\S+/;
/** What a version heading looks like: starts with a digit after the optional "[" and "v". */
const LOOKS_LIKE_VERSION = /^\d/;

export interface ChangelogSection {
  /** The section's text (heading left out), or the whole file when it has no version headings. */
  notes: string;
  /** Whether the notes came from a version's section. */
  fromSection: boolean;
  /** The versions the file has sections for (for an error naming them). */
  versions: string[];
}

interface Head {
  line: number;
  level: number;
  version: string | null;
}

function headings(lines: readonly string[]): Head[] {
  const out: Head[] = [];
  let fence: string | null = null;
  for (const [i, line] of lines.entries()) {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1][0];
      else if (f[1][0] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const h = HEADING.exec(line);
    if (!h) continue;
    const v = VERSION_HEAD.exec(h[2]);
    out.push({ line: i, level: h[1].length, version: v && LOOKS_LIKE_VERSION.test(v[1]) ? v[1] : null });
  }
  return out;
}

const trimBlankLines = (lines: string[]) => {
  let a = 0;
  let b = lines.length;
  while (a < b && !lines[a].trim()) a++;
  while (b > a && !lines[b - 1].trim()) b--;
  return lines.slice(a, b);
};

/**
 * This version's section of `text`; `notes` is null when the file has version sections but
 * none for `version`.
 */
export function changelogSection(text: string, version: string): Omit<ChangelogSection, 'notes'> & { notes: string | null } {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const heads = headings(lines);
  const versions = heads.flatMap((h) => (h.version === null ? [] : [h.version]));
  if (versions.length === 0) return { notes: text, fromSection: false, versions };
  const at = heads.findIndex((h) => h.version === version);
  if (at < 0) return { notes: null, fromSection: false, versions };
  const head = heads[at];
  const next = heads.slice(at + 1).find((h) => h.level <= head.level);
  let body = lines.slice(head.line + 1, next ? next.line : lines.length);
  if (!next) {
    // the last section: Keep a Changelog's link references follow it
    const trimmed = trimBlankLines(body);
    let end = trimmed.length;
    while (end > 0 && (LINK_REF.test(trimmed[end - 1]) || !trimmed[end - 1].trim())) end--;
    body = trimmed.slice(0, end);
  }
  return { notes: trimBlankLines(body).join('\n'), fromSection: true, versions };
}
