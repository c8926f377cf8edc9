/** Public API of the skill bundle validator (shared by daemon and CLI). */
export {
  BUNDLE_PATH, MAX_FILES, MAX_FILE_BYTES, MAX_PATH_LENGTH, MAX_SEGMENT_LENGTH, RULES, SKILL_MD,
  type BundleEntry, type Problem, type Rule,
} from './types.js';
export { checkCollisions, checkPath } from './paths.js';
export {
  FRONT_MATTER_MAX_BYTES, FRONT_MATTER_MAX_DEPTH, SKILL_DESCRIPTION_MAX_LENGTH, SKILL_NAME_MAX_LENGTH, SKILL_NAME_PATTERN,
  nestingDepth,
  checkSkillDescription, checkSkillMeta, checkSkillName, isValidSkillName, parseFrontMatter,
  type FrontMatter, type SkillMeta,
} from './frontmatter.js';
export { TOOL_MANIFEST_MAX_DEPTH, TOOL_NAME_PATTERN, checkToolManifest, isToolManifestPath, jsonDepth, schemaError } from './tools.js';
export { bundleErrorCode, bundleErrorStatus, validateBundle, type BundleErrorCode, type BundleValidation } from './validate.js';
export { DEFAULT_IGNORES, IGNORE_FILE, MAX_WALK_ENTRIES, compileIgnore, readBundleDir, type ReadBundleOptions } from './read-dir.js';
