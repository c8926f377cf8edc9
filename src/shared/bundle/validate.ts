/** The one bundle validator: every problem at once, used by the daemon (publish) and the CLI. */
import { checkFields, checkGuidance } from './fields.js';
import { checkSkillMeta, parseFrontMatter, type SkillMeta } from './frontmatter.js';
import { checkCollisions, checkPath } from './paths.js';
import { checkToolManifest, isToolManifestPath } from './tools.js';
import { BUNDLE_PATH, MAX_BUNDLE_BYTES, MAX_FILE_BYTES, MAX_FILES, SKILL_MD, problem, type BundleEntry, type Problem } from './types.js';

export interface BundleValidation {
  /** No problems (warnings do not count). */
  ok: boolean;
  problems: Problem[];
  /** Reported, never a reason to refuse the bundle (WARNING_RULES). */
  warnings: Problem[];
  /** name and description from SKILL.md, when both are valid (even if other problems exist). */
  meta?: SkillMeta;
}

export type BundleErrorCode = 'MISSING_SKILL_MD' | 'TOO_MANY_FILES' | 'FILE_TOO_LARGE' | 'BUNDLE_TOO_LARGE' | 'INVALID_BUNDLE';

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decode(entry: BundleEntry, problems: Problem[]): string | undefined {
  try {
    return utf8.decode(entry.content ?? new Uint8Array(0));
  } catch {
    problems.push(problem(entry.path, 'INVALID_UTF8', 'file is not valid UTF-8'));
    return undefined;
  }
}

export interface ValidateOptions {
  /** The name of the folder the bundle was read from: a warning when it is not the skill's name. */
  dirName?: string;
}

/**
 * Validate a bundle. Directory entries are only path-checked (a trailing "/" is allowed) and do
 * not count as files; every other entry must be a regular file. Content checks (SKILL.md,
 * tools/*.json) run on regular files within the size limit; a missing `content` counts as empty.
 */
export function validateBundle(entries: readonly BundleEntry[], opts: ValidateOptions = {}): BundleValidation {
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  const files: BundleEntry[] = [];
  const readable = new Set<BundleEntry>();
  let total = 0;
  for (const entry of entries) {
    if (entry.kind === 'directory') {
      problems.push(...checkPath(entry.path.endsWith('/') ? entry.path.slice(0, -1) : entry.path));
      continue;
    }
    problems.push(...checkPath(entry.path));
    files.push(entry);
    const size = Math.max(entry.size, entry.content?.length ?? 0);
    total += size;
    if (entry.kind !== 'file') {
      problems.push(problem(entry.path, 'NOT_REGULAR_FILE', `${entry.kind} entries are not allowed; only regular files`));
    } else if (size > MAX_FILE_BYTES) {
      problems.push(problem(entry.path, 'FILE_TOO_LARGE', `file has ${size} bytes, at most ${MAX_FILE_BYTES} allowed`));
    } else {
      readable.add(entry);
    }
  }
  if (files.length > MAX_FILES) {
    problems.push(problem(BUNDLE_PATH, 'TOO_MANY_FILES', `bundle has ${files.length} files, at most ${MAX_FILES} allowed`));
  }
  if (total > MAX_BUNDLE_BYTES) {
    problems.push(problem(BUNDLE_PATH, 'BUNDLE_TOO_LARGE', `bundle has ${total} bytes in all, at most ${MAX_BUNDLE_BYTES} allowed`));
  }
  problems.push(...checkCollisions(files.map((f) => f.path)));

  let meta: SkillMeta | undefined;
  const skill = files.find((f) => f.path === SKILL_MD);
  if (!skill) {
    const near = files.find((f) => f.path.toLowerCase() === 'skill.md');
    const hint = near ? ` (found "${near.path}"; the name is case-sensitive)` : '';
    problems.push(problem(SKILL_MD, 'MISSING_SKILL_MD', `SKILL.md is missing at the bundle root${hint}`));
  } else if (readable.has(skill)) {
    const text = decode(skill, problems);
    if (text !== undefined) {
      const fm = parseFrontMatter(text);
      problems.push(...fm.problems);
      if (fm.data) {
        const checked = checkSkillMeta(fm.data, SKILL_MD, fm.keys);
        const fields = checkFields(fm.data, fm.keys);
        problems.push(...checked.problems, ...fields.problems);
        warnings.push(...fields.warnings, ...checkGuidance({ ...fm, data: fm.data }, opts.dirName));
        meta = checked.meta;
      }
    }
  }

  const toolNames = new Map<string, string>();
  for (const entry of files) {
    if (!isToolManifestPath(entry.path) || !readable.has(entry)) continue;
    const text = decode(entry, problems);
    if (text === undefined) continue;
    const tool = checkToolManifest(entry.path, text);
    problems.push(...tool.problems);
    if (tool.name === undefined) continue;
    const first = toolNames.get(tool.name);
    if (first !== undefined) {
      problems.push(problem(entry.path, 'DUPLICATE_TOOL_NAME', `tool name "${tool.name}" is already used by ${first}`));
    } else {
      toolNames.set(tool.name, entry.path);
    }
  }
  const ok = problems.length === 0;
  return meta ? { ok, problems, warnings, meta } : { ok, problems, warnings };
}

/**
 * The error code a daemon answers for a failed validation: TOO_MANY_FILES / FILE_TOO_LARGE /
 * BUNDLE_TOO_LARGE first (HTTP 413), MISSING_SKILL_MD when it is the only kind of problem, else INVALID_BUNDLE (400).
 */
export function bundleErrorCode(problems: readonly Problem[]): BundleErrorCode {
  if (problems.some((p) => p.rule === 'TOO_MANY_FILES')) return 'TOO_MANY_FILES';
  if (problems.some((p) => p.rule === 'FILE_TOO_LARGE')) return 'FILE_TOO_LARGE';
  if (problems.some((p) => p.rule === 'BUNDLE_TOO_LARGE')) return 'BUNDLE_TOO_LARGE';
  if (problems.length > 0 && problems.every((p) => p.rule === 'MISSING_SKILL_MD')) return 'MISSING_SKILL_MD';
  return 'INVALID_BUNDLE';
}

/** HTTP status for a bundle error code (413 for the size limits, else 400). */
export function bundleErrorStatus(code: BundleErrorCode): 400 | 413 {
  return code === 'TOO_MANY_FILES' || code === 'FILE_TOO_LARGE' || code === 'BUNDLE_TOO_LARGE' ? 413 : 400;
}
