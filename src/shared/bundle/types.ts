/** Shapes and limits shared by the bundle validator (daemon and CLI). */

/** One entry of a skill bundle, as read from a directory, a tar or a multipart upload. */
export interface BundleEntry {
  /** Relative POSIX path inside the bundle, as supplied (validated, never trusted). */
  path: string;
  /** Size in bytes (for oversized files the content is not read). */
  size: number;
  kind: 'file' | 'symlink' | 'directory' | 'other';
  /** File content; present for regular files within MAX_FILE_BYTES. */
  content?: Buffer;
}

/**
 * One validation problem (or warning). `rule` is a stable UPPER_SNAKE code; `line` and
 * `column` (1-based, in the file named by `path`) are set when the problem has a place.
 */
export interface Problem {
  path: string;
  rule: string;
  message: string;
  line?: number;
  column?: number;
}

/** At most this many files (non-directory entries) per bundle. */
export const MAX_FILES = 200;
/** At most this many bytes per file (5 MiB). */
export const MAX_FILE_BYTES = 5 * 1024 * 1024;
/**
 * At most this many bytes in all (64 MiB): every byte is scanned at publish (shared/scan),
 * and 200 files of 5 MiB would hold a scan worker for minutes.
 */
export const MAX_BUNDLE_BYTES = 64 * 1024 * 1024;
/** Longest accepted path (UTF-16 code units) and path segment. */
export const MAX_PATH_LENGTH = 1024;
export const MAX_SEGMENT_LENGTH = 255;

/** Path used for problems about the bundle as a whole. */
export const BUNDLE_PATH = '.';

export const SKILL_MD = 'SKILL.md';

/** Every rule code the validator can emit. */
export const RULES = [
  'MISSING_SKILL_MD',
  'INVALID_PATH',
  'PATH_TRAVERSAL',
  'ABSOLUTE_PATH',
  'BACKSLASH_PATH',
  'CONTROL_CHARACTER',
  'DUPLICATE_PATH',
  'CASE_COLLISION',
  'PATH_CONFLICT',
  'TOO_MANY_FILES',
  'FILE_TOO_LARGE',
  'BUNDLE_TOO_LARGE',
  'NOT_REGULAR_FILE',
  'INVALID_UTF8',
  'INVALID_FRONT_MATTER',
  'MISSING_NAME',
  'INVALID_NAME',
  'MISSING_DESCRIPTION',
  'INVALID_DESCRIPTION',
  'DESCRIPTION_TOO_LONG',
  'INVALID_LICENSE',
  'INVALID_COMPATIBILITY',
  'INVALID_METADATA',
  'INVALID_ALLOWED_TOOLS',
  'INVALID_TOOL_MANIFEST',
  'INVALID_TOOL_SCHEMA',
  'DUPLICATE_TOOL_NAME',
] as const;
export type Rule = (typeof RULES)[number];

/**
 * Every warning code: reported, never a reason to refuse a bundle (the marketplace publishes
 * a bundle with warnings; `agw skill validate` exits 0 on warnings alone).
 */
export const WARNING_RULES = [
  'UNKNOWN_FIELD',
  'METADATA_NOT_STRING',
  'BODY_TOO_LONG',
  'PLACEHOLDER_DESCRIPTION',
  'NAME_DIRECTORY_MISMATCH',
  'ALLOWED_TOOLS_LIST',
] as const;
export type WarningRule = (typeof WARNING_RULES)[number];

/** Where in a file: 1-based line and column. */
export interface Position {
  line: number;
  column: number;
}

export function problem(path: string, rule: Rule | WarningRule, message: string, at?: Position): Problem {
  return at ? { path, rule, message, line: at.line, column: at.column } : { path, rule, message };
}
