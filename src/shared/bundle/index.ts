/** Public API of the skill bundle validator (shared by daemon and CLI). */
export {
  BUNDLE_PATH, MAX_BUNDLE_BYTES, MAX_FILES, MAX_FILE_BYTES, MAX_PATH_LENGTH, MAX_SEGMENT_LENGTH, RULES, SKILL_MD, WARNING_RULES,
  type BundleEntry, type Position, type Problem, type Rule, type WarningRule,
} from './types.js';
export { checkCollisions, checkPath } from './paths.js';
export {
  FRONT_MATTER_MAX_BYTES, FRONT_MATTER_MAX_DEPTH, SKILL_DESCRIPTION_MAX_LENGTH, SKILL_NAME_MAX_LENGTH, SKILL_NAME_PATTERN,
  nestingDepth,
  checkSkillDescription, checkSkillMeta, checkSkillName, isValidSkillName, parseFrontMatter,
  type FrontMatter, type SkillMeta,
} from './frontmatter.js';
export {
  BODY_MAX_LINES, COMPATIBILITY_MAX_LENGTH, SKILL_FIELDS, TEMPLATE_DESCRIPTION, checkFields, checkGuidance, didYouMean, editDistance,
} from './fields.js';
export { TOOL_MANIFEST_MAX_DEPTH, jsonErrorPlace, TOOL_NAME_PATTERN, checkToolManifest, isToolManifestPath, jsonDepth, schemaError } from './tools.js';
export { bundleErrorCode, bundleErrorStatus, validateBundle, type BundleErrorCode, type BundleValidation, type ValidateOptions } from './validate.js';
export { DEFAULT_IGNORES, IGNORE_FILE, LOCKFILE_PATH, MAX_WALK_ENTRIES, OWN_FILE_NAMES, compileIgnore, packFileName, readBundleDir, type ReadBundleOptions } from './read-dir.js';
